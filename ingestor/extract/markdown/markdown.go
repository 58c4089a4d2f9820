// Package markdown extracts Markdown structure without rewriting the text:
// the document's Text is the file itself, so every block's Start and End are
// byte offsets into the source.
//
// The block structure is CommonMark with GFM tables, parsed by goldmark with
// block parsers only: inline markup does not change where blocks start and
// end. goldmark records where each block opens and which source
// lines it holds; a block here spans those whole lines (list and quote
// markers included) up to its last non-space byte, so blocks never overlap
// and each is an exact slice of the file.
//
//   - Headings: ATX (`# Title`) and setext (`Title` over `===` or `---`)
//     at the top level, with their level. A setext heading's block is its
//     text lines; the underline is markup and lies between blocks, like a
//     blank line. Headings inside lists and block quotes stay paragraphs:
//     they belong to that container, not to the document's outline.
//   - Fenced code (with its fences), indented code and HTML blocks are one
//     Code block each; GFM tables one Table block. The chunker keeps such
//     blocks whole up to twice its target, so they are not cut below that.
//     HTML is Code because it is markup source, kept whole like code.
//   - Paragraphs and the text of list items are Paragraph blocks; link
//     reference definitions stay paragraph text (see newParser); thematic
//     breaks are markup and make no block.
//   - Front matter (YAML between `---` lines or TOML between `+++` lines at
//     the very start, read by go.abhg.dev/goldmark/frontmatter) becomes
//     Document.Metadata, typed (numbers, dates, lists; see flatten), and
//     its `title` key the Document.Title. It is also
//     one Code block, delimiters included, so its values (description,
//     tags) stay searchable and a file with only front matter is not empty;
//     it is never a heading and never cut below the code limit. Front
//     matter that does not decode to a mapping is read as ordinary Markdown
//     (a thematic break, then text), with a warning.
//
// Without a `title` key the title is the first top-level level-1 heading.
// Nesting deeper than any real document is flattened for the parser only
// (see boundNesting), which keeps parsing linear in the file's size.
package markdown

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	gtext "github.com/yuin/goldmark/text"
	"go.abhg.dev/goldmark/frontmatter"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// Extractor extracts Markdown.
type Extractor struct{}

// Extract returns the file's blocks, title and front matter; data must be
// valid UTF-8.
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if err := extract.CheckText(data, lim); err != nil {
		return nil, fmt.Errorf("markdown %s: %w", name, err)
	}
	text := string(data)
	p := parse(text, lim)
	if p.err != nil {
		return nil, fmt.Errorf("markdown %s: %w", name, p.err)
	}
	doc := &extract.Document{Format: "markdown", Text: text, Blocks: p.blocks, Title: p.title, Metadata: p.meta, Warnings: p.warnings}
	if t, ok := p.meta["title"]; ok {
		if t := strings.Join(strings.Fields(t.String()), " "); t != "" {
			doc.Title = t
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: markdown %s: %v", extract.ErrTimeout, name, err)
	}
	return doc, nil
}

// HeadingTitle returns the text of a heading block: it strips the #s and
// closing #s of an ATX heading line and joins the lines of a setext
// heading's text.
func HeadingTitle(line string) string {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "#") {
		t = strings.TrimLeft(t, "#")
		t = strings.TrimRight(strings.TrimSpace(t), "#")
	}
	return strings.Join(strings.Fields(t), " ")
}

// Blocks splits Markdown text into blocks with byte spans into text, front
// matter included as the first block (see the package comment).
func Blocks(text string) []extract.Block { return parse(text, extract.Limits{}).blocks }

// Two parsers: the second reads front matter that did not decode as plain
// Markdown. Both hold no per-document state and are safe for concurrent use.
var (
	withFrontMatter = newParser(&frontmatter.Extender{})
	plain           = newParser()
)

