// Package htmltext extracts the readable content of an HTML page: the
// headings, paragraphs, lists, code and tables of its main content, in
// reading order, without navigation, scripts and other page furniture.
package htmltext

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Extractor extracts HTML pages.
type Extractor struct{}

// landmarksOnly turns Readability off, for measuring it against the
// landmark rule alone (BenchmarkMainContent).
var landmarksOnly = false

var _ extract.Extractor = Extractor{}

// Extract parses data as an HTML page and returns its main content as blocks.
// Malformed markup is not an error: html.Parse repairs what it can, and a page
// with no readable text gives a document with no blocks.
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (doc *extract.Document, err error) {
	// html.Parse recovers its own panics; this one guards the walk, so that a
	// bug triggered by one hostile page fails that page, not the ingestor.
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("%w: html %q: internal error: %v", extract.ErrCorrupt, name, r)
		}
	}()
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
		defer cancel()
	}
	return extractHTML(ctx, data, lim)
}

// extractHTML does the work of Extract without its panic guard, so the fuzz
// test sees panics instead of errors.
func extractHTML(ctx context.Context, data []byte, lim extract.Limits) (*extract.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, timeout(err)
	}
	root, flattened, err := parse(ctx, decode(data))
	if err != nil {
		return nil, err
	}
	b := extract.NewBuilder("html").Within(lim)
	if flattened {
		b.Warn("markup nested too deeply for the HTML parser; deep elements were flattened into their text")
	}
	w := &walker{ctx: ctx, b: b, max: lim.MaxTextBytes}
	title := w.title(root)
	// Before Readability, which moves nodes about.
	meta, warnings := w.metadataOf(root, title)
	b.SetMetadata(meta)
	for _, warning := range warnings {
		b.Warn(warning)
	}
	content := w.mainContent(root)
	if !landmarksOnly {
		if r := readableContent(root, content); r != nil {
			// Readability moves the page's title heading into its metadata;
			// it stays the first heading here, so sections keep their parent.
			if h1 := firstHeading(content); h1 != nil && !strings.Contains(nodeText(r), nodeText(h1)) {
				w.walk(h1)
			}
			content = r
		}
	}
	w.walk(content)
	if w.err != nil {
		return nil, w.err
	}
	if title == "" {
		title = w.firstH1
	}
	b.SetTitle(title)
	return b.Finish()
}

// timeout wraps a context error as the extractor's timeout error.
func timeout(err error) error {
	return fmt.Errorf("%w: html: %v", extract.ErrTimeout, err)
}

// Sniff reports whether data looks like an HTML page: after an optional
// UTF-8 byte order mark and whitespace it starts with a doctype, <html>,
// <head> or <body> tag, or it has an <html or <body tag in its first kilobyte.
func Sniff(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	start := bytes.TrimLeft(data, " \t\r\n\f")
	for _, prefix := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if len(start) >= len(prefix) && bytes.EqualFold(start[:len(prefix)], []byte(prefix)) {
			return true
		}
	}
	if len(data) > 1024 {
		data = data[:1024]
	}
	lower := bytes.ToLower(data)
	return bytes.Contains(lower, []byte("<html")) || bytes.Contains(lower, []byte("<body"))
}

// decode converts the page to valid UTF-8. A byte order mark decides the
// encoding, then a <meta> declaration, then the bytes themselves.
func decode(data []byte) string {
	enc, name, certain := charset.DetermineEncoding(data, "text/html")
	switch {
	case certain: // byte order mark
	case name == "utf-8":
		return strings.ToValidUTF8(string(data), "\uFFFD")
	case name == "windows-1252" && looksUTF8(data):
		// windows-1252 is both what latin1 declarations map to and the
		// fallback when nothing is declared or the first kilobyte is plain
		// ASCII. Legacy text hardly ever forms valid UTF-8 sequences by
		// accident, so a page full of them is UTF-8 whatever it says.
		return strings.ToValidUTF8(string(data), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		// Legacy decoders substitute bad input rather than fail; this is a
		// last resort that keeps at least the ASCII text.
		out = data
	}
	s := strings.TrimPrefix(string(out), "\uFEFF")
	return strings.ToValidUTF8(s, "\uFFFD")
}

// looksUTF8 reports whether data has multi-byte UTF-8 sequences and no more
// invalid bytes than valid sequences, which tells a UTF-8 page with a few
// damaged bytes from a legacy 8-bit page.
func looksUTF8(data []byte) bool {
	valid, invalid := 0, 0
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			invalid++
		} else {
			valid++
		}
		i += size
	}
	return valid > 0 && valid >= invalid
}

// parse builds the document tree. It reports whether the markup had to be
// flattened to parse.
func parse(ctx context.Context, s string) (*html.Node, bool, error) {
	doc, err := html.Parse(strings.NewReader(s))
	if err == nil {
		return doc, false, nil
	}
	// html.Parse refuses pages with more than 512 open elements. Retry with
	// deep elements flattened into their text. The token stream only
	// approximates the parser's element stack (implied tbody and tr
	// elements, reopened formatting elements), hence the margin and the
	// smaller retries; depth 0 keeps only text and void elements, which
	// always parses.
	for _, depth := range []int{100, 20, 0} {
		if err := ctx.Err(); err != nil {
			return nil, false, timeout(err)
		}
		if doc, err := html.Parse(strings.NewReader(flatten(s, depth))); err == nil {
			return doc, true, nil
		}
	}
	return nil, false, fmt.Errorf("%w: parse html: %v", extract.ErrCorrupt, err)
}
