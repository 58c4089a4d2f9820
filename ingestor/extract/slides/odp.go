package slides

import (
	"cmp"
	"encoding/xml"
	"errors"
	"strconv"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	odpMIME      = "application/vnd.oasis.opendocument.presentation"
	contentPart  = "content.xml"
	metaPart     = "meta.xml"
	manifestPart = "meta-inf/manifest.xml"
)

// ODF namespaces of the elements read.
const (
	nsDraw  = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
	nsText  = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
	nsTable = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
	nsPres  = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
	nsSVG   = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
	nsStyle = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
)

// readODP reads the properties, then the pages of content.xml in order,
// each with its notes.
func (x *extraction) readODP() error {
	if x.files[contentPart] == nil {
		return x.errorf(extract.ErrCorrupt, "no %s in the archive", contentPart)
	}
	encrypted := false
	if err := x.readOptional(manifestPart, func(t *tokens) error {
		return t.each(func(tok xml.Token) error {
			if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "encryption-data" {
				encrypted = true
			}
			return nil
		})
	}); err != nil {
		return err
	}
	if encrypted {
		return x.errorf(extract.ErrEncrypted, "password-protected presentation (encryption data in the manifest)")
	}
	if err := x.readOptional(metaPart, x.parseProps); err != nil {
		return err
	}
	w := &odpWalker{x: x, hiddenStyles: map[string]bool{}}
	_, err := x.readXML(contentPart, w.run)
	if err == nil || errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) ||
		errors.Is(err, extract.ErrEncrypted) || x.slides == 0 {
		return err
	}
	// content.xml broke off after some slides: they are kept, and what
	// was read of the slide it broke in, as the slides of a PPTX whose
	// part breaks are.
	x.warn("content.xml read in part: %v", err)
	if w.slide != nil {
		return w.endPage()
	}
	return nil
}

// odpWalker turns content.xml into slides, adding each as its page ends,
// so memory holds one slide at a time.
type odpWalker struct {
	x            *extraction
	t            *tokens
	hiddenStyles map[string]bool // drawing-page styles that hide a page
	style        string          // the drawing-page style being read
	slide        *slide          // the page being read
	c            *collector      // the page's, or its notes'
	slideC       *collector
	notesDepth   int   // depth of the open presentation:notes; 0 outside
	depths       []int // depths of the open shapes
}

// odpShapes are the drawing shapes that may hold text or a picture.
var odpShapes = map[string]bool{
	"frame": true, "custom-shape": true, "rect": true, "ellipse": true, "circle": true, "line": true,
	"polyline": true, "polygon": true, "regular-polygon": true, "path": true, "connector": true,
	"caption": true, "measure": true, "g": true, "page-thumbnail": true,
}

// odpNotContent are the presentation classes that hold no content of
// the slide: numbers, dates, headers, footers, a notes page's picture of
// its slide.
var odpNotContent = map[string]bool{"page-number": true, "date-time": true, "header": true, "footer": true, "page": true, "handout": true}

func (w *odpWalker) run(t *tokens) error {
	w.t = t
	return t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			return w.start(tok)
		case xml.EndElement:
			return w.end(tok)
		case xml.CharData:
			if w.c != nil && w.c.inPara {
				return w.c.text(collapseSpace(string(tok)))
			}
		}
		return nil
	})
}

func (w *odpWalker) start(e xml.StartElement) error {
	n := e.Name
	if w.slide == nil {
		return w.outsidePage(e)
	}
	s := w.c.cur()
	switch {
	case n.Space == nsDraw && odpShapes[n.Local]:
		return w.startShape(e, s)
	case n.Space == nsPres && n.Local == "notes" && s == nil && w.notesDepth == 0:
		w.notesDepth = w.t.depth
		w.c = &collector{x: w.x}
		return nil
	case n.Space == nsDraw && n.Local == "a":
		return nil // a link around shapes: its shapes are read
	case s == nil || s.group:
		return w.t.skip() // forms, animations: no text of the slide
	}
	return w.content(e, s)
}

