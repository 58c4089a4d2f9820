package htmltext

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/strata-kb/strata/ingestor/extract"
)

// checkEvery is how many nodes are visited between context checks: often
// enough to stop within milliseconds, rarely enough to cost nothing.
const checkEvery = 4096

// maxTitleBytes bounds the title, which no text limit covers otherwise.
const maxTitleBytes = 2048

// walker turns the tree of the main content into blocks. All traversals are
// iterative, so a deeply nested page cannot exhaust the goroutine stack.
type walker struct {
	ctx   context.Context
	b     *extract.Builder
	max   int   // lim.MaxTextBytes; 0 or less means no limit
	nodes int   // nodes visited, for the context checks
	err   error // the first error; the walk stops at it

	text     inlineText  // the paragraph or heading being collected
	headings []int       // levels of the open heading elements
	lists    []listState // open ul and ol elements, innermost last
	marker   string      // list marker waiting for the item's first block
	firstH1  string      // the first level-1 heading, the fallback title
}

// listState numbers the items of one list.
type listState struct {
	ordered bool
	next    int
}

// traverse visits root and its descendants in document order. enter returns
// whether to visit a node's children; leave, when not nil, is called after
// the children of every node enter descended into. It stops at w.err.
func (w *walker) traverse(root *html.Node, enter func(*html.Node) bool, leave func(*html.Node)) {
	n := root
	for {
		if w.tick(); w.err != nil {
			return
		}
		descend := enter(n)
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		if descend && leave != nil {
			leave(n)
		}
		// Climb to the next sibling, leaving the finished ancestors.
		for {
			if n == root || w.err != nil {
				return
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
			if leave != nil {
				leave(n)
			}
		}
	}
}

// tick counts a visited node and checks the context now and then.
func (w *walker) tick() {
	w.nodes++
	if w.nodes%checkEvery == 0 && w.err == nil {
		if err := w.ctx.Err(); err != nil {
			w.err = timeout(err)
		}
	}
}

// checkSize fails the walk when the text, with pending bytes not yet added,
// is over the limit.
func (w *walker) checkSize(pending int) {
	if w.max > 0 && w.err == nil && w.b.Len()+pending > w.max {
		w.err = fmt.Errorf("%w: html text exceeds %d bytes", extract.ErrTooLarge, w.max)
	}
}

// add appends a block and reports whether it was added (not blank).
func (w *walker) add(kind extract.Kind, level int, s string) bool {
	if w.err != nil {
		return false
	}
	i := w.b.Add(kind, level, 0, s)
	w.checkSize(0)
	return i >= 0
}

// title returns the text of the page's <title>, or "".
func (w *walker) title(doc *html.Node) string {
	var title *html.Node
	w.traverse(doc, func(n *html.Node) bool {
		if title != nil || n.Type == html.ElementNode && n.Namespace != "" {
			return false // <svg> has <title> elements of its own
		}
		if isElement(n, atom.Title) {
			title = n
			return false
		}
		return true
	}, nil)
	if title == nil {
		return ""
	}
	return extract.Truncate(oneLine(w.inline(title)), maxTitleBytes)
}

// mainContent picks the element holding the page's content: <main>, else
// the only <article>, else <body>. Several articles mean a listing page, of
// which the whole body is the content.
func (w *walker) mainContent(doc *html.Node) *html.Node {
	var main, body *html.Node
	var articles []*html.Node
	w.traverse(doc, func(n *html.Node) bool {
		switch {
		case n.Type == html.DocumentNode:
			return true
		case n.Type != html.ElementNode || skipped(n) || main != nil:
			return false
		case isElement(n, atom.Main):
			main = n
			return false
		case isElement(n, atom.Article):
			articles = append(articles, n) // articles within it are its comments
			return false
		case isElement(n, atom.Body) && body == nil:
			body = n
		}
		return true
	}, nil)
	switch {
	case main != nil:
		return main
	case len(articles) == 1:
		return articles[0]
	case body != nil:
		return body
	}
	return doc // a frameset page, which has no body
}

// walk adds the blocks of the content under root.
func (w *walker) walk(root *html.Node) {
	w.traverse(root, w.enter, w.leave)
	w.flush()
}

// enter handles the start of a node and returns whether to visit its
// children.
func (w *walker) enter(n *html.Node) bool {
	switch n.Type {
	case html.TextNode:
		w.text.addText(n.Data)
		w.checkSize(w.text.len())
		return false
	case html.DocumentNode:
		return true
	case html.ElementNode:
	default:
		return false // comments and doctypes
	}
	if skipped(n) {
		return false
	}
	if n.Namespace != "" {
		return true // MathML: only its text counts
	}
	if level := headingLevel(n.DataAtom); level > 0 {
		w.flush()
		w.headings = append(w.headings, level)
		return true
	}
	switch n.DataAtom {
	case atom.Br:
		w.text.lineBreak()
		return false
	case atom.Img:
		w.text.addImage(attr(n, "alt"))
		return false
	case atom.Pre:
		w.flush()
		w.add(extract.Code, 0, w.preText(n))
		return false
	case atom.Table:
		w.flush()
		w.addTable(n)
		return false
	case atom.Ul, atom.Ol, atom.Menu, atom.Dir:
		w.flush()
		w.lists = append(w.lists, newList(n))
		return true
	case atom.Li:
		w.flush()
		w.marker = w.nextMarker()
		return true
	}
	if isBlock(n.DataAtom) {
		w.flush()
	}
	return true
}

// leave handles the end of an element whose children were visited.
func (w *walker) leave(n *html.Node) {
	if n.Type != html.ElementNode || n.Namespace != "" {
		return
	}
	if headingLevel(n.DataAtom) > 0 {
		w.flush()
		w.headings = w.headings[:len(w.headings)-1]
		return
	}
	switch n.DataAtom {
	case atom.Ul, atom.Ol, atom.Menu, atom.Dir:
		w.flush()
		w.lists = w.lists[:len(w.lists)-1]
	case atom.Li:
		w.flush()
		w.marker = "" // an item without text has no block to mark
	default:
		if isBlock(n.DataAtom) {
			w.flush()
		}
	}
}

// flush adds the collected inline text as a paragraph, or a heading inside
// a heading element, with the pending list marker.
func (w *walker) flush() {
	s := w.text.take()
	if s == "" {
		return
	}
	kind, level := extract.Paragraph, 0
	if k := len(w.headings); k > 0 {
		kind, level = extract.Heading, w.headings[k-1]
	}
	text := w.marker + s
	w.marker = ""
	if w.add(kind, level, text) && level == 1 && w.firstH1 == "" {
		w.firstH1 = extract.Truncate(oneLine(s), maxTitleBytes)
	}
}

// newList starts the numbering of a list element.
func newList(n *html.Node) listState {
	l := listState{ordered: n.DataAtom == atom.Ol, next: 1}
	if start, err := strconv.Atoi(strings.TrimSpace(attr(n, "start"))); err == nil {
		l.next = start
	}
	return l
}

// nextMarker returns the marker of a new list item: "- " in unordered lists,
// its number in ordered ones.
func (w *walker) nextMarker() string {
	if len(w.lists) == 0 {
		return "- " // an <li> outside any list
	}
	l := &w.lists[len(w.lists)-1]
	if !l.ordered {
		return "- "
	}
	m := strconv.Itoa(l.next) + ". "
	l.next++
	return m
}

// preText returns the text of a <pre> element with its whitespace kept.
func (w *walker) preText(pre *html.Node) string {
	var sb strings.Builder
	w.traverse(pre, func(n *html.Node) bool {
		switch {
		case n.Type == html.TextNode:
			sb.WriteString(preformatted(n.Data))
			w.checkSize(sb.Len())
		case n.Type != html.ElementNode || n != pre && skipped(n):
			return false
		case isElement(n, atom.Br):
			sb.WriteByte('\n')
		}
		return true
	}, nil)
	return trimTrailingLines(sb.String())
}

// addTable adds a table as one block, a line per row with the cells
// separated by " | ", after a paragraph with its caption. Tables nested in
// cells become part of their cell's text.
func (w *walker) addTable(table *html.Node) {
	var rows []string
	size := 0
	w.traverse(table, func(n *html.Node) bool {
		switch {
		case n == table:
			return true
		case n.Type != html.ElementNode || skipped(n) || isElement(n, atom.Table):
			return false
		case isElement(n, atom.Caption):
			w.add(extract.Paragraph, 0, w.inline(n))
			return false
		case isElement(n, atom.Tr):
			if row := w.row(n); row != "" {
				rows = append(rows, row)
				size += len(row) + 1
				w.checkSize(size)
			}
			return false
		}
		return true // thead, tbody, tfoot
	}, nil)
	w.add(extract.Table, 0, strings.Join(rows, "\n"))
}

// row returns the cells of a table row joined by " | ", or "" when all of
// them are empty. The line is trimmed, so an empty first or last cell shows
// as a bare "|" rather than as whitespace around the block's text.
func (w *walker) row(tr *html.Node) string {
	var cells []string
	empty := true
	for c := tr.FirstChild; c != nil && w.err == nil; c = c.NextSibling {
		if !isElement(c, atom.Td) && !isElement(c, atom.Th) || skipped(c) {
			continue
		}
		cell := w.inline(c)
		if cell != "" {
			empty = false
		}
		cells = append(cells, cell)
	}
	if empty {
		return ""
	}
	return strings.TrimSpace(strings.Join(cells, " | "))
}

// inline returns the text of an element on one line, as for table cells:
// line breaks and nested blocks become spaces.
func (w *walker) inline(root *html.Node) string {
	var t inlineText
	w.traverse(root, func(n *html.Node) bool {
		switch {
		case n.Type == html.TextNode:
			t.addText(n.Data)
			w.checkSize(t.len())
			return false
		case n.Type != html.ElementNode || n != root && skipped(n):
			return false
		case isElement(n, atom.Img):
			t.addImage(attr(n, "alt"))
		case isElement(n, atom.Br) || n.Namespace == "" && isBlock(n.DataAtom):
			t.separate()
		}
		return true
	}, func(n *html.Node) {
		if n.Namespace == "" && isBlock(n.DataAtom) {
			t.separate()
		}
	})
	return t.take()
}

// skipped reports whether an element is left out with everything in it:
// invisible, interactive or page furniture rather than content.
func skipped(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	if n.Namespace == "svg" {
		return true
	}
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		if a.Key == "hidden" || a.Key == "aria-hidden" && strings.EqualFold(strings.TrimSpace(a.Val), "true") {
			return true
		}
	}
	if n.Namespace != "" {
		return false
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe,
		atom.Head, atom.Title, atom.Nav, atom.Aside, atom.Form, atom.Button,
		atom.Textarea, atom.Select, atom.Object, atom.Embed, atom.Canvas,
		atom.Audio, atom.Video, atom.Noembed, atom.Noframes, atom.Frameset:
		return true
	case atom.Header, atom.Footer:
		return isLandmark(n)
	}
	return false
}

