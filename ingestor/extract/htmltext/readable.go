package htmltext

import (
	"strings"

	"codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Main content: which part of a page is its content is Mozilla Readability's
// call (codeberg.org/readeck/go-readability, the Go port of Firefox's Reader
// View), measured against the landmark rule below on Readability's own test
// pages (BenchmarkMainContent, docs/bench/html.md). Readability scores
// paragraphs and their containers and drops navigation, sidebars, share bars,
// comments and footers even where the page marks none of them. Pages it does
// not call articles (a docs index, a short page, a table of figures) keep the
// landmark rule, which never drops text outside navigation and footers.

// readableContent returns Readability's main content of doc, or nil when it
// finds no article or one with far less text than the landmark rule keeps
// beside it (Readability then threw away content, not clutter).
func readableContent(doc, landmark *html.Node) *html.Node {
	// Readability takes no context: pages beyond maxReadableNodes keep the
	// landmark rule, so the extractor's time limit still holds.
	if countNodes(doc, maxReadableNodes) > maxReadableNodes {
		return nil
	}
	p := readability.NewParser()
	if !p.CheckDocument(doc) {
		return nil
	}
	article, err := p.ParseDocument(doc, nil)
	if err != nil || article.Node == nil {
		return nil
	}
	kept, all := textLen(article.Node), textLen(landmark)
	if kept < 200 || kept*5 < all {
		return nil
	}
	return article.Node
}

// maxReadableNodes: about 1.5 MB of ordinary markup, which Readability
// reads in well under a second here.
const maxReadableNodes = 100_000

// countNodes counts the nodes under n, stopping past limit.
func countNodes(n *html.Node, limit int) int {
	count := 0
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		for c := n.FirstChild; c != nil && count <= limit; c = c.NextSibling {
			count++
			visit(c)
		}
	}
	visit(n)
	return count
}

// textLen counts the non-space bytes of the text under n.
func textLen(n *html.Node) int {
	total := 0
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.TextNode {
			total += len(strings.Join(strings.Fields(n.Data), ""))
		}
		if n.Type == html.ElementNode && skipped(n) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(n)
	return total
}

// firstHeading is the first h1 under n outside skipped elements, or nil.
func firstHeading(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && skipped(n) {
		return nil
	}
	if isElement(n, atom.H1) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if h := firstHeading(c); h != nil {
			return h
		}
	}
	return nil
}

// nodeText is the text under n with runs of space as one space.
func nodeText(n *html.Node) string {
	var b strings.Builder
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
