// Package chunk splits extracted text into sections and token-bounded chunks.
// Markdown headings become sections; chunks never cross a section boundary;
// every chunk is an exact slice of the text, with character (rune) offsets.
package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Counter counts tokens.
type Counter interface{ Count(s string) int }

// Options bound chunk sizes.
type Options struct {
	TargetTokens int // chunks grow up to this many tokens
}

// Section is a heading-delimited span of the text.
type Section struct {
	Ordinal     int
	Title       string
	Level       int // heading level, 0 for text before the first heading
	HeadingPath []string
	Start, End  int // rune offsets, end exclusive
	Tokens      int
	Chunks      []Chunk
}

// Chunk is a piece of one section.
type Chunk struct {
	Index      int // position in the whole file
	Content    string
	Start, End int // rune offsets, end exclusive
	Tokens     int
	Checksum   string // sha256 of Content
}

// Markdown splits Markdown text: ATX headings (# .. ######) outside fenced
// code blocks start sections.
func Markdown(text string, c Counter, o Options) []Section {
	return split(text, c, o, true)
}

// Text splits plain text: one section, chunks along paragraphs.
func Text(text string, c Counter, o Options) []Section {
	return split(text, c, o, false)
}

// span is a byte range of the text.
type span struct{ start, end int }

type heading struct {
	level int
	title string
	span  span // the whole section, in bytes
}

func split(text string, c Counter, o Options, markdown bool) []Section {
	if o.TargetTokens <= 0 {
		o.TargetTokens = 512
	}
	var heads []heading
	if markdown {
		heads = headings(text)
	}
	if len(heads) == 0 || heads[0].span.start > 0 {
		end := len(text)
		if len(heads) > 0 {
			end = heads[0].span.start
		}
		if strings.TrimSpace(text[:end]) != "" || len(heads) == 0 {
			heads = append([]heading{{span: span{0, end}}}, heads...)
		}
	}
	runes := newRuneIndex(text)
	var sections []Section
	var path []heading
	index := 0
	for _, h := range heads {
		for len(path) > 0 && path[len(path)-1].level >= h.level && h.level > 0 {
			path = path[:len(path)-1]
		}
		var hp []string
		if h.level > 0 {
			path = append(path, h)
			for _, p := range path {
				hp = append(hp, p.title)
			}
		}
		s := Section{
			Ordinal: len(sections), Title: h.title, Level: h.level, HeadingPath: hp,
			Start: runes.at(h.span.start), End: runes.at(h.span.end),
		}
		for _, b := range pack(text, blocks(text, h.span), c, o.TargetTokens) {
			content := text[b.start:b.end]
			sum := sha256.Sum256([]byte(content))
			ch := Chunk{Index: index, Content: content, Start: runes.at(b.start), End: runes.at(b.end),
				Tokens: c.Count(content), Checksum: hex.EncodeToString(sum[:])}
			s.Tokens += ch.Tokens
			s.Chunks = append(s.Chunks, ch)
			index++
		}
		sections = append(sections, s)
	}
	return sections
}

// headings finds ATX headings outside fenced code and returns the sections
// they start, each running to the next heading.
func headings(text string) []heading {
	var hs []heading
	fence := ""
	for off := 0; off < len(text); {
		nl := strings.IndexByte(text[off:], '\n')
		lineEnd := len(text)
		if nl >= 0 {
			lineEnd = off + nl
		}
		line := strings.TrimRight(text[off:lineEnd], "\r")
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		switch {
		case fence != "":
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
		case indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			ch := trimmed[:1]
			n := len(trimmed) - len(strings.TrimLeft(trimmed, ch))
			fence = strings.Repeat(ch, n)
		case indent < 4 && strings.HasPrefix(trimmed, "#"):
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			rest := trimmed[level:]
			if level <= 6 && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(rest), "#"))
				if len(hs) > 0 {
					hs[len(hs)-1].span.end = off
				}
				hs = append(hs, heading{level: level, title: title, span: span{off, len(text)}})
			}
		}
		if nl < 0 {
			break
		}
		off = lineEnd + 1
	}
	return hs
}

