package docx

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

// add cleans a block's text and appends it, starting on page at,
// returning the text added ("" when it was blank and skipped).
func (x *extraction) add(kind extract.Kind, level int, text string, at pagePair) (string, error) {
	text = tidy(kind, text)
	if x.b.Add(kind, level, 0, text) < 0 {
		return "", nil
	}
	x.pages.record(at)
	return text, x.checkText()
}

// tidy is a block's text as written: cleaned and trimmed, "" when blank.
func tidy(kind extract.Kind, text string) string {
	text = clean(text)
	if kind == extract.Table { // a table's first cell may be empty: keep its " | "
		return strings.TrimRightFunc(text, unicode.IsSpace) // its last may be too: "a | " ends "a |"
	}
	return strings.TrimSpace(text)
}

// add writes a top-level paragraph or table of the part being read:
// into the body, or into the trailing group (trailing.go). Only the
// body's headings can give the document its title.
func (w *walker) add(kind extract.Kind, level int, title bool, text string, at pagePair) error {
	if w.group != nil {
		return w.group.add(w.x, kind, level, text)
	}
	added, err := w.x.add(kind, level, text, at)
	if err != nil {
		return err
	}
	w.x.noteHeading(kind, title, added)
	return nil
}

// openGroup writes the trailing group's heading, if any, before a
// picture: a group holding only pictures has its heading too.
func (w *walker) openGroup() error {
	if w.group == nil {
		return nil
	}
	return w.group.open(w.x)
}

// checkText enforces lim.MaxTextBytes on the assembled text, which
// includes separators and image descriptions.
func (x *extraction) checkText() error {
	if x.b.Len() > x.lim.MaxTextBytes {
		return x.errorf(extract.ErrTooLarge, "text exceeds %d bytes", x.lim.MaxTextBytes)
	}
	return nil
}

// noteHeading remembers the first Title paragraph and first heading as
// fallbacks for the document title.
func (x *extraction) noteHeading(kind extract.Kind, title bool, text string) {
	if kind != extract.Heading || text == "" {
		return
	}
	if title && x.firstTitle == "" {
		x.firstTitle = oneLine(text, maxLabelBytes)
	}
	if x.firstHeading == "" {
		x.firstHeading = oneLine(text, maxLabelBytes)
	}
}

// finish sets the title and summary warnings and returns the document.
func (x *extraction) finish() (*extract.Document, error) {
	x.b.SetTitle(firstNonEmpty(x.title, x.firstTitle, x.firstHeading))
	if x.props != nil {
		x.b.SetMetadata(x.props.Metadata())
		for _, w := range x.props.Warnings() {
			x.warn("%s", w)
		}
	}
	if x.imagesOverMax > 0 {
		x.warn("%d images skipped: more than %d images", x.imagesOverMax, x.lim.MaxImages)
	}
	if x.suppressed > 0 {
		x.b.Warn(fmt.Sprintf("%d more warnings not shown", x.suppressed))
	}
	doc, err := x.b.Finish()
	if err != nil {
		return nil, err
	}
	x.pages.apply(doc) // Pages and Block.Page stay 0 without page breaks
	return doc, nil
}