// isLandmark reports whether a header or footer belongs to the page (site
// banner, copyright) rather than to an article or section within it, whose
// header usually holds its title. This is the ARIA rule for banner and
// contentinfo.
func isLandmark(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Namespace == "" {
			switch p.DataAtom {
			case atom.Article, atom.Aside, atom.Main, atom.Nav, atom.Section:
				return false
			}
		}
	}
	return true
}

// isBlock reports whether an HTML element starts a new block; the others are
// inline and add their text to the enclosing block.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog,
		atom.Dir, atom.Div, atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption,
		atom.Figure, atom.Footer, atom.Form, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Header, atom.Hgroup, atom.Hr,
		atom.Html, atom.Legend, atom.Li, atom.Listing, atom.Main, atom.Menu,
		atom.Nav, atom.Ol, atom.Optgroup, atom.Option, atom.P, atom.Plaintext,
		atom.Pre, atom.Search, atom.Section, atom.Summary, atom.Table,
		atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr,
		atom.Ul, atom.Xmp:
		return true
	}
	return false
}

// headingLevel returns 1 to 6 for h1 to h6, else 0.
func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// isElement reports whether n is the HTML element a.
func isElement(n *html.Node, a atom.Atom) bool {
	return n.Type == html.ElementNode && n.Namespace == "" && n.DataAtom == a
}

// attr returns the value of an attribute, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}