// blocks splits a section into paragraphs (runs of non-blank lines); a fenced
// code block stays one block even with blank lines inside.
func blocks(text string, s span) []span {
	var out []span
	start := -1
	fence := false
	off := s.start
	for off < s.end {
		nl := strings.IndexByte(text[off:s.end], '\n')
		lineEnd := s.end
		if nl >= 0 {
			lineEnd = off + nl
		}
		line := strings.TrimSpace(text[off:lineEnd])
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = !fence
		}
		blank := line == "" && !fence
		switch {
		case blank && start >= 0:
			out = append(out, span{start, trimEnd(text, start, off)})
			start = -1
		case !blank && start < 0:
			start = off
		}
		if nl < 0 {
			break
		}
		off = lineEnd + 1
	}
	if start >= 0 {
		out = append(out, span{start, trimEnd(text, start, s.end)})
	}
	return out
}

func trimEnd(text string, start, end int) int {
	for end > start && (text[end-1] == '\n' || text[end-1] == '\r' || text[end-1] == ' ' || text[end-1] == '\t') {
		end--
	}
	return end
}

// pack joins consecutive blocks into chunks of at most target tokens; a block
// over target is cut at line, then word, then character boundaries.
func pack(text string, bs []span, c Counter, target int) []span {
	var out []span
	cur := span{-1, -1}
	curTokens := 0
	flush := func() {
		if cur.start >= 0 {
			out = append(out, cur)
		}
		cur, curTokens = span{-1, -1}, 0
	}
	for _, b := range bs {
		t := c.Count(text[b.start:b.end])
		if t > target {
			flush()
			out = append(out, cut(text, b, c, target)...)
			continue
		}
		if cur.start >= 0 && curTokens+t > target {
			flush()
		}
		if cur.start < 0 {
			cur.start = b.start
		}
		cur.end = b.end
		curTokens += t + 1 // the joining blank line
	}
	flush()
	return out
}

// cut splits one oversized block into pieces of at most target tokens,
// preferring newlines, then spaces, then any character boundary.
func cut(text string, b span, c Counter, target int) []span {
	var out []span
	for b.start < b.end {
		// Find the longest prefix within target by binary search over byte length.
		lo, hi := 1, b.end-b.start
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if c.Count(text[b.start:b.start+mid]) <= target {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		end := b.start + lo
		if end < b.end {
			piece := text[b.start:end]
			if i := strings.LastIndexByte(piece, '\n'); i > len(piece)/2 {
				end = b.start + i + 1
			} else if i := strings.LastIndexByte(piece, ' '); i > len(piece)/2 {
				end = b.start + i + 1
			}
			for end > b.start && !utf8.RuneStart(text[end]) {
				end--
			}
			if end == b.start { // a single rune over target: take it whole
				_, size := utf8.DecodeRuneInString(text[b.start:])
				end = b.start + size
			}
		}
		e := trimEnd(text, b.start, end)
		if e > b.start {
			out = append(out, span{b.start, e})
		}
		b.start = end
		for b.start < b.end && (text[b.start] == ' ' || text[b.start] == '\n' || text[b.start] == '\r' || text[b.start] == '\t') {
			b.start++
		}
	}
	return out
}

// runeIndex converts increasing byte offsets to rune offsets in O(total).
type runeIndex struct {
	text    string
	byteOff int
	runeOff int
}

func newRuneIndex(text string) *runeIndex { return &runeIndex{text: text} }

func (r *runeIndex) at(b int) int {
	if b < r.byteOff {
		r.byteOff, r.runeOff = 0, 0
	}
	r.runeOff += utf8.RuneCountInString(r.text[r.byteOff:b])
	r.byteOff = b
	return r.runeOff
}
