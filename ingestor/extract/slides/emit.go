package slides

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Headings of the parts of a slide's section.
const (
	hiddenHeading = "(hidden)"
	notesHeading  = "Notes"
)

// emitSlide adds a slide's section: its title as a level-1 heading ("Slide
// N" without one), "(hidden)" for a hidden slide, its shapes in reading
// order, then its notes under "Notes". Every block is on page s.num.
func (x *extraction) emitSlide(s *slide) error {
	x.pending = 0 // what was read is added now, and counted as added
	title := strings.Join(s.title, " ")
	heading := oneLine(title, maxHeadingBytes)
	if heading == "" {
		heading = fmt.Sprintf("Slide %d", s.num)
	} else if x.firstTitle == "" {
		x.firstTitle = heading
	}
	if err := x.add(extract.Heading, 1, s.num, heading); err != nil {
		return err
	}
	if oneLine(title, len(title)) != heading { // cut: the whole title is read too
		for _, p := range s.title {
			if err := x.add(extract.Paragraph, 0, s.num, p); err != nil {
				return err
			}
		}
	}
	if s.hidden {
		if err := x.add(extract.Heading, 2, s.num, hiddenHeading); err != nil {
			return err
		}
	}
	if err := x.emitShapes(s.shapes, s.num); err != nil {
		return err
	}
	if !slices.ContainsFunc(s.notes, (*shape).hasContent) {
		return nil
	}
	if err := x.add(extract.Heading, 2, s.num, notesHeading); err != nil {
		return err
	}
	return x.emitShapes(s.notes, s.num)
}

// hasContent reports whether emitting s adds anything.
func (s *shape) hasContent() bool {
	return len(s.paras) > 0 || len(s.rows) > 0 || len(s.images) > 0 || s.alt != "" ||
		slices.ContainsFunc(s.children, (*shape).hasContent)
}

// emitShapes adds shapes in reading order: top to bottom, then left to
// right; a group's members in their own order where the group is.
func (x *extraction) emitShapes(shapes []*shape, page int) error {
	sortShapes(shapes)
	for _, s := range shapes {
		for _, p := range s.paras {
			if err := x.add(extract.Paragraph, 0, page, p); err != nil {
				return err
			}
		}
		if len(s.rows) > 0 {
			if err := x.add(extract.Table, 0, page, tableText(s.rows)); err != nil {
				return err
			}
		}
		if len(s.images) > 0 || len(s.paras) == 0 && len(s.rows) == 0 && s.alt != "" {
			if err := x.picture(s, page); err != nil {
				return err
			}
		}
		if err := x.emitShapes(s.children, page); err != nil {
			return err
		}
	}
	return nil
}

// sortShapes puts shapes in reading order. A shape whose position the
// file does not give (nor its layout) stays after the shape before it.
func sortShapes(shapes []*shape) {
	var y, x int64
	for _, s := range shapes {
		if s.placed {
			y, x = s.y, s.x
		} else {
			s.y, s.x = y, x
		}
	}
	slices.SortStableFunc(shapes, func(a, b *shape) int {
		return cmp.Or(cmp.Compare(a.y, b.y), cmp.Compare(a.x, b.x))
	})
}

// tableText renders one row per line, cells separated by " | "; empty
// cells keep their place so columns line up.
func tableText(rows [][]string) string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = strings.Join(r, " | ")
	}
	return strings.Join(lines, "\n")
}

// picture adds a shape's picture as a Figure block, the first of its
// alternatives that is a PNG or JPEG within the limits. A picture not
// kept (another format, over a limit) leaves its alt text as a
// paragraph; one already kept on an earlier slide (a logo) is not
// repeated.
func (x *extraction) picture(s *shape, page int) error {
	alt := oneLine(s.alt, maxLabelBytes)
	why := ""
	for _, target := range s.images {
		img, desc, st, err := x.loadImage(target, page, alt)
		if err != nil {
			return err
		}
		switch st {
		case kept:
			x.b.AddImage(img, desc)
			return x.checkText()
		case repeated:
			return nil
		}
		why = desc
	}
	if why != "" {
		x.warn("%s", why)
	}
	return x.add(extract.Paragraph, 0, page, alt)
}

// add cleans a block's text and appends it.
func (x *extraction) add(kind extract.Kind, level, page int, text string) error {
	text = clean(text)
	if kind == extract.Table { // a table's first cell may be empty: keep its " | "
		text = strings.TrimRightFunc(text, unicode.IsSpace)
	} else {
		text = strings.TrimSpace(text)
	}
	x.b.Add(kind, level, page, text)
	return x.checkText()
}

// finish sets the title, page count and summary warnings and returns the
// document.
func (x *extraction) finish() (*extract.Document, error) {
	x.b.SetPages(x.slides)
	x.b.SetTitle(cmp.Or(x.title, x.firstTitle))
	if x.props != nil {
		x.b.SetMetadata(x.props.Metadata())
		for _, w := range x.props.Warnings() {
			x.warn("%s", w)
		}
	}
	if x.slides > x.lim.MaxPages {
		x.warn("slides %d to %d not read: more than %d slides", x.lim.MaxPages+1, x.slides, x.lim.MaxPages)
	}
	if x.imagesOverMax > 0 {
		x.warn("%d images skipped: more than %d images", x.imagesOverMax, x.lim.MaxImages)
	}
	if x.suppressed > 0 {
		x.b.Warn(fmt.Sprintf("%d more warnings not shown", x.suppressed))
	}
	return x.b.Finish()
}
