package sheet

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
)

// CSV extracts comma-, semicolon- and tab-separated values (.csv, .tsv)
// as one sheet without pages. It implements extract.Extractor;
// Document.Format is "csv".
type CSV struct{}

var _ extract.Extractor = CSV{}

// sniffBytes is how much of a file the delimiter is guessed from.
const sniffBytes = 64 << 10

// Extract reads the records as encoding/csv does (quotes taken loosely,
// rows of any length; scanCSV) and writes them as a sheet's rows: one Table block each,
// "Header: value" after a header row. The text is UTF-8 (a byte-order
// mark is dropped), UTF-16 with a byte-order mark, or else read as
// Windows-1252, what Excel writes CSV in by default. Zero fields of lim
// take their values from extract.DefaultLimits.
func (CSV) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	x := newRun(ctx, "csv", lim)
	doc, err := x.csv(data, name)
	if err != nil {
		return nil, failed("csv", name, err)
	}
	return doc, nil
}

func (x *run) csv(data []byte, name string) (*extract.Document, error) {
	if err := x.checkCtx(); err != nil {
		return nil, err
	}
	text, err := decodeText(data)
	if err != nil {
		return nil, err
	}
	comma, text := delimiter(name, text)
	t := newTable(x, 0)
	// A record wider than any sheet (a file that lost its line ends, old
	// Mac CSV's lone \r) goes on in rows of maxColumns fields, so nothing
	// of it is lost.
	col, wide, wrapped := 0, 0, false
	err = scanCSV(text, comma, func(v string) error {
		if col == maxColumns {
			if err := t.endRow(1); err != nil {
				return err
			}
			col, wrapped = 0, true
		}
		col++
		return t.cell(col-1, v, looksNumeric(v))
	}, func() error {
		if wrapped {
			wide++
		}
		col, wrapped = 0, false
		return t.endRow(1)
	})
	if err != nil {
		return nil, err
	}
	if err := t.end(); err != nil {
		return nil, err
	}
	if wide > 0 {
		x.warn("%d records of more than %d fields went on in rows of %d", wide, maxColumns, maxColumns)
	}
	return x.doc()
}

// decodeText makes data UTF-8 text. A NUL byte outside UTF-16 means the
// file is binary, not text.
func decodeText(data []byte) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		data = data[3:]
	case bytes.HasPrefix(data, []byte("\xff\xfe")):
		return decodeUTF16(data[2:], func(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }), nil
	case bytes.HasPrefix(data, []byte("\xfe\xff")):
		return decodeUTF16(data[2:], func(b []byte) uint16 { return uint16(b[1]) | uint16(b[0])<<8 }), nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", fmt.Errorf("%w: binary content (a NUL byte), not text", extract.ErrCorrupt)
	}
	if utf8.Valid(data) {
		return string(data), nil
	}
	return decodeCP1252(data), nil
}

func decodeUTF16(data []byte, unit func([]byte) uint16) string {
	units := make([]uint16, len(data)/2)
	for i := range units {
		units[i] = unit(data[2*i:])
	}
	return string(utf16.Decode(units))
}

// cp1252 maps the bytes 0x80-0x9f of Windows-1252; the rest of the high
// half is Latin-1. Undefined bytes become U+FFFD.
var cp1252 = [32]rune{
	'€', '\ufffd', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\ufffd', 'Ž', '\ufffd',
	'\ufffd', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\ufffd', 'ž', 'Ÿ',
}

func decodeCP1252(data []byte) string {
	var b strings.Builder
	b.Grow(len(data) + len(data)/2)
	for _, c := range data {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xa0:
			b.WriteRune(cp1252[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// delimiter chooses the separator: Excel's "sep=X" first line (dropped
// from the text), a tab for .tsv and .tab files, else the one of comma,
// semicolon and tab that splits the first lines most consistently.
func delimiter(name, text string) (rune, string) {
	line, rest, _ := strings.Cut(text, "\n")
	if d, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), "sep="); ok && utf8.RuneCountInString(d) == 1 {
		if r, _ := utf8.DecodeRuneInString(d); validComma(r) {
			return r, rest
		}
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".tsv", ".tab":
		return '\t', text
	}
	return sniff(text[:min(len(text), sniffBytes)], len(text) <= sniffBytes), text
}

// validComma: what encoding/csv accepts as a separator.
func validComma(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

// sniff counts each candidate outside quotes on every line of sample
// (the last, when the sample is not the whole text, may be cut and is
// left out). A candidate found the same number of times on every line
// wins, the most often found first; without one, the most frequent on
// the first line; without any, the comma.
func sniff(sample string, whole bool) rune {
	candidates := []rune{',', ';', '\t'}
	var lines [][3]int
	var cur [3]int
	quoted, used := false, false
	for _, r := range sample {
		switch {
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '\n':
			if used {
				lines = append(lines, cur)
			}
			cur, used = [3]int{}, false
			continue
		case r == '\r' || r == ' ':
			continue
		default:
			for i, c := range candidates {
				if r == c {
					cur[i]++
				}
			}
		}
		used = true
	}
	if used && whole {
		lines = append(lines, cur)
	}
	if len(lines) == 0 {
		return ','
	}
	best, bestN := -1, 0
	for i := range candidates {
		n := lines[0][i]
		consistent := n > 0
		for _, l := range lines[1:] {
			consistent = consistent && l[i] == n
		}
		if consistent && n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		for i := range candidates {
			if n := lines[0][i]; n > bestN {
				best, bestN = i, n
			}
		}
	}
	if best < 0 {
		return ','
	}
	return candidates[best]
}
