package sheet

import (
	"slices"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// cell is one non-empty cell of a row.
type cell struct {
	text string // displayed value, clean (cleanCell)
	col  int32  // 0-based column (maxColumns at most): a row of 16,384 cells is 24 bytes each
	num  bool   // a number, date, time or boolean rather than text
}

// Where a table is in its sheet.
const (
	noRows     = iota // no non-empty row yet
	heldFirst         // the first row, of one text cell, held back
	writingRow        // the header is decided; rows are written
)

// table writes one sheet: its rows as Table blocks on its page.
//
// The header row is the first non-empty row whose non-empty cells are
// all distinct text; its cells name the columns, and every later row is
// written "Header: value, Header: value" (empty cells left out), so each
// row reads on its own in whatever chunk it lands. Without a header, or
// past its last column, the column letters name the values. One step
// beyond that rule: a first row of one text cell followed by a row that
// is a header of two or more cells is the sheet's title, not its header
// ("Sales 2024" above "Region, Units, Notes"); it is written on its own.
type table struct {
	x     *run
	page  int
	state int
	cells []cell   // the row being read
	first []cell   // the held first row (heldFirst)
	names []string // column labels by column, "" where the header cell is empty
	buf   []byte   // the row being written
	size  int      // bytes of the row being read: its values and the ", " between them
	rows  int      // rows written, for the context checks
}

func newTable(x *run, page int) *table { return &table{x: x, page: page} }

// cell adds a cell to the row being read; blank cells are left out. A row
// whose values alone are more than MaxTextBytes leaves is refused as soon
// as it is, not once it is whole.
func (t *table) cell(col int, text string, num bool) error {
	if text = cleanCell(text); text == "" {
		return nil
	}
	if len(t.cells) > 0 {
		t.size += len(", ")
	}
	if t.size += len(text); t.size > t.x.room() {
		return t.x.tooLarge()
	}
	t.cells = append(t.cells, cell{col: int32(col), text: text, num: num})
	return nil
}

// endRow writes the row read since the last endRow repeat times (ODS
// repeats identical rows), and starts the next.
func (t *table) endRow(repeat int) error {
	defer func() { t.cells, t.size = t.cells[:0], 0 }()
	if len(t.cells) == 0 {
		return nil
	}
	for range repeat {
		if t.rows++; t.rows%ctxEvery == 0 {
			if err := t.x.checkCtx(); err != nil {
				return err
			}
		}
		if err := t.row(t.cells); err != nil {
			return err
		}
	}
	return nil
}

func (t *table) row(cells []cell) error {
	switch t.state {
	case noRows:
		if len(cells) == 1 && isHeader(cells) {
			t.first, t.state = slices.Clone(cells), heldFirst
			return nil
		}
		t.state = writingRow
		if isHeader(cells) {
			return t.header(cells)
		}
		return t.data(cells)
	case heldFirst:
		t.state = writingRow
		if len(cells) >= 2 && isHeader(cells) {
			if err := t.x.add(extract.Table, 0, t.page, t.first[0].text); err != nil {
				return err
			}
			return t.header(cells)
		}
		if err := t.header(t.first); err != nil {
			return err
		}
	}
	return t.data(cells)
}

// end finishes the sheet: a held first row with nothing after it is its
// header.
func (t *table) end() error {
	if t.state == heldFirst {
		t.state = writingRow
		return t.header(t.first)
	}
	return nil
}

// isHeader: every cell is text, and no two are the same.
func isHeader(cells []cell) bool {
	seen := map[string]bool{} // not sized to the row: most rows are not headers, and say so early
	for _, c := range cells {
		if c.num || seen[c.text] {
			return false
		}
		seen[c.text] = true
	}
	return true
}

// header takes the row's cells as the column names and writes the row,
// its cells joined by ", ", so the header itself can be found.
func (t *table) header(cells []cell) error {
	last := 0
	for _, c := range cells {
		last = max(last, int(c.col))
	}
	t.names = make([]string, last+1)
	t.buf = t.buf[:0]
	for i, c := range cells {
		t.names[c.col] = strings.TrimSpace(extract.Truncate(c.text, maxLabelBytes))
		if i > 0 {
			t.buf = append(t.buf, ", "...)
		}
		t.buf = append(t.buf, c.text...)
		if len(t.buf) > t.x.room() {
			return t.x.tooLarge()
		}
	}
	return t.x.add(extract.Table, 0, t.page, string(t.buf))
}

// data writes a row as "Label: value, Label: value".
func (t *table) data(cells []cell) error {
	// Room for the values, the ", " between them and a short label each:
	// a row of 16,384 cells is written without growing its buffer a dozen times.
	t.buf = slices.Grow(t.buf[:0], t.size+len(cells)*len("AAA: "))
	for i, c := range cells {
		if i > 0 {
			t.buf = append(t.buf, ", "...)
		}
		if int(c.col) < len(t.names) && t.names[c.col] != "" {
			t.buf = append(t.buf, t.names[c.col]...)
		} else {
			t.buf = appendColumn(t.buf, int(c.col))
		}
		t.buf = append(t.buf, ": "...)
		t.buf = append(t.buf, c.text...)
		if len(t.buf) > t.x.room() {
			return t.x.tooLarge()
		}
	}
	return t.x.add(extract.Table, 0, t.page, string(t.buf))
}
