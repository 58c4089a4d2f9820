package docx

import (
	"encoding/xml"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Namespaces of WordprocessingML elements, transitional and strict.
const (
	nsW       = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsWStrict = "http://purl.oclc.org/ooxml/wordprocessingml/main"
	nsMath    = "http://schemas.openxmlformats.org/officeDocument/2006/math"
	nsR       = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	nsRStrict = "http://purl.oclc.org/ooxml/officeDocument/relationships"
)

func isW(n xml.Name) bool { return n.Space == nsW || n.Space == nsWStrict }

// frame is an open paragraph or table. Text goes to the innermost frame;
// a closed frame hands its text to its parent, or becomes a block at
// the top level.
type frame struct {
	table bool

	// the page of a top-level block: that of its first content
	started bool
	at      pagePair

	// paragraph
	text        strings.Builder
	style       string
	outline     int    // paragraph's own w:outlineLvl; -1 when absent
	broken      bool   // a text box was merged in; the next run starts a new line
	breakBefore int    // own w:pageBreakBefore: 1 on, 0 off, -1 absent
	sectionEnd  bool   // holds a w:sectPr: the next section starts after it
	prefix      string // written before the text: a comment's author

	// table
	rows   [][]string // rows with at least one non-empty cell
	row    []string
	cell   strings.Builder
	inRow  bool
	inCell bool
	pg     tablePages
}

// pending is an image met inside a block, emitted right after it so a
// paragraph or table is never split by a picture.
type pending struct {
	img  extract.Image
	desc string
	at   pagePair
}

// drawing collects the pictures and alt text of one w:drawing or w:pict.
type drawing struct {
	alt     string
	targets []string // part keys
}

// walker turns the token stream of word/document.xml, or of a part read
// after it (trailing.go), into blocks.
type walker struct {
	x *extraction
	t *tokens
	// pages is the flow page markers move: the body's, or for a trailing
	// part one that is thrown away (its markers are not the body's pages).
	pages *pager
	rels  map[string]string // the part's relationships: id -> part key
	// group is the trailing group the part is read into; nil for the body.
	group *group

	frames   []*frame
	tables   []*frame // the table frames of frames
	drawings []*drawing
	deferred []pending
	choices  []bool // per open mc:AlternateContent: a branch was taken
	inText   int    // depth of open w:t / m:t elements
}

// readBody streams word/document.xml into the builder.
func (x *extraction) readBody() error {
	x.pages = newPager()
	return x.readXML(x.files[documentPart], func(t *tokens) error {
		w := &walker{x: x, t: t, pages: x.pages, rels: x.rels}
		return w.run()
	})
}

func (w *walker) run() error {
	err := w.t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			return w.start(tok)
		case xml.EndElement:
			return w.end(tok)
		case xml.CharData:
			if w.inText > 0 && len(tok) > 0 {
				w.content()
				return w.appendText(string(tok))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return w.flush()
}

func (w *walker) start(e xml.StartElement) error {
	switch e.Name.Local {
	case "AlternateContent":
		w.choices = append(w.choices, false)
		return nil
	case "Choice", "Fallback":
		// Word stores a modern shape (Choice) and a VML copy of the same
		// content (Fallback); reading both would duplicate text boxes and
		// pictures. Take the first branch only.
		if n := len(w.choices); n > 0 {
			if w.choices[n-1] {
				return w.t.skip()
			}
			w.choices[n-1] = true
		}
		return nil
	case "docPr":
		if d := w.drawing(); d != nil && d.alt == "" {
			d.alt = firstNonEmpty(attr(e, "descr"), attr(e, "title"))
		}
		return nil
	case "blip":
		return w.picture(attr(e, "embed"), "")
	case "imagedata": // VML picture, older files
		return w.picture(relID(e), attr(e, "title"))
	}
	if e.Name.Local == "t" && e.Name.Space == nsMath {
		w.inText++
		return nil
	}
	if !isW(e.Name) {
		return nil
	}
	switch e.Name.Local {
	case "p":
		w.push(&frame{outline: -1, breakBefore: -1})
	case "tbl":
		w.push(&frame{table: true, pg: tablePages{leading: true}})
	case "tr":
		if f := w.table(); f != nil {
			f.startRow()
		}
	case "tc":
		if f := w.table(); f != nil {
			f.startCell()
		}
	case "pPr":
		if f := w.paragraph(); f != nil {
			return w.paragraphProps(f)
		}
		return w.t.skip()
	case "t":
		w.inText++
	case "tab", "ptab":
		w.content()
		return w.appendText("\t")
	case "br":
		if attr(e, "type") == "page" {
			w.pageBreak() // a line of its own, not content of the new page
		} else {
			w.content()
		}
		return w.appendText("\n")
	case "cr":
		w.content()
		return w.appendText("\n")
	case "noBreakHyphen":
		w.content()
		return w.appendText("-")
	case "sym", "object":
		w.content()
	case "lastRenderedPageBreak":
		w.lastRendered()
	case "drawing", "pict":
		w.content()
		w.drawings = append(w.drawings, &drawing{})
	case "sectPr":
		if len(w.frames) > 0 {
			return w.t.skip()
		}
		// The body's own w:sectPr, the last section's properties.
		typ, err := w.sectionType()
		w.pages.resolve(typ)
		return err
	case "footnote", "endnote":
		if w.group != nil && !isNote(e) {
			return w.t.skip()
		}
	case "comment":
		if w.group != nil {
			w.push(&frame{outline: -1, breakBefore: -1, prefix: commentPrefix(e)})
		}
	case "del", "moveFrom", "rPr", "sdtPr", "tblPr", "tblGrid", "trPr", "tcPr":
		// Deleted or moved-away revisions are not document text, and
		// property elements hold none (w:tab in tab stops would otherwise
		// read as text).
		return w.t.skip()
	}
	return nil
}

func (w *walker) end(e xml.EndElement) error {
	switch e.Name.Local {
	case "AlternateContent":
		if n := len(w.choices); n > 0 {
			w.choices = w.choices[:n-1]
		}
		return nil
	}
	if e.Name.Local == "t" && (isW(e.Name) || e.Name.Space == nsMath) {
		w.inText = max(w.inText-1, 0)
		return nil
	}
	if !isW(e.Name) {
		return nil
	}
	switch e.Name.Local {
	case "p":
		return w.endParagraph()
	case "tbl":
		return w.endTable()
	case "tr":
		if f := w.table(); f != nil {
			f.endRow()
		}
	case "tc":
		if f := w.table(); f != nil {
			f.endCell()
		}
	case "drawing", "pict":
		return w.endDrawing()
	case "comment":
		if w.group != nil {
			return w.endParagraph()
		}
	}
	return nil
}

// push opens a frame; tokens bounds how deep frames can nest.
func (w *walker) push(f *frame) {
	w.frames = append(w.frames, f)
	if f.table {
		w.tables = append(w.tables, f)
	}
}

func (w *walker) pop() *frame {
	f := w.frames[len(w.frames)-1]
	w.frames = w.frames[:len(w.frames)-1]
	if f.table {
		w.tables = w.tables[:len(w.tables)-1]
	}
	return f
}

// startPos is the page of the top-level block f, just closed.
func (w *walker) startPos(f *frame) pagePair {
	if f.started {
		return f.at
	}
	return w.pos()
}

func (w *walker) top() *frame {
	if len(w.frames) == 0 {
		return nil
	}
	return w.frames[len(w.frames)-1]
}

// paragraph returns the innermost frame if it is a paragraph.
func (w *walker) paragraph() *frame {
	if f := w.top(); f != nil && !f.table {
		return f
	}
	return nil
}

// table returns the innermost frame if it is a table.
func (w *walker) table() *frame {
	if f := w.top(); f != nil && f.table {
		return f
	}
	return nil
}

// appendText adds run text to the open paragraph, counting it against
// lim.MaxTextBytes so one huge paragraph cannot grow without bound.
func (w *walker) appendText(s string) error {
	f := w.paragraph()
	if f == nil {
		return nil // text outside a paragraph is not document content
	}
	w.x.textBytes += len(s)
	if w.x.textBytes > w.x.lim.MaxTextBytes {
		return w.x.errorf(extract.ErrTooLarge, "text exceeds %d bytes", w.x.lim.MaxTextBytes)
	}
	if f.broken && f.text.Len() > 0 {
		f.text.WriteByte('\n')
	}
	f.broken = false
	f.text.WriteString(s)
	return nil
}

// paragraphProps reads w:pStyle, w:outlineLvl, w:pageBreakBefore and
// w:sectPr, direct children of w:pPr (those inside w:pPrChange are an
// old revision), and consumes the rest of the element.
func (w *walker) paragraphProps(f *frame) error {
	section, typ := false, ""
	for depth := 1; depth > 0; {
		tok, err := w.t.next()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 1 && isW(tok.Name) {
				switch tok.Name.Local {
				case "pStyle":
					f.style = attr(tok, "val")
				case "outlineLvl":
					f.outline = parseOutline(attr(tok, "val"))
				case "pageBreakBefore":
					f.breakBefore = onOff(tok)
				case "sectPr":
					if typ, err = w.sectionType(); err != nil {
						return err
					}
					section = true
					continue // consumed, end tag included
				}
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	// Page breaks before the paragraph's content; properties after it
	// (a malformed file) are too late to say where it starts.
	if !w.inFlow() || f.started {
		return nil
	}
	if section {
		// This paragraph ends a section; the sectPr's type says how that
		// section started, after the previous section break.
		w.pages.resolve(typ)
		f.sectionEnd = true
	}
	if f.breakBefore == 1 || f.breakBefore < 0 && w.x.style.breakBefore(f.style) {
		w.pages.breakBefore()
	}
	return nil
}

// endParagraph closes a paragraph: a top-level one becomes a block; one
// inside a table cell joins the cell; one inside another paragraph (a
// text box) joins that paragraph on its own line.
func (w *walker) endParagraph() error {
	f := w.paragraph()
	if f == nil {
		return nil
	}
	w.pop()
	text := strings.TrimSpace(f.text.String())
	if text != "" {
		text = f.prefix + text
	}
	switch parent := w.top(); {
	case parent == nil:
		kind, level, title := w.x.paragraphKind(f)
		if err := w.add(kind, level, title, text, w.startPos(f)); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		if f.sectionEnd {
			w.pages.sectionEnd()
		}
		return nil
	case parent.table:
		parent.addToCell(text)
	default:
		parent.appendLine(text)
	}
	return nil
}

// endTable closes a table: a top-level one becomes one Table block, a
// nested one is flattened into the enclosing cell or paragraph.
func (w *walker) endTable() error {
	f := w.table()
	if f == nil {
		return nil
	}
	w.pop()
	f.endRow()
	w.endTablePages(f)
	switch parent := w.top(); {
	case parent == nil:
		if err := w.add(extract.Table, 0, false, f.tableText(), w.startPos(f)); err != nil {
			return err
		}
		return w.flush()
	case parent.table:
		parent.addToCell(f.flatText())
	default:
		parent.appendLine(f.tableText())
	}
	return nil
}

// appendLine adds the text of a nested paragraph or table to a
// paragraph on lines of its own.
func (f *frame) appendLine(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	if f.text.Len() > 0 {
		f.text.WriteByte('\n')
	}
	f.text.WriteString(s)
	f.broken = true
}

func (f *frame) startRow() {
	f.endRow()
	f.inRow = true
	f.pg.startRow()
}

func (f *frame) startCell() {
	f.endCell()
	if !f.inRow {
		f.pg.startRow()
	}
	f.inRow = true
	f.inCell = true
	f.pg.startCell()
}

// addToCell joins a cell's paragraphs with spaces: a row must stay on
// one line.
func (f *frame) addToCell(s string) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if s == "" {
		return
	}
	if !f.inCell { // content outside w:tc in a malformed file
		f.startCell()
	}
	if f.cell.Len() > 0 {
		f.cell.WriteByte(' ')
	}
	f.cell.WriteString(s)
}

func (f *frame) endCell() {
	f.pg.endCell()
	if !f.inCell {
		return
	}
	f.row = append(f.row, strings.TrimSpace(f.cell.String()))
	f.cell.Reset()
	f.inCell = false
}

// endRow ends a row; rows whose cells are all empty are dropped.
func (f *frame) endRow() {
	f.endCell()
	if !f.inRow {
		return
	}
	f.inRow = false
	f.pg.endRow()
	for _, c := range f.row {
		if c != "" {
			f.rows = append(f.rows, f.row)
			break
		}
	}
	f.row = nil
}

// tableText renders one row per line, cells separated by " | "; empty
// cells keep their place so columns line up.
func (f *frame) tableText() string {
	lines := make([]string, len(f.rows))
	for i, r := range f.rows {
		lines[i] = strings.Join(r, " | ")
	}
	return strings.Join(lines, "\n")
}

// flatText renders a nested table inside a cell: its non-empty cells in
// reading order on one line.
func (f *frame) flatText() string {
	var cells []string
	for _, r := range f.rows {
		for _, c := range r {
			if c != "" {
				cells = append(cells, c)
			}
		}
	}
	return strings.Join(cells, " | ")
}

func (w *walker) drawing() *drawing {
	if len(w.drawings) == 0 {
		return nil
	}
	return w.drawings[len(w.drawings)-1]
}

// picture records an image reference. Inside a drawing it waits for the
// drawing's alt text; a bare VML image is handled at once.
func (w *walker) picture(relID, alt string) error {
	target, ok := w.rels[relID]
	if relID == "" || !ok {
		return nil
	}
	if d := w.drawing(); d != nil {
		d.targets = append(d.targets, target)
		if d.alt == "" {
			d.alt = alt
		}
		return nil
	}
	return w.image(target, alt)
}

func (w *walker) endDrawing() error {
	d := w.drawing()
	if d == nil {
		return nil
	}
	w.drawings = w.drawings[:len(w.drawings)-1]
	for _, target := range d.targets {
		if err := w.image(target, d.alt); err != nil {
			return err
		}
	}
	return nil
}

// image loads a picture and queues it behind the current block, or adds
// it at once outside any block.
func (w *walker) image(target, alt string) error {
	img, desc, ok, err := w.x.loadImage(target, alt)
	if err != nil || !ok {
		return err
	}
	w.deferred = append(w.deferred, pending{img, desc, w.pos()})
	if len(w.frames) == 0 {
		return w.flush()
	}
	return nil
}

// flush adds the images queued behind the block just emitted.
func (w *walker) flush() error {
	for _, p := range w.deferred {
		if err := w.openGroup(); err != nil {
			return err
		}
		n := w.x.b.Len()
		w.x.b.AddImage(p.img, p.desc)
		if w.x.b.Len() != n { // a figure block was added
			w.x.pages.record(p.at)
		}
		if err := w.x.checkText(); err != nil {
			return err
		}
	}
	w.deferred = w.deferred[:0]
	return nil
}

// relID returns a VML r:id attribute (the plain "id" is a shape id).
func relID(e xml.StartElement) string {
	for _, a := range e.Attr {
		if a.Name.Local == "id" && (a.Name.Space == nsR || a.Name.Space == nsRStrict) {
			return a.Value
		}
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// paragraphKind decides whether a paragraph is a heading. The
// paragraph's own outline level overrides its style's, as in Word.
// The Title style is a level-1 heading.
func (x *extraction) paragraphKind(f *frame) (kind extract.Kind, level int, title bool) {
	lvl, title := x.style.heading(f.style)
	switch {
	case title:
		return extract.Heading, 1, true
	case f.outline == 9:
		lvl = 0
	case f.outline >= 0:
		lvl = clampLevel(f.outline + 1)
	}
	if lvl > 0 {
		return extract.Heading, lvl, false
	}
	return extract.Paragraph, 0, false
}
