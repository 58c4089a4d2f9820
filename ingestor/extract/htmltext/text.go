package htmltext

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// inlineText collects the text of one block the way a browser renders it:
// runs of whitespace become one space, and only <br> starts a new line.
type inlineText struct {
	buf   []byte
	space bool // whitespace seen since the last character written
}

// addText appends the text of a text node.
func (t *inlineText) addText(s string) {
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			t.space = true
		case dropped(r):
		default:
			// Whitespace is written only when text follows it, so the
			// collected text never starts or ends with a space.
			if t.space && len(t.buf) > 0 && t.buf[len(t.buf)-1] != '\n' {
				t.buf = append(t.buf, ' ')
			}
			t.space = false
			t.buf = utf8.AppendRune(t.buf, r)
		}
	}
}

// lineBreak starts a new line, as <br> does. At most one empty line is kept,
// because the document text uses blank lines between blocks.
func (t *inlineText) lineBreak() {
	if !bytes.HasSuffix(t.buf, []byte("\n\n")) {
		t.buf = append(t.buf, '\n')
	}
	t.space = false
}

// separate makes sure the next text is not glued to the previous text, for
// elements such as images and table cells that render apart.
func (t *inlineText) separate() { t.space = true }

// addImage appends the alternative text of an image.
func (t *inlineText) addImage(alt string) {
	alt = strings.Join(strings.Fields(alt), " ")
	if alt == "" {
		return
	}
	t.separate()
	t.addText("[image: " + alt + "]")
	t.separate()
}

// len is the length in bytes of the text collected so far.
func (t *inlineText) len() int { return len(t.buf) }

// take returns the collected text and starts over.
func (t *inlineText) take() string {
	s := strings.Trim(string(t.buf), "\n")
	t.buf, t.space = t.buf[:0], false
	return s
}

// dropped reports whether r is left out of the text: control characters
// (tab and newline are whitespace and never get here) and stray byte order
// marks, which are invisible and only confuse what reads the text later.
func dropped(r rune) bool {
	return unicode.IsControl(r) || r == '\uFEFF'
}

// preformatted keeps the text of a <pre> element exactly, except for control
// characters other than tab and newline.
func preformatted(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && r != '\n' && dropped(r) {
			return -1
		}
		return r
	}, s)
}

// trimTrailingLines removes the newlines and whitespace-only lines at the end
// of preformatted text; they are invisible, while indentation is not.
func trimTrailingLines(s string) string {
	for {
		s = strings.TrimRight(s, "\n")
		i := strings.LastIndexByte(s, '\n')
		if strings.Trim(s[i+1:], " \t") != "" {
			return s
		}
		if i < 0 {
			return ""
		}
		s = s[:i]
	}
}

// oneLine collapses all whitespace, newlines included, for titles.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
