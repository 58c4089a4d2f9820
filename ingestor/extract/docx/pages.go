package docx

import (
	"encoding/xml"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Page numbers.
//
// A .docx has no layout, but it records page breaks of two kinds:
//
//   - explicit ones the author made: w:br w:type="page" in a run,
//     w:pageBreakBefore on a paragraph (its own or its style's), and a
//     section that starts on a new page (w:type nextPage, oddPage or
//     evenPage; nextPage when absent);
//   - rendered ones: w:lastRenderedPageBreak, written by Word (not by
//     generators such as python-docx or pandoc) where each page began
//     when it last laid the document out, natural breaks included.
//
// Every block is on the page its first content is on: page 1 until the
// first break, one more at each break; a block that spans a break keeps
// the page it starts on. Document.Pages is the page the body ends on.
// When the body has no break at all, pages stay 0: unknown, never
// guessed.
//
// One break, two markers: Word writes a lastRenderedPageBreak at the
// first content of every page, so also of a page an explicit break
// started (after <w:br w:type="page"/>, in the first run of a
// page-break-before paragraph, at the start of the next section). So a
// rendered break met before any content was laid out since the previous
// break is that same break and is not counted again; nor is a
// page-break-before on a paragraph already at the top of a page (the
// first one of the document, or one right after another break).
// Explicit page breaks and section breaks always count: Word gives a
// page break at the top of a page a page of its own.
//
// Tables are laid out row by row, their cells side by side: Word marks
// a row that starts a page in each of its cells, so a row adds one page
// for that, plus the most pages any one of its cells breaks into.
// Explicit breaks inside tables and text boxes are not counted: how
// Word lays those out is not certain, and where it did break a page its
// rendered mark counts. Rendered breaks in text boxes are not the
// body's.
//
// Pages are physical pages in order, as in a PDF, not the numbers
// printed on them (sections may restart those). A blank page Word adds
// for an odd- or even-page section is not counted.

// pageState is where the body's text flow is.
type pageState struct {
	page  int
	fresh bool // nothing laid out on page since it began
}

func (s *pageState) explicit() { s.page++; s.fresh = true }

// breakBefore: a paragraph that must start a page.
func (s *pageState) breakBefore() {
	if !s.fresh {
		s.explicit()
	}
}

// rendered: a lastRenderedPageBreak in the body.
func (s *pageState) rendered() {
	if !s.fresh {
		s.page++
	}
	s.fresh = true
}

// pagePair is a position under both readings of a pending section
// break: brk if the section starts a new page, cont if it is
// continuous.
type pagePair struct{ brk, cont int }

// pager follows the body's page through the document. A section's
// type, which says whether it starts on a new page, is in its w:sectPr
// at its end, after its content; until then both readings are followed
// (cur starts a new page, alt does not) and the blocks in between keep
// both pages.
type pager struct {
	cur, alt pageState
	pending  bool  // a section break whose type is not known yet
	from     int   // the first block of the pending section
	pages    []int // page of each block so far, by cur
	altPages []int // pages of blocks from[:] by alt
}

func newPager() *pager {
	s := pageState{page: 1, fresh: true}
	return &pager{cur: s, alt: s}
}

func (p *pager) both(f func(*pageState)) { f(&p.cur); f(&p.alt) }

func (p *pager) explicit()    { p.both((*pageState).explicit) }
func (p *pager) breakBefore() { p.both((*pageState).breakBefore) }
func (p *pager) rendered()    { p.both((*pageState).rendered) }
func (p *pager) content()     { p.cur.fresh, p.alt.fresh = false, false }

// advance moves past a table's pages.
func (p *pager) advance(n int) { p.cur.page += n; p.alt.page += n }

func (p *pager) pos() pagePair { return pagePair{p.cur.page, p.alt.page} }

// sectionEnd is the end of a paragraph holding a w:sectPr: the next
// section starts here, on a new page or not.
func (p *pager) sectionEnd() {
	p.resolve("") // a sectPr without a type is nextPage
	p.pending, p.from = true, len(p.pages)
	p.alt = p.cur
	p.cur.explicit()
}

// resolve settles the pending section break with the type of its
// section, from that section's w:sectPr.
func (p *pager) resolve(typ string) {
	if !p.pending {
		return
	}
	switch typ {
	case "continuous", "nextColumn":
		copy(p.pages[p.from:], p.altPages)
		p.cur = p.alt
	default: // nextPage, oddPage, evenPage
		p.alt = p.cur
	}
	p.pending, p.altPages = false, p.altPages[:0]
}

// record notes the page of the block just added.
func (p *pager) record(at pagePair) {
	p.pages = append(p.pages, at.brk)
	if p.pending {
		p.altPages = append(p.altPages, at.cont)
	}
}

// apply sets the pages of doc's blocks and images, when the document
// has a page break at all. Anything inconsistent (which would be a bug)
// leaves the pages unknown rather than wrong.
func (p *pager) apply(doc *extract.Document) {
	p.resolve("")
	last := p.cur.page
	if last < 2 || len(p.pages) != len(doc.Blocks) {
		return
	}
	prev := 1
	for _, n := range p.pages {
		if n < prev || n > last {
			return
		}
		prev = n
	}
	for i, n := range p.pages {
		b := &doc.Blocks[i]
		b.Page = n
		if b.Kind == extract.Figure && b.Image >= 0 && b.Image < len(doc.Images) {
			doc.Images[b.Image].Page = n
		}
	}
	doc.Pages = last
}

// tablePages counts the pages a table breaks into. Its breaks are added
// to the flow around it (the body, or the cell of an enclosing table)
// when it ends.
type tablePages struct {
	sum      int  // pages the rows ended so far break into
	leading  bool // no content in the table yet
	rowStart bool // the current row starts a page
	rowSeen  bool // the current row's start was looked at
	rowMid   int  // most breaks within one cell of the current row
	cellMid  int  // breaks within the current cell
	atStart  bool // nothing in the current cell yet, neither content nor break
	cellNew  bool // nothing in the current cell since its start or last break
}

// settled reports whether content would change nothing.
func (t *tablePages) settled() bool { return !t.leading && !t.atStart && !t.cellNew }

func (t *tablePages) startCell() { t.cellMid, t.atStart, t.cellNew = 0, true, true }

func (t *tablePages) endCell() {
	t.rowMid = max(t.rowMid, t.cellMid)
	t.cellMid = 0
}

func (t *tablePages) startRow() {
	t.rowStart, t.rowSeen, t.rowMid = false, false, 0
}

func (t *tablePages) endRow() {
	if t.rowStart {
		t.sum++
	}
	t.sum += t.rowMid
	t.startRow()
}

// offset is how far into the table the current row starts.
func (t *tablePages) offset() int {
	if t.rowStart {
		return t.sum + 1
	}
	return t.sum
}

// The walker's side: markers met in document.xml.

// inBody reports whether a marker here is the body's: not in a text
// box or other drawing.
func (w *walker) inBody() bool { return len(w.drawings) == 0 }

// inFlow reports whether an explicit break here breaks the body's page:
// in a top-level paragraph, outside tables and drawings.
func (w *walker) inFlow() bool {
	return w.inBody() && len(w.frames) == 1 && !w.frames[0].table
}

// pos is the page of the current position, for a block starting or an
// image met here: in a top-level table, the page its current row starts
// on (rows only move forward; cells are side by side). In a part read
// after the body it is the document's last page (trailing.go).
func (w *walker) pos() pagePair {
	if w.group != nil {
		return w.group.at
	}
	at := w.pages.pos()
	if len(w.frames) > 0 && w.frames[0].table {
		n := w.frames[0].pg.offset()
		at.brk += n
		at.cont += n
	}
	return at
}

// content notes that something was laid out here: text, a tab, a
// picture. The first content of a block fixes its page.
func (w *walker) content() {
	w.pages.content()
	// Tables below a settled one are settled too: only a new cell (in
	// the innermost table) or a break reaching down through leading
	// tables unsettles one.
	for i := len(w.tables) - 1; i >= 0 && !w.tables[i].pg.settled(); i-- {
		t := &w.tables[i].pg
		t.leading, t.atStart, t.cellNew = false, false, false
	}
	if len(w.frames) > 0 && !w.frames[0].started {
		w.frames[0].started = true
		w.frames[0].at = w.pos()
	}
}

// lastRendered handles a w:lastRenderedPageBreak.
func (w *walker) lastRendered() {
	if w.inBody() {
		w.renderedIn(len(w.tables) - 1)
	}
}

// renderedIn applies a rendered break to the flow it is in: the current
// cell of table i, or the body when i < 0.
func (w *walker) renderedIn(i int) {
	if i < 0 {
		w.pages.rendered()
		return
	}
	f := w.tables[i]
	if !f.inCell {
		return // outside any cell of a malformed table
	}
	t := &f.pg
	switch {
	case t.atStart: // the cell, so its row, starts on a new page
		t.atStart, t.cellNew = false, true
		if t.rowSeen {
			return // another cell of the row said so already
		}
		t.rowSeen = true
		if t.leading {
			// The table itself starts on the new page: a break of the
			// flow around it (and the same break as an explicit one
			// just before it).
			w.renderedIn(i - 1)
			return
		}
		t.rowStart = true
	case !t.cellNew:
		t.cellMid++
		t.cellNew = true
	}
}

// pageBreak handles <w:br w:type="page"/>.
func (w *walker) pageBreak() {
	if w.inFlow() {
		w.pages.explicit()
	}
}

// endTablePages adds the pages of table f, just closed, to the flow
// around it.
func (w *walker) endTablePages(f *frame) {
	switch parent := w.top(); {
	case parent == nil:
		w.pages.advance(f.pg.sum)
	case parent.table:
		parent.pg.cellMid += f.pg.sum
	}
}

// sectionType reads the w:type of the w:sectPr just opened and consumes
// the rest of it.
func (w *walker) sectionType() (string, error) {
	typ := ""
	for depth := 1; depth > 0; {
		tok, err := w.t.next()
		if err != nil {
			return "", err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 1 && isW(tok.Name) && tok.Name.Local == "type" {
				typ = attr(tok, "val")
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return typ, nil
}
