package epub

import (
	"bytes"
)

// Chapters are XHTML written for a book, read by the HTML reader
// (htmltext), which parses by HTML's rules and leaves out a web page's
// furniture. prepareChapter rewrites the few tags where that loses a
// book's text, in one linear pass:
//
//   - A self-closing tag of a non-void element opens it in HTML. For most
//     elements that only nests what follows one level deeper, but the
//     raw-text elements take everything up to their end tag as their text,
//     so an XHTML <title/> or <script src="x.js"/>, common in books made by
//     converters, would swallow the chapter. They become an open and a
//     close tag.
//   - <aside>, <header> and <footer> are a web page's sidebar, banner and
//     footer, which htmltext drops; in a book they are text: EPUB 3
//     footnotes are <aside epub:type="footnote">, boxed text is an aside,
//     a chapter's title is often in a <header>. They become <div>s.

// rawText are the elements whose content the HTML parser does not parse.
var rawText = [][]byte{
	[]byte("title"), []byte("script"), []byte("style"), []byte("textarea"), []byte("iframe"),
	[]byte("noscript"), []byte("noembed"), []byte("noframes"), []byte("xmp"),
}

// asDiv are the elements read as <div>.
var asDiv = [][]byte{[]byte("aside"), []byte("header"), []byte("footer")}

// prepareChapter returns data with the rewrites above; data itself is
// not changed, and is returned as it is when nothing needs rewriting.
func prepareChapter(data []byte) []byte {
	var out []byte // nil until a tag is rewritten
	done := 0      // data[:done] is in out
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '<')
		if j < 0 {
			break
		}
		start := i + j
		i = start + 1
		closing := i < len(data) && data[i] == '/'
		if closing {
			i++
		}
		if name := tagName(data[i:], asDiv); name != nil {
			out = append(out, data[done:i]...)
			out = append(out, "div"...)
			i += len(name)
			done = i
			continue
		}
		name := tagName(data[i:], rawText)
		if name == nil || closing {
			continue
		}
		end, selfClosing := tagEnd(data, i+len(name))
		if end < 0 {
			break
		}
		i = end + 1
		if !selfClosing {
			continue
		}
		// data[end-1] is the '/' before '>'.
		out = append(out, data[done:end-1]...)
		out = append(out, '>', '<', '/')
		out = append(out, data[start+1:start+1+len(name)]...)
		out = append(out, '>')
		done = end + 1
	}
	if out == nil {
		return data
	}
	return append(out, data[done:]...)
}

// tagName returns the name of names b starts with (in any case), followed
// by white space, '/' or '>'; nil if none.
func tagName(b []byte, names [][]byte) []byte {
	for _, name := range names {
		if len(b) > len(name) && bytes.EqualFold(b[:len(name)], name) {
			switch b[len(name)] {
			case ' ', '\t', '\n', '\r', '\f', '/', '>':
				return name
			}
		}
	}
	return nil
}

// tagEnd finds the '>' that ends the tag whose attributes start at i,
// skipping quoted attribute values, and reports whether a '/' precedes
// it; -1 when the tag does not end.
func tagEnd(data []byte, i int) (int, bool) {
	var quote byte
	for ; i < len(data); i++ {
		c := data[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return i, data[i-1] == '/'
		}
	}
	return -1, false
}
