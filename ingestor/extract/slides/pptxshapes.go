package slides

import (
	"encoding/xml"
	"strconv"
)

// pptxWalker turns the token stream of a slide, notes, layout or master
// part (PresentationML) into shapes. Elements are matched by local name,
// so transitional and strict files read alike.
type pptxWalker struct {
	c       *collector
	rels    map[string]rel
	noText  bool // layouts and masters: positions only, their prompt text is not content
	hidden  bool // the slide's show="0"
	trees   int  // open p:spTree elements: shapes live only there
	depths  []int
	choices []bool // per open mc:AlternateContent: a branch was taken
	inXfrm  int
	inText  int
	t       *tokens
}

// notContent are the placeholder types that hold no content of the
// slide: numbers, dates, headers, footers and a notes page's picture of
// its slide.
var notContent = map[string]bool{"sldNum": true, "dt": true, "hdr": true, "ftr": true, "sldImg": true}

func (w *pptxWalker) run(t *tokens) error {
	w.t = t
	return t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			return w.start(tok)
		case xml.EndElement:
			w.end(tok)
		case xml.CharData:
			if w.inText > 0 && !w.noText {
				return w.c.text(string(tok))
			}
		}
		return nil
	})
}

func (w *pptxWalker) start(e xml.StartElement) error {
	c := w.c
	s := c.cur()
	switch e.Name.Local {
	case "sld":
		if w.t.depth == 1 {
			show := attr(e, "show")
			w.hidden = show == "0" || show == "false"
		}
	case "spTree":
		w.trees++
	case "AlternateContent":
		w.choices = append(w.choices, false)
	case "Choice", "Fallback":
		// A newer form of content (Choice) and an older copy of the same
		// (Fallback): reading both would read it twice. Take the first.
		if n := len(w.choices); n > 0 {
			if w.choices[n-1] {
				return w.t.skip()
			}
			w.choices[n-1] = true
		}
	case "sp", "pic", "graphicFrame", "grpSp", "cxnSp":
		if w.trees > 0 {
			hidden := s != nil && s.hidden
			c.start(&shape{group: e.Name.Local == "grpSp", hidden: hidden})
			w.depths = append(w.depths, w.t.depth)
		}
	case "contentPart", "extLst", "rPr", "pPr", "endParaRPr", "lstStyle", "bodyPr", "tcPr", "tblPr", "tblGrid", "style":
		// Ink, extensions and properties hold no text (a:tab in a
		// paragraph's tab stops is not a tab of its text).
		return w.t.skip()
	}
	if s = c.cur(); s == nil {
		return nil
	}
	switch e.Name.Local {
	case "cNvPr":
		if attr(e, "hidden") == "1" || attr(e, "hidden") == "true" {
			s.hidden = true
		}
		if s.alt == "" {
			s.alt = joinAlt(attr(e, "title"), attr(e, "descr"))
		}
	case "ph":
		s.ph, s.phIdx = attr(e, "type"), attr(e, "idx")
		if s.ph == "" {
			s.ph = "obj" // the schema's default
		}
		s.hidden = s.hidden || notContent[s.ph]
	case "xfrm":
		w.inXfrm++
	case "off":
		if w.inXfrm > 0 && !s.placed {
			y, errY := strconv.ParseInt(attr(e, "y"), 10, 64)
			x, errX := strconv.ParseInt(attr(e, "x"), 10, 64)
			s.y, s.x, s.placed = y, x, errY == nil && errX == nil
		}
	case "p":
		if !s.hidden {
			c.startPara()
		}
	case "t":
		if c.inPara {
			w.inText++
		}
	case "br":
		return w.textIn("\n")
	case "tbl":
		c.startTable()
	case "tr":
		c.startRow()
	case "tc":
		c.startCell()
	case "blip":
		if r, ok := w.rels[relID(e, "embed")]; ok && !w.noText {
			s.images = append(s.images, r.target)
		}
	}
	return nil
}

// textIn adds s to the open paragraph of a shape whose text is read.
func (w *pptxWalker) textIn(s string) error {
	if w.noText || !w.c.inPara {
		return nil
	}
	return w.c.text(s)
}

func (w *pptxWalker) end(e xml.EndElement) {
	c := w.c
	switch e.Name.Local {
	case "spTree":
		w.trees--
	case "AlternateContent":
		if n := len(w.choices); n > 0 {
			w.choices = w.choices[:n-1]
		}
	case "sp", "pic", "graphicFrame", "grpSp", "cxnSp":
		if n := len(w.depths); n > 0 && w.depths[n-1] == w.t.depth+1 {
			w.depths = w.depths[:n-1]
			c.end()
		}
	case "xfrm":
		w.inXfrm = max(w.inXfrm-1, 0)
	case "p":
		c.endPara()
	case "t":
		w.inText = max(w.inText-1, 0)
	case "tbl":
		c.endTable()
	case "tr":
		c.endRow()
	case "tc":
		c.endCell()
	}
}

// joinAlt is a picture's alt text from its title and description.
func joinAlt(title, desc string) string {
	title, desc = oneLine(title, maxLabelBytes), oneLine(desc, maxLabelBytes)
	switch {
	case title == "" || title == desc:
		return desc
	case desc == "":
		return title
	}
	return title + ": " + desc
}
