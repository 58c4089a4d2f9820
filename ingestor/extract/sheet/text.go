package sheet

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
)

// cleanCell makes a cell's text one clean line: invalid UTF-8 becomes
// U+FFFD, control characters are dropped, and runs of white space (line
// breaks in a cell included) become one space, trimmed. A row is one line
// "Header: value, ...", so a value keeps to one too. Most cells are clean
// already and come back as they are, without an allocation.
func cleanCell(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < ' ' || c == 0x7f ||
			c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' ') {
			return cleanSlow(s)
		}
	}
	return s
}

func cleanSlow(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsControl(r):
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// oneLine is s as one clean line of at most max bytes, cut on a
// character boundary.
func oneLine(s string, max int) string {
	// Cleaning never more than triples a string (a bad byte becomes
	// U+FFFD), so a cut first bounds the work on a huge name.
	s = cleanCell(extract.Truncate(s, 4*max))
	return strings.TrimSpace(extract.Truncate(s, max))
}

// looksNumeric reports whether a displayed value is a number (or a date
// or time, as formats display them): at least one digit, and nothing but
// digits, signs, separators, currency signs and the percent sign. A header
// row has no such cell.
func looksNumeric(s string) bool {
	digit := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case strings.ContainsRune(" +-()/.,:%$€£¥\u00a0'", r):
		default:
			return false
		}
	}
	return digit
}

// appendColumn appends the letters of the 0-based column col: A..Z, AA...
func appendColumn(dst []byte, col int) []byte {
	var buf [8]byte
	i := len(buf)
	for col++; col > 0 && i > 0; col = (col - 1) / 26 {
		i--
		buf[i] = byte('A' + (col-1)%26)
	}
	return append(dst, buf[i:]...)
}
