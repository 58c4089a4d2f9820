package sheet

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"

	"github.com/strata-kb/strata/ingestor/extract"
)

// OpenDocument namespaces.
const (
	nsOffice = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
	nsTable  = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
	nsText   = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
	nsStyle  = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
	nsDraw   = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
	nsDC     = "http://purl.org/dc/elements/1.1/"
	nsMeta   = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
)

// odsReader reads the XML of an OpenDocument spreadsheet, token by token:
// meta.xml (or a flat file's office:meta), then content.xml's automatic
// styles (which tell hidden sheets) and its sheets.
type odsReader struct {
	x      *run
	hidden map[string]bool // table styles that hide their sheet
	sheets int             // table:table elements met
	title  string
	props  *extract.Props

	col  int    // the column of the next cell in the row being read
	text []byte // the text of the cell being read, white space collapsed
}

func newODSReader(x *run) *odsReader {
	return &odsReader{x: x, hidden: map[string]bool{}}
}

// read reads a part: its office:meta, and when body is set (content.xml
// or a flat file) its table styles and sheets too.
func (o *odsReader) read(r io.Reader, body bool) error {
	t := newTokens(o.x, r)
	for {
		tok, err := t.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		se, ok := tok.(xml.StartElement)
		if !ok || !body && se.Name != (xml.Name{Space: nsOffice, Local: "meta"}) {
			continue
		}
		switch se.Name {
		case xml.Name{Space: nsOffice, Local: "meta"}:
			err = o.meta(t)
		case xml.Name{Space: nsStyle, Local: "style"}:
			err = o.style(t, se)
		case xml.Name{Space: nsTable, Local: "table"}:
			err = o.sheet(t, se)
		}
		if err != nil {
			return err
		}
	}
}

// finish sets the pages, title and properties and returns the document.
func (o *odsReader) finish() (*extract.Document, error) {
	if o.sheets == 0 {
		return nil, fmt.Errorf("%w: no sheets (table:table) in the document", extract.ErrCorrupt)
	}
	x := o.x
	x.b.SetPages(o.sheets)
	x.tooManySheets(o.sheets)
	x.b.SetTitle(oneLine(o.title, maxTitleBytes))
	if o.props != nil {
		x.b.SetMetadata(o.props.Metadata())
		for _, w := range o.props.Warnings() {
			x.warn("%s", w)
		}
	}
	return x.doc()
}

// style notes a table style that hides its sheet (table:display="false").
func (o *odsReader) style(t *tokens, se xml.StartElement) error {
	name := ""
	if attr(se, nsStyle, "family") == "table" {
		name = attr(se, nsStyle, "name")
	}
	return t.each(func(tok xml.Token) {
		if p, ok := tok.(xml.StartElement); ok && name != "" && p.Name == (xml.Name{Space: nsStyle, Local: "table-properties"}) &&
			attr(p, nsTable, "display") == "false" {
			o.hidden[name] = true
		}
	})
}

// sheet reads one table:table: its heading, then its rows.
func (o *odsReader) sheet(t *tokens, se xml.StartElement) error {
	o.sheets++
	page := o.sheets
	if page > o.x.lim.MaxPages {
		return t.each(func(xml.Token) {})
	}
	if err := o.x.sheetHeading(attr(se, nsTable, "name"), page, o.hidden[attr(se, nsTable, "style-name")]); err != nil {
		return err
	}
	tab := newTable(o.x, page)
	written, repeat, cut := 0, 1, false // rows with values written
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name {
			case xml.Name{Space: nsTable, Local: "table-row"}:
				o.col, repeat = 0, count(attr(tok, nsTable, "number-rows-repeated"), maxRows)
			case xml.Name{Space: nsTable, Local: "table-cell"}, xml.Name{Space: nsTable, Local: "covered-table-cell"}:
				if err := o.cell(t, tok, tab); err != nil {
					return err
				}
				continue // cell read its end
			}
			depth++
		case xml.EndElement:
			depth--
			if tok.Name != (xml.Name{Space: nsTable, Local: "table-row"}) {
				continue
			}
			// Empty rows, however many, write nothing; rows with values
			// are written as often as they repeat, up to as many as a
			// sheet can have.
			if len(tab.cells) == 0 {
				continue
			}
			n := min(repeat, maxRows-written)
			cut = cut || n < repeat
			if err := tab.endRow(n); err != nil {
				return err
			}
			written += n
		}
	}
	if cut {
		o.x.warn("sheet %d: rows past the %dth row with values not read", page, maxRows)
	}
	return tab.end()
}

