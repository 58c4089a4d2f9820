package slides

import (
	"strings"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// maxHeadingBytes bounds a heading's text (a slide title).
	maxHeadingBytes = 256
	// maxLabelBytes bounds one-line labels (alt text, the file name in
	// descriptions) so a hostile attribute cannot bloat every block.
	maxLabelBytes = 1024
)

// clean makes extracted text safe to index: invalid UTF-8 becomes U+FFFD
// and control characters other than tab and newline are dropped (they
// only confuse tokenizers and terminals).
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' {
			return r
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// oneLine cleans s, collapses all white space to single spaces and cuts
// it to at most max bytes on a rune boundary.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	if len(s) <= max {
		return s
	}
	return strings.TrimSpace(extract.Truncate(s, max))
}
