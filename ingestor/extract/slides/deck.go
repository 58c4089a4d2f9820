package slides

import (
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// slide is what one slide holds, format aside: the parsers fill it, emit
// turns it into blocks. It lives only while its slide is read, so memory
// is bounded by one slide, not the deck.
type slide struct {
	num    int // 1-based, in presentation order
	hidden bool
	title  []string // the paragraphs of the title placeholder
	shapes []*shape
	notes  []*shape // the speaker notes' shapes
}

// shape is one thing on a slide: a text box, a table, a picture, or a
// group of shapes.
type shape struct {
	y, x     int64  // top left corner, in EMU (1/914400 inch)
	placed   bool   // the file gives the position
	ph       string // placeholder type (PPTX's p:ph type, ODP's presentation:class); "" for none
	phIdx    string // PPTX placeholder index
	group    bool
	hidden   bool // not shown: hidden by its author, or a slide number, date, header or footer
	paras    []string
	rows     [][]string // a table's rows
	alt      string
	images   []string // picture parts, alternatives: the first readable one is kept
	children []*shape
	repr     string // ODP: the representation of a frame's content read ("text", "image"), "" before one

	// the table being read
	tables int // open tables, nested ones included
	row    []string
	cell   strings.Builder
	inCell bool
}

// collector builds the shapes of a slide or of its notes from the parse
// events both formats share.
type collector struct {
	x      *extraction
	top    []*shape
	open   []*shape
	para   strings.Builder
	inPara bool
}

// start opens a shape, inside the innermost open one if any (a group's
// member, or a picture anchored in a text box).
func (c *collector) start(s *shape) {
	if p := c.cur(); p != nil {
		p.children = append(p.children, s)
	} else {
		c.top = append(c.top, s)
	}
	c.open = append(c.open, s)
}

// end closes the innermost shape. A group without a position of its own
// (ODP's draw:g) is where its top left member is.
func (c *collector) end() {
	s := c.cur()
	if s == nil {
		return
	}
	c.open = c.open[:len(c.open)-1]
	if s.group && !s.placed {
		for _, m := range s.children {
			if m.placed && (!s.placed || m.y < s.y || m.y == s.y && m.x < s.x) {
				s.y, s.x, s.placed = m.y, m.x, true
			}
		}
	}
}

func (c *collector) cur() *shape {
	if len(c.open) == 0 {
		return nil
	}
	return c.open[len(c.open)-1]
}

func (c *collector) startPara() {
	c.para.Reset()
	c.inPara = true
}

// text adds run text to the open paragraph, counting it against
// lim.MaxTextBytes so one huge slide cannot grow without bound.
func (c *collector) text(s string) error {
	if !c.inPara || c.cur() == nil {
		return nil // text outside a paragraph is not slide content
	}
	c.x.pending += len(s)
	if err := c.x.checkText(); err != nil {
		return err
	}
	c.para.WriteString(s)
	return nil
}

// endPara hands the paragraph to the open table cell or shape.
func (c *collector) endPara() {
	if !c.inPara {
		return
	}
	c.inPara = false
	s := c.cur()
	if s == nil {
		return
	}
	t := c.para.String()
	switch {
	case s.inCell:
		if s.cell.Len() > 0 {
			s.cell.WriteByte(' ')
		}
		s.cell.WriteString(t)
	case strings.TrimSpace(t) != "":
		s.paras = append(s.paras, t)
	}
}

// startTable opens a table in the innermost shape. A table nested in a
// cell adds its text to that cell.
func (c *collector) startTable() {
	if s := c.cur(); s != nil {
		s.tables++
	}
}

func (c *collector) endTable() {
	if s := c.cur(); s != nil && s.tables > 0 {
		if s.tables == 1 {
			s.endRow()
		}
		s.tables--
	}
}

func (c *collector) startRow() {
	if s := c.cur(); s != nil && s.tables == 1 {
		s.endRow()
		s.row = []string{}
	}
}

func (c *collector) endRow() {
	if s := c.cur(); s != nil && s.tables == 1 {
		s.endRow()
	}
}

func (c *collector) startCell() {
	if s := c.cur(); s != nil && s.tables == 1 && s.row != nil {
		s.endCell()
		s.inCell = true
	}
}

func (c *collector) endCell() {
	if s := c.cur(); s != nil && s.tables == 1 {
		s.endCell()
	}
}

func (s *shape) endCell() {
	if s.inCell {
		s.row = append(s.row, oneLine(s.cell.String(), len(s.cell.String())))
		s.cell.Reset()
		s.inCell = false
	}
}

// endRow ends a row; rows whose cells are all empty are dropped.
func (s *shape) endRow() {
	s.endCell()
	for _, cell := range s.row {
		if cell != "" {
			s.rows = append(s.rows, s.row)
			break
		}
	}
	s.row = nil
}

// checkText enforces lim.MaxTextBytes on the text added so far and that
// read for the slide being read.
func (x *extraction) checkText() error {
	if x.b.Len()+x.pending > x.lim.MaxTextBytes {
		return x.errorf(extract.ErrTooLarge, "text exceeds %d bytes", x.lim.MaxTextBytes)
	}
	return nil
}
