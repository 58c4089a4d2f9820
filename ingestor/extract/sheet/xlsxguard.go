package sheet

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/strata-kb/strata/ingestor/extract"
)

// excelize's row reader hands over a whole row at once, each cell's value
// a new string: a shared string is copied into every cell that refers to
// it, and a number format's literal text into every cell it formats. A
// file of a few kilobytes (a megabyte string, sixteen thousand cells per
// row referring to it) would then take gigabytes before a single value
// could be counted against MaxTextBytes. The guard keeps each row's cost
// linear in the row's own XML:
//
//   - every part is scanned (scanPart) before a sheet is read: a row of
//     more than maxColumns cells is refused (excelize gathers into one
//     row every cell up to the next <row>, inside it or not), and so is
//     an inline string whose escapes would take excelize more than
//     maxCellCost steps;
//   - shared strings longer than longString are replaced, in excelize's
//     table, by a short placeholder; the row reader copies that, and
//     expand puts the string back one cell at a time, as it is written;
//   - number formats over maxFormatBytes (Excel allows 255 characters),
//     or with text placeholders (@) over maxTextFormatBytes or more than
//     maxFormatText of them, are read as General, with a warning: excelize
//     formats a value by appending to a string, token by token, each
//     placeholder a copy of the value;
//   - XML parts are read as UTF-8 whatever their declaration says, so the
//     bytes the scan sees are the ones the reader parses.
type guard struct {
	long map[int]string // shared string index -> the string its placeholder stands for
}

const (
	longString         = 64
	maxFormatBytes     = 512
	maxTextFormatBytes = 128
	maxFormatText      = 2
	maxCellCost        = 1 << 28
	// A placeholder is placeOpen, the string's index, placeClose: two
	// private-use characters no spreadsheet text is made of.
	placeOpen  = "\uE000"
	placeClose = "\uE001"
	// sstPart is where excelize keeps the shared strings, whatever the
	// case of the entry's name.
	sstPart = "xl/sharedStrings.xml"
	// strictNS is the Strict OOXML spreadsheet namespace, which excelize
	// reads as the transitional one.
	strictNS       = "http://purl.oclc.org/ooxml/spreadsheetml/main"
	transitionalNS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
)

// guard prepares f for reading; see the type.
func (x *run) guard(f *excelize.File) (*guard, error) {
	f.CharsetTranscoder(func(_ string, in io.Reader) (io.Reader, error) { return in, nil })
	if err := scanParts(f); err != nil {
		return nil, err
	}
	x.capFormats(f)
	g := &guard{long: map[int]string{}}
	if err := x.loadSST(f, g); err != nil {
		return nil, err
	}
	return g, nil
}

// scanParts refuses a workbook with a part that has a row of more than
// maxColumns cells, or an inline string excelize would take more than
// maxCellCost steps to unescape.
func scanParts(f *excelize.File) error {
	var wide, costly []string
	f.Pkg.Range(func(k, v any) bool {
		if b, ok := v.([]byte); ok {
			widest, cost := scanPart(b)
			if widest > maxColumns {
				wide = append(wide, fmt.Sprint(k))
			}
			if cost > maxCellCost {
				costly = append(costly, fmt.Sprint(k))
			}
		}
		return true
	})
	// Range's order is random; the first name in order makes the
	// message the same every time.
	if len(wide) > 0 {
		return fmt.Errorf("%w: %s has a row of more than %d cells", extract.ErrCorrupt, oneLine(slices.Min(wide), maxTitleBytes), maxColumns)
	}
	if len(costly) > 0 {
		return fmt.Errorf("%w: %s has an inline string too costly to unescape (escapes times bytes over %d)", extract.ErrCorrupt, oneLine(slices.Min(costly), maxTitleBytes), maxCellCost)
	}
	return nil
}

// scanPart reads b as excelize's row reader will and returns
//
//   - widest, the most <c> elements (cells, by local name) between two
//     <row> starts, or before the first: what the reader gathers into one
//     row;
//   - cost, the most that unescaping one inline string can take:
//     excelize undoes _xHHHH_ escapes by appending to a string, a copy of
//     the text so far for each, so a megabyte string of escapes takes
//     terabytes. The span from <is> to the next cell or row bounds the
//     string, and its '&' and "_x" bound the escapes (a character
//     reference can spell "_x"): their product bounds the cost. (Shared
//     strings are unescaped by excelize only when short; see loadSST.)
//
// Comments, CDATA sections and processing instructions are not markup,
// so what they quote cannot split a row; elsewhere in XML a '<' always
// starts markup. It reads bytes, not XML, so it costs little next to the
// parse.
func scanPart(b []byte) (widest int, cost int64) {
	cells := 0
	var inline []byte // from the last <is> on, while it is open
	closeInline := func(rest []byte) {
		if inline != nil {
			text := inline[:len(inline)-len(rest)]
			escapes := int64(bytes.Count(text, []byte("&")) + bytes.Count(text, []byte("_x")))
			cost, inline = max(cost, escapes*int64(len(text))), nil
		}
	}
	for {
		i := bytes.IndexByte(b, '<')
		if i < 0 {
			break
		}
		b = b[i+1:]
		switch {
		case bytes.HasPrefix(b, []byte("!--")):
			b = after(b, "-->")
		case bytes.HasPrefix(b, []byte("![CDATA[")):
			b = after(b, "]]>")
		case bytes.HasPrefix(b, []byte("?")):
			b = after(b, "?>")
		case bytes.HasPrefix(b, []byte("/")): // an end tag
		default:
			switch string(localName(b)) {
			case "row":
				closeInline(b)
				widest, cells = max(widest, cells), 0
			case "c":
				closeInline(b)
				cells++
			case "is":
				closeInline(b)
				inline = b
			}
		}
	}
	closeInline(nil)
	return max(widest, cells), cost
}