// outsidePage reads the drawing-page styles that hide a page, and starts
// pages.
func (w *odpWalker) outsidePage(e xml.StartElement) error {
	switch n := e.Name; {
	case n.Space == nsStyle && n.Local == "style":
		w.style = ""
		if attr(e, "family") == "drawing-page" {
			w.style = attr(e, "name")
		}
	case n.Space == nsStyle && n.Local == "drawing-page-properties":
		if w.style != "" && attr(e, "visibility") == "hidden" {
			w.hiddenStyles[w.style] = true
		}
	case n.Space == nsDraw && n.Local == "page":
		w.x.slides++
		if w.x.slides > w.x.lim.MaxPages {
			return w.t.skip()
		}
		if err := w.x.checkCtx(); err != nil {
			return err
		}
		w.slide = &slide{num: w.x.slides,
			hidden: attr(e, "visibility") == "hidden" || w.hiddenStyles[attr(e, "style-name")]}
		w.slideC = &collector{x: w.x}
		w.c = w.slideC
	}
	return nil
}

// startShape opens a shape at its position (svg:x, svg:y; a line's first
// point).
func (w *odpWalker) startShape(e xml.StartElement, parent *shape) error {
	s := &shape{group: e.Name.Local == "g", hidden: parent != nil && parent.hidden}
	y, okY := parseLength(cmp.Or(attrNS(e, nsSVG, "y"), attrNS(e, nsSVG, "y1")))
	x, okX := parseLength(cmp.Or(attrNS(e, nsSVG, "x"), attrNS(e, nsSVG, "x1")))
	s.y, s.x, s.placed = y, x, okY && okX
	if class := attrNS(e, nsPres, "class"); class != "" {
		s.ph = class
		s.hidden = s.hidden || odpNotContent[class]
	}
	w.c.start(s)
	w.depths = append(w.depths, w.t.depth)
	return nil
}

// content reads what is inside a shape: its text, a table, a picture,
// its alt text. A frame holds alternatives of one content (a table and
// its preview picture, an SVG and its PNG fallback): the first text box
// or table is read and the rest ignored, or, failing those, the pictures
// are tried in order.
func (w *odpWalker) content(e xml.StartElement, s *shape) error {
	c := w.c
	n := e.Name
	direct := len(w.depths) > 0 && w.t.depth == w.depths[len(w.depths)-1]+1
	switch {
	case direct && n.Space == nsDraw && (n.Local == "text-box" || n.Local == "image") ||
		direct && n.Space == nsTable && n.Local == "table":
		kind := n.Local
		if kind == "text-box" || kind == "table" {
			kind = "text"
		}
		if s.repr != "" && (s.repr != kind || kind == "text") {
			return w.t.skip() // another representation of what was read
		}
		s.repr = kind
		if n.Local == "image" && !s.hidden {
			if target := resolve("", attrNS(e, xlinkNS, "href")); target != "" {
				s.images = append(s.images, target)
			}
		}
		if n.Local == "table" {
			c.startTable()
		}
	case direct && n.Space == nsDraw && (n.Local == "object" || n.Local == "object-ole" || n.Local == "applet" ||
		n.Local == "plugin" || n.Local == "floating-frame"):
		return w.t.skip() // embedded objects are not read; their picture may be
	case direct && n.Space == nsSVG && (n.Local == "title" || n.Local == "desc"):
		text, err := w.elementText()
		if err != nil {
			return err
		}
		if n.Local == "title" {
			s.alt = joinAlt(text, s.alt)
		} else {
			s.alt = joinAlt(s.alt, text)
		}
	case n.Space == nsText && (n.Local == "p" || n.Local == "h"):
		if !s.hidden {
			c.startPara()
		}
	case n.Space == nsText && n.Local == "s":
		count, err := strconv.Atoi(attrNS(e, nsText, "c"))
		if err != nil || count < 1 {
			count = 1
		}
		return w.textIn(strings.Repeat(" ", min(count, 256)))
	case n.Space == nsText && n.Local == "tab":
		return w.textIn("\t")
	case n.Space == nsText && n.Local == "line-break":
		return w.textIn("\n")
	case n.Space == nsText && (n.Local == "note" || n.Local == "tracked-changes") || n.Local == "annotation":
		return w.t.skip() // notes in text, old revisions and comments are not the slide's text
	case n.Space == nsTable && n.Local == "table":
		c.startTable()
	case n.Space == nsTable && n.Local == "table-row":
		c.startRow()
	case n.Space == nsTable && (n.Local == "table-cell" || n.Local == "covered-table-cell"):
		c.startCell()
	}
	return nil
}

