package docx

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"path"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Parts read after the body.
//
// Headers, footers, footnotes, endnotes and comments are outside the
// body's reading order: Word shows them in the margins, at the end, or
// beside the text. They are read once per document, after the body,
// each kind under a level-1 heading of its own ("Header", "Footer",
// "Footnotes", "Endnotes", "Comments"), given only when the kind has
// any text. The body's walker reads them, so their paragraphs, tables,
// text boxes, hyperlinks and pictures read as in the body; a heading
// among them is one level down so that it stays under its group's.
//
// A header or footer part is one the body's relationships name (parts
// left in the archive by an old revision are not read). The same text
// in several headers (first page, even pages and the rest, or one
// section after another) is written once. Notes and comments are each
// written as they are: the same note twice is two notes.
//
// They are on no page of their own: every block takes the last page of
// the document, so block pages stay in order; Document.Pages is the
// body's.

// Parts at fixed names; Word and LibreOffice always use these.
const (
	footnotesPart = "word/footnotes.xml"
	endnotesPart  = "word/endnotes.xml"
	commentsPart  = "word/comments.xml"
)

// trailing is one kind of part read after the body.
type trailing struct {
	heading string
	dedupe  bool // identical texts are written once
	parts   []sidePart
}

// sidePart is a part read after the body and its relationships part
// (nil when it has none), which its pictures are found through.
type sidePart struct {
	f, rels *zip.File
}

// group is the state of one trailing kind while its parts are read.
type group struct {
	heading string
	at      pagePair        // the page of every block: the document's last
	opened  bool            // the heading was written
	seen    map[string]bool // texts written so far; nil when repeats are kept
}

// planTrailing picks the parts to read after the body and takes their
// declared sizes out of the expansion budget, as open does for the
// body's: a bomb among them is refused before anything is expanded,
// and the pictures of the body cannot use up what they need.
func (x *extraction) planTrailing() error {
	x.trailing = []trailing{
		{heading: "Header", dedupe: true, parts: x.sideParts(x.headers, true)},
		{heading: "Footer", dedupe: true, parts: x.sideParts(x.footers, true)},
		{heading: "Footnotes", parts: x.sideParts([]string{footnotesPart}, false)},
		{heading: "Endnotes", parts: x.sideParts([]string{endnotesPart}, false)},
		{heading: "Comments", parts: x.sideParts([]string{commentsPart}, false)},
	}
	budget := uint64(max(x.imageBudget, 0))
	var declared uint64
	for _, tr := range x.trailing {
		for _, p := range tr.parts {
			for _, f := range []*zip.File{p.f, p.rels} {
				if f == nil {
					continue
				}
				// Each size is checked before the sum grows, so it cannot overflow.
				declared += f.UncompressedSize64
				if f.UncompressedSize64 > budget || declared > budget {
					return x.errorf(extract.ErrTooLarge, "header, footer, note and comment parts expand to more than the %d bytes left of %d",
						budget, x.lim.MaxUncompressed)
				}
			}
		}
	}
	x.imageBudget -= int64(declared)
	return nil
}

// sideParts looks up the parts of keys, each once, with their
// relationships parts. A part the body's relationships name (listed)
// but the archive lacks costs a warning.
func (x *extraction) sideParts(keys []string, listed bool) []sidePart {
	var out []sidePart
	done := map[string]bool{}
	for _, k := range keys {
		if done[k] {
			continue // a part shared by several relationships is read once
		}
		done[k] = true
		f := x.files[k]
		if f == nil {
			if listed {
				x.warn("%s not in the archive", k)
			}
			continue
		}
		out = append(out, sidePart{f: f, rels: x.files[relsOf(k)]})
	}
	return out
}

// relsOf is the key of the relationships part of part key k:
// word/header1.xml has word/_rels/header1.xml.rels.
func relsOf(k string) string {
	return path.Join(path.Dir(k), "_rels", path.Base(k)+".rels")
}

// readTrailing reads the parts planned by planTrailing, kind by kind.
func (x *extraction) readTrailing() error {
	// The body's last section is settled (its sectPr may be missing), so
	// its page now is the last page.
	x.pages.resolve("")
	at := x.pages.pos()
	for _, tr := range x.trailing {
		g := &group{heading: tr.heading, at: at}
		if tr.dedupe {
			g.seen = map[string]bool{}
		}
		for _, p := range tr.parts {
			if err := x.readSidePart(p, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// readSidePart reads one part into group g. The parts are optional: a
// broken one costs a warning, and the blocks read before the break,
// unless it breaks a limit.
func (x *extraction) readSidePart(p sidePart, g *group) error {
	rels := map[string]string{}
	if p.rels != nil {
		dir := path.Dir(partKey(p.f.Name))
		err := x.readXML(p.rels, func(t *tokens) error {
			return eachRel(t, dir, func(id, _, target string) { rels[id] = target })
		})
		if err := x.sideError(err); err != nil {
			return err
		}
	}
	err := x.readXML(p.f, func(t *tokens) error {
		// Page markers in the part move a flow of its own, not the body's.
		w := &walker{x: x, t: t, pages: newPager(), rels: rels, group: g}
		return w.run()
	})
	return x.sideError(err)
}

// sideError turns an error reading a trailing part into a warning,
// unless it is a limit or a timeout, which stop the document.
func (x *extraction) sideError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) {
		return err
	}
	x.warn("%v; the text before it is kept", err)
	return nil
}

// add writes a top-level paragraph or table of a trailing part: after
// the group's heading, unless it is blank or, where repeats are
// dropped, written already.
func (g *group) add(x *extraction, kind extract.Kind, level int, text string) error {
	if text = tidy(kind, text); text == "" {
		return nil
	}
	if g.seen != nil {
		if g.seen[text] {
			return nil
		}
		g.seen[text] = true
	}
	if err := g.open(x); err != nil {
		return err
	}
	if kind == extract.Heading {
		level = min(level+1, 6)
	}
	_, err := x.add(kind, level, text, g.at)
	return err
}

// open writes the group's heading before its first block.
func (g *group) open(x *extraction) error {
	if g.opened {
		return nil
	}
	g.opened = true
	_, err := x.add(extract.Heading, 1, g.heading, g.at)
	return err
}

// isNote reports whether a w:footnote or w:endnote is a note: the
// separator lines Word draws above the notes (w:type separator,
// continuationSeparator, continuationNotice) are stored as notes too.
func isNote(e xml.StartElement) bool {
	typ := attr(e, "type")
	return typ == "" || typ == "normal"
}

// commentPrefix is written before a comment's text: "Ana: " when it
// has an author.
func commentPrefix(e xml.StartElement) string {
	if a := oneLine(attr(e, "author"), maxLabelBytes); a != "" {
		return a + ": "
	}
	return ""
}
