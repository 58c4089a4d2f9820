package epub

import (
	"strings"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

// maxHeadingBytes bounds titles and headings: one line a reader scans.
const maxHeadingBytes = 256

// oneLine makes s one line of clean text, at most max bytes: invalid
// UTF-8 replaced, control and format characters (bidi overrides) dropped,
// white space runs made single spaces.
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
