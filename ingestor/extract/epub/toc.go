package epub

import (
	"bytes"
	"encoding/xml"
	"strings"

	"golang.org/x/net/html"
)

// Chapter titles come from the book's table of contents: the EPUB 3
// navigation document (the manifest item with the "nav" property), else
// the EPUB 2 NCX (the spine's toc). Each maps the chapter files it links
// to the title of their first entry; entries that point into a file
// (chapter.xhtml#section-2) are its sections, and the first entry of a
// file, in reading order, is the chapter itself.

// maxTitles bounds the entries kept from a table of contents.
const maxTitles = maxManifest

// titles maps zip names of chapters to their titles in the table of
// contents.
type titles map[string]string

func (ts titles) add(name, title string) {
	title = oneLine(title, maxHeadingBytes)
	if name == "" || title == "" || len(ts) >= maxTitles {
		return
	}
	if _, dup := ts[name]; !dup {
		ts[name] = title
	}
}

// navTitles reads the navigation document at name: the links of its
// <nav epub:type="toc">, else of its first <nav>.
func navTitles(data []byte, name string, into titles) error {
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return err
	}
	var navs []*html.Node
	walkHTML(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.Data == "nav" {
			navs = append(navs, n)
			return false
		}
		return true
	})
	if len(navs) == 0 {
		return nil
	}
	toc := navs[0]
	for _, n := range navs {
		if hasToken(htmlAttr(n, "epub:type"), "toc") {
			toc = n
			break
		}
	}
	walkHTML(toc, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n.Data != "a" {
			return true
		}
		if target, ok := resolve(name, htmlAttr(n, "href")); ok {
			into.add(target, textOf(n))
		}
		return false
	})
	return nil
}

// ncxTitles reads an NCX at name: each navPoint's label and content src,
// in document order (a navPoint's label precedes its children). It
// returns the NCX's docTitle too.
func ncxTitles(t *tokens, name string, into titles) (docTitle string, err error) {
	var (
		labels  []string // per open navPoint, its label
		inLabel bool     // inside a navLabel's or docTitle's <text>
		inDoc   bool     // inside docTitle
		text    strings.Builder
	)
	err = t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "navPoint":
				labels = append(labels, "")
			case "docTitle":
				inDoc = true
			case "text":
				inLabel = true
				text.Reset()
			case "content":
				if n := len(labels); n > 0 {
					if target, ok := resolve(name, attr(tok, "src")); ok {
						into.add(target, labels[n-1])
					}
				}
			}
		case xml.CharData:
			if inLabel && text.Len() < maxMetaBytes {
				text.Write(tok)
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "navPoint":
				if n := len(labels); n > 0 {
					labels = labels[:n-1]
				}
			case "docTitle":
				inDoc = false
			case "text":
				inLabel = false
				switch n := len(labels); {
				case inDoc && docTitle == "":
					docTitle = text.String()
				case n > 0 && labels[n-1] == "":
					labels[n-1] = text.String()
				}
			}
		}
		return nil
	})
	return docTitle, err
}

// walkHTML visits n and its descendants in document order while visit
// returns true for the node's children to be seen.
func walkHTML(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkHTML(c, visit)
	}
}

// textOf is the text under n.
func textOf(n *html.Node) string {
	var b strings.Builder
	walkHTML(n, func(n *html.Node) bool {
		if n.Type == html.TextNode && b.Len() < maxMetaBytes {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		return true
	})
	return b.String()
}

func htmlAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasToken reports whether a space-separated list holds tok.
func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if f == tok {
			return true
		}
	}
	return false
}