// newParser builds a block-only parser. It leaves out goldmark's link
// reference transformer: that is quadratic in the definitions of one
// paragraph (1 MB of them took 17 s), and keeping definitions as paragraph
// text keeps their URLs searchable; links are not resolved here anyway.
func newParser(exts ...goldmark.Extender) parser.Parser {
	p := parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...))
	return goldmark.New(goldmark.WithParser(p), goldmark.WithExtensions(append(exts, extension.Table)...)).Parser()
}

type parsed struct {
	blocks   []extract.Block
	title    string            // the first top-level level-1 heading
	meta     metadata.Metadata // front matter, nil without
	warnings []string
	err      error // ErrTooLarge: text and blocks over lim.MaxFileBytes
}

func parse(text string, lim extract.Limits) parsed {
	src := []byte(text) // what the parser reads; see boundNesting
	orig := src
	if boundNesting(src) {
		orig = []byte(text)
	}
	pc := parser.NewContext()
	root := withFrontMatter.Parse(gtext.NewReader(src), parser.WithContext(pc))
	var out parsed
	fmEnd := -1
	if fm := frontmatter.Get(pc); fm != nil {
		// The extension reads an unclosed front matter to the end of the
		// file; that is a thematic break and text, not metadata.
		end := frontMatterEnd(text)
		meta, warnings, err := decodeFrontMatter(fm)
		switch {
		case end < 0:
			root = plain.Parse(gtext.NewReader(src))
		case err != nil:
			// One line: callers join warnings with "; ".
			out.warnings = []string{strings.ToValidUTF8(strings.Join(strings.Fields(fmt.Sprintf("front matter not read, kept as text: %v", err)), " "), "\uFFFD")}
			root = plain.Parse(gtext.NewReader(src))
		default:
			out.meta, out.warnings, fmEnd = meta, warnings, end
		}
	}
	w := walker{src: orig, lim: lim, held: int64(len(text))}
	if fmEnd > 0 {
		w.add(extract.Block{Kind: extract.Code, Start: 0, End: fmEnd})
	}
	w.collect(root)
	out.blocks, out.err = w.blocks()
	out.title = w.title
	return out
}

// leaf is a block found in the tree, before its end is settled.
type leaf struct {
	kind  extract.Kind
	level int
	start int    // start of its first line
	last  int    // an offset on its last line
	end   int    // the exact end when known up front (front matter), else 0
	fence string // a fenced code block's opening fence
	skip  bool   // a boundary only: thematic break, start of a list or quote
}

type walker struct {
	src    []byte // the original text; the parser's copy has the same offsets
	leaves []leaf
	title  string
	lim    extract.Limits // MaxFileBytes bounds text and blocks held
	held   int64
}

func (w *walker) add(b extract.Block) {
	w.leaves = append(w.leaves, leaf{kind: b.Kind, start: b.Start, end: b.End})
}

// collect appends the leaf blocks under n in document order.
func (w *walker) collect(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		pos := firstPos(c)
		if pos < 0 {
			continue
		}
		l := leaf{kind: extract.Paragraph, start: w.lineStart(pos), last: w.lastPos(c, pos)}
		switch c := c.(type) {
		case *ast.List, *ast.ListItem, *ast.Blockquote:
			l.skip = true // its start bounds the block before it
			w.leaves = append(w.leaves, l)
			w.collect(c)
			continue
		case *ast.Heading:
			title := strings.Join(strings.Fields(string(c.Lines().Value(w.src))), " ")
			switch {
			case title == "": // "#" alone: nothing to name a section by
				l.skip = true
			case n.Kind() == ast.KindDocument:
				l.kind, l.level = extract.Heading, c.Level
				if c.Level == 1 && w.title == "" {
					w.title = title
				}
			}
		case *ast.FencedCodeBlock:
			l.kind = extract.Code
			l.fence = fence(w.src, pos)
		case *ast.CodeBlock, *ast.HTMLBlock:
			l.kind = extract.Code
		case *east.Table:
			l.kind = extract.Table
		case *ast.ThematicBreak:
			l.skip = true
		}
		w.leaves = append(w.leaves, l)
	}
}

