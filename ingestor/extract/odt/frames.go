package odt

import (
	"strings"
)

// A frame is an open paragraph, table or collector. Text goes to the
// innermost paragraph; a closed frame hands its text to its parent, or
// becomes a block at the top level.
type frameKind int

const (
	paragraphFrame frameKind = iota
	tableFrame
	// collectorFrame gathers the paragraphs of a note body, a comment, a
	// header or a footer, emitted at the end of the document.
	collectorFrame
)

// maxRepeat bounds how often a repeated table cell or row
// (table:number-columns-repeated, number-rows-repeated) is written out,
// and maxEmptyRun the empty cells kept in a row between two with text:
// spreadsheets pasted into text repeat empty cells by the thousand, and
// each repeat must not cost memory.
const (
	maxRepeat   = 32
	maxEmptyRun = 32
)

type frame struct {
	kind frameKind

	// paragraph
	text    []byte
	space   bool // white space met since the last character written
	heading bool
	title   bool // the Title style
	level   int
	marker  string // list item marker, "- " or "3. "

	// top-level paragraphs and tables: the page they start on (pages.go)
	started    bool
	page       int
	breakAfter bool

	// table
	rows       [][]string
	row        []string
	cell       []string // the paragraphs of the open cell
	inRow      bool
	inCell     bool
	empties    int // empty cells not yet written in the row
	cellRepeat int
	rowRepeat  int

	// collector
	lines []string
}

// appendText adds character data: ODF collapses runs of white space
// (space, tab, line feed, carriage return) to one space, and drops it at
// the start of a paragraph (ODF 1.3 part 3, 6.1.2).
func (f *frame) appendText(s []byte) {
	for _, c := range s {
		switch c {
		case ' ', '\t', '\n', '\r':
			f.space = true
		default:
			if f.space && len(f.text) > 0 {
				f.text = append(f.text, ' ')
			}
			f.space = false
			f.text = append(f.text, c)
		}
	}
}

// appendExact adds text written by an element (text:s, text:tab,
// text:line-break), which is kept as it is, after any pending space.
func (f *frame) appendExact(s string) {
	if f.space && len(f.text) > 0 {
		f.text = append(f.text, ' ')
	}
	f.space = false
	f.text = append(f.text, s...)
}

// appendLine adds the text of a nested paragraph or table (in a text box)
// on lines of its own.
func (f *frame) appendLine(s string) {
	if s == "" {
		return
	}
	if len(f.text) > 0 {
		f.text = append(f.text, '\n')
	}
	f.text = append(f.text, s...)
	f.space = false
}

func (f *frame) startRow(repeat int) {
	f.endRow()
	f.inRow = true
	f.rowRepeat = repeat
}

func (f *frame) startCell(repeat int) {
	f.endCell()
	if !f.inRow {
		f.startRow(1)
	}
	f.inCell = true
	f.cellRepeat = repeat
}

// addToCell joins a cell's paragraphs with spaces: a row stays on one line.
func (f *frame) addToCell(s string) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if s == "" {
		return
	}
	if !f.inCell { // content outside table:table-cell in a malformed file
		f.startCell(1)
	}
	f.cell = append(f.cell, s)
}

// endCell writes the open cell into the row, repeated as it says. It
// returns the bytes of text written, for the text limit.
func (f *frame) endCell() int {
	if !f.inCell {
		return 0
	}
	f.inCell = false
	text := strings.Join(f.cell, " ")
	f.cell = f.cell[:0]
	if text == "" {
		f.empties += f.cellRepeat
		return 0
	}
	for range min(f.empties, maxEmptyRun) {
		f.row = append(f.row, "")
	}
	f.empties = 0
	n := min(f.cellRepeat, maxRepeat)
	for range n {
		f.row = append(f.row, text)
	}
	return n * (len(text) + 3)
}

// endRow ends a row, repeated as it says; rows without text are dropped,
// and so are the empty cells that end a row. It returns the bytes of
// text written.
func (f *frame) endRow() int {
	written := f.endCell()
	if !f.inRow {
		return written
	}
	f.inRow = false
	f.empties = 0
	if len(f.row) == 0 {
		return written
	}
	size := 1 // the line's text: cells, separators and its line feed
	for _, c := range f.row {
		size += len(c) + 3
	}
	n := min(f.rowRepeat, maxRepeat)
	for range n {
		f.rows = append(f.rows, f.row)
	}
	f.row = nil
	// endCell counted the text of one copy of the row.
	return written + (n-1)*size + 1
}

// tableText renders one row per line, cells separated by " | "; empty
// cells between others keep their place so columns line up.
func (f *frame) tableText() string {
	lines := make([]string, len(f.rows))
	for i, r := range f.rows {
		lines[i] = strings.Join(r, " | ")
	}
	return strings.Join(lines, "\n")
}

// flatText renders a nested table inside a cell: its cells with text in
// reading order, on one line.
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