// after is b past the first end, or nothing.
func after(b []byte, end string) []byte {
	if i := bytes.Index(b, []byte(end)); i >= 0 {
		return b[i+len(end):]
	}
	return nil
}

// localName is the local part of the element name b starts with.
func localName(b []byte) []byte {
	end := bytes.IndexAny(b, " \t\r\n/>")
	if end < 0 {
		end = len(b)
	}
	name := b[:end]
	if i := bytes.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// capFormats reads number formats that are too long, or repeat the text
// too often, as General.
func (x *run) capFormats(f *excelize.File) {
	if f.Styles == nil || f.Styles.NumFmts == nil {
		return
	}
	capped := 0
	for _, nf := range f.Styles.NumFmts.NumFmt {
		if nf != nil && (!saneFormat(nf.FormatCode) || !saneFormat(nf.FormatCode16)) {
			nf.FormatCode, nf.FormatCode16 = "General", ""
			capped++
		}
	}
	if capped > 0 {
		x.warn("%d number formats read as General: longer than %d bytes, or than %d with text placeholders, or with more than %d of them",
			capped, maxFormatBytes, maxTextFormatBytes, maxFormatText)
	}
}

func saneFormat(code string) bool {
	text := strings.Count(code, "@")
	return len(code) <= maxFormatBytes && (text == 0 || len(code) <= maxTextFormatBytes && text <= maxFormatText)
}

// loadSST loads the shared strings into excelize's table itself (as
// excelize would on the first row read, the same decoding) and puts
// placeholders in the place of the long ones. The table's type is
// unexported, so it is made and stored through reflection.
func (x *run) loadSST(f *excelize.File, g *guard) error {
	v, ok := f.Pkg.Load(sstPart)
	if !ok {
		return nil
	}
	content, _ := v.([]byte)
	if bytes.Contains(content, []byte(strictNS)) {
		content = bytes.ReplaceAll(content, []byte(strictNS), []byte(transitionalNS))
	}
	field := reflect.ValueOf(f).Elem().FieldByName("SharedStrings")
	sst := reflect.New(field.Type().Elem())
	d := xml.NewDecoder(&ctxReader{r: bytes.NewReader(content), x: x})
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	if err := d.Decode(sst.Interface()); err != nil && err != io.EOF {
		return classify(err, "reading the shared strings")
	}
	field.Set(sst)
	for i := range f.SharedStrings.SI {
		si := &f.SharedStrings.SI[i]
		n := 0
		if si.T != nil {
			n += len(si.T.Val)
		}
		for _, r := range si.R {
			if r.T != nil {
				n += len(r.T.Val)
			}
		}
		if n <= longString {
			continue
		}
		var b strings.Builder
		if si.T != nil {
			b.WriteString(si.T.Val)
		}
		for _, r := range si.R {
			if r.T != nil {
				b.WriteString(r.T.Val)
			}
		}
		// Clean already, as it will be written, so expand can count it.
		g.long[i] = cleanCell(unescape(b.String()))
		place := placeOpen + strconv.Itoa(i) + placeClose
		if si.T != nil {
			si.T.Val, place = place, ""
		}
		for _, r := range si.R {
			if r.T != nil {
				r.T.Val, place = place, ""
			}
		}
	}
	return nil
}

// expand puts the long shared strings back in a value for their
// placeholders; false once the value is longer than room. (Text that
// spells a placeholder itself reads as that string: harmless, and
// counted like any other.)
func (g *guard) expand(v string, room int) (string, bool) {
	if len(g.long) == 0 || !strings.Contains(v, placeOpen) {
		return v, true
	}
	var b strings.Builder
	for {
		i := strings.Index(v, placeOpen)
		if i < 0 {
			break
		}
		j := strings.Index(v[i:], placeClose)
		if j < 0 {
			break
		}
		idx, err := strconv.Atoi(v[i+len(placeOpen) : i+j])
		s, ok := g.long[idx]
		if err != nil || !ok { // the file's own text, not a placeholder
			b.WriteString(v[:i+len(placeOpen)])
			v = v[i+len(placeOpen):]
			continue
		}
		if b.Len()+i+len(s) > room {
			return "", false
		}
		b.WriteString(v[:i])
		b.WriteString(s)
		v = v[i+j+len(placeClose):]
	}
	b.WriteString(v)
	return b.String(), true
}

// unescape undoes OOXML's _xHHHH_ escapes as excelize does (_x005F_ is
// "_", a surrogate is dropped), in one pass: excelize's own way is
// quadratic in the escapes of a string.
func unescape(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if r, ok := escapeAt(s[i:]); ok {
			if r < 0xd800 || r > 0xdfff {
				b.WriteRune(r)
			}
			i += len("_xHHHH_")
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// escapeAt reads an escape _xHHHH_ at the start of s.
func escapeAt(s string) (rune, bool) {
	if len(s) < len("_xHHHH_") || s[0] != '_' || s[1] != 'x' || s[6] != '_' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[2:6], 16, 32)
	return rune(n), err == nil
}

// ctxReader checks the context at every read, so one long decode stops
// when the extraction must.
type ctxReader struct {
	r io.Reader
	x *run
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.x.checkCtx(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