// blocks settles each leaf's end: the end of its last line, or of a fenced
// code block's closing fence, without trailing space, and never past the
// next block's start.
func (w *walker) blocks() ([]extract.Block, error) {
	if err := extract.Hold(&w.held, 0, w.lim); err != nil {
		return nil, err
	}
	// The tree is not always in source order: after "A\n0\n|-\n-" the
	// setext heading "A" follows the table cut from its paragraph.
	slices.SortStableFunc(w.leaves, func(a, b leaf) int { return a.start - b.start })
	var out []extract.Block
	for i, l := range w.leaves {
		if l.skip {
			continue
		}
		limit := len(w.src)
		for _, next := range w.leaves[i+1:] {
			if next.start > l.start {
				limit = next.start
				break
			}
		}
		end := l.end
		if end == 0 {
			end = w.lineEnd(max(l.last, l.start))
			if l.fence != "" && end < limit {
				if ls := end + 1; ls < limit && isClosingFence(w.lineAt(ls), l.fence) {
					end = w.lineEnd(ls)
				}
			}
		}
		end = min(end, limit)
		for end > l.start && isSpace(w.src[end-1]) {
			end--
		}
		// Guard the invariants the chunker relies on even if a block
		// started inside the previous one.
		start := l.start
		if n := len(out); n > 0 && start < out[n-1].End {
			start = out[n-1].End
		}
		if end > start {
			if err := extract.Hold(&w.held, extract.BlockBytes, w.lim); err != nil {
				return nil, err
			}
			out = append(out, extract.Block{Kind: l.kind, Level: l.level, Start: start, End: end})
		}
	}
	return out, nil
}

// firstPos is where a block opens. A table's own position is that of the
// paragraph it was cut from, which may hold lines before the header row.
func firstPos(n ast.Node) int {
	if t, ok := n.(*east.Table); ok && t.FirstChild() != nil {
		return t.FirstChild().Pos()
	}
	if p := n.Pos(); p >= 0 {
		return p
	}
	if l := n.Lines(); l != nil && l.Len() > 0 {
		return l.At(0).Start
	}
	return -1
}

// lastPos is an offset on a block's last source line.
func (w *walker) lastPos(n ast.Node, pos int) int {
	last := pos
	if t, ok := n.(*east.Table); ok && t.LastChild() != nil {
		// The delimiter row, right after the header, has no node.
		return max(last, t.LastChild().Pos(), min(w.lineEnd(pos)+1, len(w.src)))
	}
	if l := n.Lines(); l != nil && l.Len() > 0 {
		last = max(last, l.At(l.Len()-1).Start)
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		last = max(last, h.ClosureLine.Start)
	}
	return last
}

func (w *walker) lineStart(pos int) int {
	return bytes.LastIndexByte(w.src[:min(pos, len(w.src))], '\n') + 1
}

// lineEnd is the offset of the newline ending the line that holds pos, or
// the end of the text.
func (w *walker) lineEnd(pos int) int {
	if pos >= len(w.src) {
		return len(w.src)
	}
	if i := bytes.IndexByte(w.src[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(w.src)
}

func (w *walker) lineAt(start int) []byte { return w.src[start:w.lineEnd(start)] }

// fence is the opening fence run (``` or ~~~, maybe longer) at pos.
func fence(src []byte, pos int) string {
	if pos >= len(src) {
		return ""
	}
	n := 0
	for pos+n < len(src) && src[pos+n] == src[pos] {
		n++
	}
	return string(src[pos : pos+n])
}

// isClosingFence reports whether line, past its container markers, is a
// run of the fence's character at least as long, then only spaces.
// goldmark does not record the closing fence; the line right after the
// code's last content line is either that fence or belongs to another block,
// whose start then bounds this one.
func isClosingFence(line []byte, fence string) bool {
	t := bytes.TrimLeft(line, " \t>")
	if !bytes.HasPrefix(t, []byte(fence)) {
		return false
	}
	return len(bytes.Trim(bytes.TrimLeft(t, fence[:1]), " \t\r")) == 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
