package htmltext

import (
	"strings"

	"golang.org/x/net/html"
)

// flatten rewrites s so that no element nests deeper than maxDepth, as far as
// the tokens tell: the start and end tags of deeper elements are dropped and
// their text kept, so deep content ends up in its nearest kept ancestor
// instead of being lost.
func flatten(s string, maxDepth int) string {
	z := html.NewTokenizer(strings.NewReader(s))
	var out strings.Builder
	out.Grow(len(s))
	var open []string           // elements open at this point, innermost last
	dropped := map[string]int{} // end tags still to drop, by element name
	dropText := false           // inside a dropped <script> or the like
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			// io.EOF at the end; the tokenizer has no other errors for an
			// in-memory reader without a buffer limit.
			return out.String()
		case html.StartTagToken:
			name := tagName(z)
			if isVoid(name) {
				break
			}
			if n := len(open); n > 0 && open[n-1] == name && closesItself(name) {
				open = open[:n-1] // <p>a<p>b: the second <p> closes the first
			}
			if len(open) >= maxDepth {
				dropped[name]++
				// The tokenizer still reads the content of <script> and
				// similar elements as raw text; without its tag it would
				// turn into visible text.
				dropText = isRawText(name)
				continue
			}
			open = append(open, name)
		case html.EndTagToken:
			name := tagName(z)
			if dropped[name] > 0 {
				// Dropped elements are deeper than every open one, so this
				// end tag belongs to a dropped element.
				dropped[name]--
				dropText = false
				continue
			}
			for i := len(open) - 1; i >= 0; i-- {
				if open[i] == name {
					open = open[:i]
					break
				}
			}
		case html.SelfClosingTagToken:
			if maxDepth == 0 && !isVoid(tagName(z)) {
				continue
			}
		case html.TextToken:
			if dropText {
				continue
			}
		}
		out.Write(z.Raw())
	}
}

// tagName returns the lower-case name of the current tag token.
func tagName(z *html.Tokenizer) string {
	name, _ := z.TagName()
	return string(name)
}

// isVoid reports whether elements named name never have content, so never
// nest.
func isVoid(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link",
		"meta", "param", "source", "track", "wbr":
		return true
	}
	return false
}

// closesItself reports whether a start tag of name implicitly ends an open
// element of the same name; legacy pages rarely close these.
func closesItself(name string) bool {
	switch name {
	case "p", "li", "dt", "dd", "tr", "td", "th", "option":
		return true
	}
	return false
}

// isRawText reports whether the tokenizer reads the content of elements named
// name as text rather than markup.
func isRawText(name string) bool {
	switch name {
	case "script", "style", "textarea", "title", "xmp", "iframe", "noembed",
		"noframes", "noscript", "plaintext":
		return true
	}
	return false
}
