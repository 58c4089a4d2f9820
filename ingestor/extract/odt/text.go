package odt

import (
	"strings"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// maxHeadingBytes bounds titles and headings: one line a reader scans.
	maxHeadingBytes = 256
	// maxLabelBytes bounds other one-line text (alternative text,
	// comment authors, names in messages).
	maxLabelBytes = 1024
)

// clean makes extracted text safe to index: invalid UTF-8 becomes U+FFFD
// and control characters other than tab and line feed are dropped.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, isDropped) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isDropped(r) {
			return -1
		}
		return r
	}, s)
}

func isDropped(r rune) bool { return r != '\t' && r != '\n' && unicode.IsControl(r) }

func isSpace(r rune) bool { return unicode.IsSpace(r) }

// oneLine makes s one line of clean text, at most max bytes: control and
// format characters (bidi overrides) dropped, white space runs made
// single spaces.
func oneLine(s string, max int) string {
	s = extract.Truncate(s, 4*max+64) // bound the work on a hostile value
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(extract.Truncate(strings.Join(strings.Fields(s), " "), max))
}