func (w *odpWalker) textIn(s string) error {
	if !w.c.inPara {
		return nil
	}
	return w.c.text(s)
}

// elementText consumes the element just started and returns its text,
// one line, bounded.
func (w *odpWalker) elementText() (string, error) {
	var b strings.Builder
	for depth := 1; depth > 0; {
		tok, err := w.t.next()
		if err != nil {
			return "", err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if b.Len() < 4*maxLabelBytes {
				b.Write(tok)
			}
		}
	}
	return oneLine(b.String(), maxLabelBytes), nil
}

func (w *odpWalker) end(e xml.EndElement) error {
	if w.slide == nil {
		return nil
	}
	n := e.Name
	c := w.c
	switch {
	case n.Space == nsDraw && odpShapes[n.Local]:
		if k := len(w.depths); k > 0 && w.depths[k-1] == w.t.depth+1 {
			w.depths = w.depths[:k-1]
			c.end()
		}
	case n.Space == nsPres && n.Local == "notes" && w.notesDepth == w.t.depth+1:
		w.slide.notes = c.top
		w.c, w.notesDepth = w.slideC, 0
	case n.Space == nsDraw && n.Local == "page":
		return w.endPage()
	case n.Space == nsText && (n.Local == "p" || n.Local == "h"):
		c.endPara()
	case n.Space == nsTable && n.Local == "table":
		c.endTable()
	case n.Space == nsTable && n.Local == "table-row":
		c.endRow()
	case n.Space == nsTable && (n.Local == "table-cell" || n.Local == "covered-table-cell"):
		c.endCell()
	}
	return nil
}

// endPage adds the slide just read.
func (w *odpWalker) endPage() error {
	s := w.slide
	s.shapes = w.slideC.top
	s.title, _ = takeTitle(&s.shapes, "title")
	w.slide, w.c, w.slideC, w.depths, w.notesDepth = nil, nil, nil, w.depths[:0], 0
	return w.x.emitSlide(s)
}

// xlinkNS is XLink's namespace (xlink:href).
const xlinkNS = "http://www.w3.org/1999/xlink"

// attrNS returns the value of the attribute with the namespace and local name.
func attrNS(e xml.StartElement, space, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local && a.Name.Space == space {
			return a.Value
		}
	}
	return ""
}

// emuPer are EMU (1/914400 inch, PPTX's unit) per unit of an ODF length.
var emuPer = map[string]float64{"cm": 360000, "mm": 36000, "in": 914400, "pt": 12700, "pc": 152400, "px": 9525}

// parseLength reads an ODF length ("2cm", "-0.5in") in EMU.
func parseLength(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	i := strings.LastIndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' || r == '.' })
	if i < 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:i+1], 64)
	per, ok := emuPer[strings.ToLower(s[i+1:])]
	if err != nil || !ok || v != v || v > 1e9 || v < -1e9 {
		return 0, false
	}
	return int64(v * per), true
}

// collapseSpace turns each run of XML white space into one space: ODF
// text is white-space collapsed, its own spaces, tabs and line breaks are
// elements (text:s, text:tab, text:line-break).
func collapseSpace(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