// cell reads one table:table-cell (or covered-table-cell, which is part
// of a merged cell: its value is the merged cell's, written once) up to
// its end and adds its value to the row, once per repeated column, up to
// the last column a sheet can have.
func (o *odsReader) cell(t *tokens, se xml.StartElement, tab *table) error {
	columns := count(attr(se, nsTable, "number-columns-repeated"), maxColumns)
	o.text = o.text[:0]
	paragraphs, inText, skip := 0, 0, 0
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case skip > 0:
			case tok.Name.Space == nsDraw || tok.Name.Space == nsOffice && tok.Name.Local == "annotation" ||
				tok.Name == xml.Name{Space: nsText, Local: "note"}:
				// Shapes anchored to the cell, comments, notes: not the
				// cell's value.
				skip = depth
			case tok.Name.Space != nsText:
			case tok.Name.Local == "p" || tok.Name.Local == "h":
				if paragraphs++; paragraphs > 1 {
					o.text = append(o.text, ' ')
				}
				inText++
			case tok.Name.Local == "s" || tok.Name.Local == "tab" || tok.Name.Local == "line-break":
				o.text = appendSpace(o.text)
			}
		case xml.EndElement:
			if depth == skip {
				skip = 0
			} else if skip == 0 && tok.Name.Space == nsText && (tok.Name.Local == "p" || tok.Name.Local == "h") {
				inText--
			}
			depth--
		case xml.CharData:
			if skip == 0 && inText > 0 {
				o.text = appendCollapsed(o.text, tok)
				if len(o.text) > o.x.room() {
					return o.x.tooLarge()
				}
			}
		}
	}
	col := o.col
	o.col = min(o.col+columns, maxColumns)
	if se.Name.Local == "covered-table-cell" {
		return nil
	}
	valueType := attr(se, nsOffice, "value-type")
	text := string(o.text)
	if isBlankBytes(o.text) {
		text = fallbackValue(se, valueType)
	}
	num := valueType != "" && valueType != "string"
	for c := col; c < col+columns && c < maxColumns; c++ {
		if err := tab.cell(c, text, num); err != nil {
			return err
		}
	}
	return nil
}

// fallbackValue is a cell's value from its attributes, for a cell
// without text:p (some writers leave the displayed text out).
func fallbackValue(se xml.StartElement, valueType string) string {
	switch valueType {
	case "float", "percentage":
		return attr(se, nsOffice, "value")
	case "currency":
		return attr(se, nsOffice, "value") + " " + attr(se, nsOffice, "currency")
	case "date":
		return attr(se, nsOffice, "date-value")
	case "time":
		return attr(se, nsOffice, "time-value")
	case "boolean":
		return attr(se, nsOffice, "boolean-value")
	case "string":
		return attr(se, nsOffice, "string-value")
	}
	return ""
}

// count reads a repeat count: 1 when missing or invalid, at most limit.
func count(s string, limit int) int {
	if s == "" {
		return 1
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n < 1 {
		return 1
	}
	return int(min(n, uint64(limit)))
}

// appendCollapsed appends text, runs of ASCII white space as one space,
// so a cell of mostly white space cannot count against MaxTextBytes for
// more than it will write.
func appendCollapsed(dst, text []byte) []byte {
	for _, c := range text {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			dst = appendSpace(dst)
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}

func appendSpace(dst []byte) []byte {
	if len(dst) == 0 || dst[len(dst)-1] == ' ' {
		return dst
	}
	return append(dst, ' ')
}

func isBlankBytes(b []byte) bool {
	for _, c := range b {
		if c != ' ' {
			return false
		}
	}
	return true
}

// meta reads office:meta: the title and the document properties.
func (o *odsReader) meta(t *tokens) error {
	keys := map[xml.Name]string{
		{Space: nsDC, Local: "title"}:             extract.PropTitle,
		{Space: nsDC, Local: "creator"}:           extract.PropAuthor,
		{Space: nsMeta, Local: "initial-creator"}: extract.PropAuthor,
		{Space: nsDC, Local: "subject"}:           extract.PropSubject,
		{Space: nsDC, Local: "description"}:       extract.PropDescription,
		{Space: nsMeta, Local: "creation-date"}:   extract.PropCreated,
		{Space: nsDC, Local: "date"}:              extract.PropModified,
		{Space: nsMeta, Local: "keyword"}:         extract.PropKeywords,
	}
	found := map[string]string{}
	var keywords []string
	key, depth := "", 1
	var text []byte
	for depth > 0 {
		tok, err := t.next()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth++; depth == 2 {
				key, text = keys[tok.Name], text[:0]
			}
		case xml.EndElement:
			if depth--; depth == 1 && key != "" {
				switch _, dup := found[key]; {
				case key == extract.PropKeywords:
					keywords = append(keywords, string(text))
				case !dup || key == extract.PropAuthor && tok.Name.Space == nsDC:
					// dc:creator (who last saved) outranks meta:initial-creator.
					found[key] = string(text)
				}
				key = ""
			}
		case xml.CharData:
			if key != "" && len(text) < 4*extract.MaxPropBytes {
				text = append(text, tok...)
			}
		}
	}
	o.title = found[extract.PropTitle]
	p := extract.NewProps("document property")
	for _, k := range []string{extract.PropTitle, extract.PropAuthor, extract.PropSubject, extract.PropDescription} {
		p.Text(k, found[k])
	}
	p.List(extract.PropKeywords, keywords)
	p.Date(extract.PropCreated, found[extract.PropCreated])
	p.Date(extract.PropModified, found[extract.PropModified])
	o.props = p
	return nil
}

// each calls fn with every token up to the end of the element whose start
// was just read.
func (t *tokens) each(fn func(xml.Token)) error {
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
		fn(tok)
	}
	return nil
}

// attr is the value of the attribute space:local, or "".
func attr(se xml.StartElement, space, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local && a.Name.Space == space {
			return a.Value
		}
	}
	return ""
}
