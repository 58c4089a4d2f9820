// Package chunk splits an extracted document into sections and token-bounded
// chunks. Headings start sections; chunks never cross a section boundary
// (a heading with no text of its own joins the next section); whole blocks
// are packed up to the target size, with an optional overlap of trailing
// blocks; tables and code stay whole when they fit twice the target; images
// are chunks of their own. Every chunk is an exact slice of the document
// text, with character (rune) offsets.
package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// Counter counts tokens.
type Counter interface{ Count(s string) int }

// Options bound chunk sizes.
type Options struct {
	TargetTokens  int // chunks grow up to this many tokens (default 512)
	OverlapTokens int // a chunk repeats up to this many tokens of trailing blocks of the previous one
}

// Chunk kinds.
const (
	KindText  = "text"
	KindCode  = "code"
	KindTable = "table"
	KindImage = "image"
)

// Section is a heading-delimited span of the document.
type Section struct {
	Ordinal     int
	Title       string
	Level       int
	HeadingPath []string
	Start, End  int // rune offsets, end exclusive
	Tokens      int
	PageStart   int
	PageEnd     int
	Chunks      []Chunk
}

// Chunk is a piece of one section.
type Chunk struct {
	Index      int
	Kind       string
	Content    string
	Start, End int // rune offsets, end exclusive
	Tokens     int
	Checksum   string // sha256 of Content
	PageStart  int
	PageEnd    int
	Image      int // index into the document's images, -1 for none
	// Confidence is the mean OCR confidence of the chunk's text read by
	// OCR, weighted by length; 0 when none of it was.
	Confidence float64
}

// unit is a packable span of bytes: a block or a piece of a cut block.
type unit struct {
	start, end int
	tokens     int
	kind       extract.Kind
	page       int
	image      int
	confidence float64 // the block's OCR confidence, 0 for text the file held
}

// Split splits doc. A document without headings is one section.
func Split(doc *extract.Document, c Counter, o Options) []Section {
	if o.TargetTokens <= 0 {
		o.TargetTokens = 512
	}
	if o.OverlapTokens < 0 || o.OverlapTokens >= o.TargetTokens {
		o.OverlapTokens = 0
	}
	runes := newRuneIndex(doc.Text)
	var sections []Section
	var path []string
	var levels []int
	index := 0
	groups := group(doc)
	for _, g := range groups {
		for _, h := range g.headings {
			for len(levels) > 0 && levels[len(levels)-1] >= h.level {
				levels, path = levels[:len(levels)-1], path[:len(path)-1]
			}
			levels, path = append(levels, h.level), append(path, h.title)
		}
		s := Section{Ordinal: len(sections), HeadingPath: append([]string(nil), path...)}
		if n := len(g.headings); n > 0 {
			s.Title, s.Level = g.headings[n-1].title, g.headings[n-1].level
		}
		if len(g.blocks) > 0 {
			s.Start = runes.at(g.blocks[0].Start)
			s.End = runes.at(g.blocks[len(g.blocks)-1].End)
		}
		for _, u := range pack(doc.Text, g.blocks, c, o) {
			content := doc.Text[u.start:u.end]
			sum := sha256.Sum256([]byte(content))
			if u.tokens < 0 { // several units: tokens may merge across their gaps
				u.tokens = c.Count(content)
			}
			ch := Chunk{Index: index, Kind: u.kindName(doc), Content: content, Start: runes.at(u.start), End: runes.at(u.end),
				Tokens: u.tokens, Checksum: hex.EncodeToString(sum[:]), PageStart: u.pageStart, PageEnd: u.pageEnd, Image: u.image,
				Confidence: math.Round(u.confidence*10) / 10}
			s.Tokens += ch.Tokens
			s.Chunks = append(s.Chunks, ch)
			if ch.PageStart > 0 && (s.PageStart == 0 || ch.PageStart < s.PageStart) {
				s.PageStart = ch.PageStart
			}
			s.PageEnd = max(s.PageEnd, ch.PageEnd)
			index++
		}
		sections = append(sections, s)
	}
	return sections
}

type heading struct {
	title string
	level int
}

type sectionBlocks struct {
	headings []heading // usually one; several when headings had no text between them
	blocks   []extract.Block
}

// group splits the blocks into sections at headings; a section that would
// hold nothing but its heading is merged into the next one.
func group(doc *extract.Document) []sectionBlocks {
	var out []sectionBlocks
	cur := sectionBlocks{}
	onlyHeadings := func(s sectionBlocks) bool {
		for _, b := range s.blocks {
			if b.Kind != extract.Heading {
				return false
			}
		}
		return true
	}
	for _, b := range doc.Blocks {
		if b.End <= b.Start || b.End > len(doc.Text) {
			continue
		}
		if b.Kind == extract.Heading {
			if len(cur.blocks) > 0 && !onlyHeadings(cur) {
				out = append(out, cur)
				cur = sectionBlocks{}
			}
			level := min(max(b.Level, 1), 6)
			cur.headings = append(cur.headings, heading{title: headingTitle(doc.Text[b.Start:b.End]), level: level})
		}
		cur.blocks = append(cur.blocks, b)
	}
	if len(cur.blocks) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

func headingTitle(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "#") { // Markdown ATX markers
		t = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(strings.TrimLeft(t, "#")), "#"))
	}
	return extract.Title(t)
}

// packed is a chunk's span before it becomes a Chunk.
type packed struct {
	start, end         int
	pageStart, pageEnd int
	image              int
	kinds              map[extract.Kind]bool
	tokens             int     // counted on exactly start:end, or -1 (count it)
	confidence         float64 // OCR confidence weighted by length over the OCR'd units
}

func (p packed) kindName(doc *extract.Document) string {
	switch {
	case p.image >= 0:
		return KindImage
	case len(p.kinds) == 1 && p.kinds[extract.Table]:
		return KindTable
	case doc.Format == "code" || (len(p.kinds) == 1 && p.kinds[extract.Code]):
		return KindCode
	}
	return KindText
}

// pack turns a section's blocks into chunk spans.
func pack(text string, blocks []extract.Block, c Counter, o Options) []packed {
	var units []unit
	for _, b := range blocks {
		whole := o.TargetTokens
		if b.Kind == extract.Table || b.Kind == extract.Code {
			whole = 2 * o.TargetTokens // keep tables and code whole where possible
		}
		t, within := 0, true
		if b.Kind == extract.Figure {
			t = c.Count(text[b.Start:b.End])
		} else {
			t, within = countWithin(c, text[b.Start:b.End], whole)
		}
		if within {
			img := -1
			if b.Kind == extract.Figure {
				img = b.Image
			}
			units = append(units, unit{b.Start, b.End, t, b.Kind, b.Page, img, b.Confidence})
			continue
		}
		for _, piece := range cut(text, b.Start, b.End, c, o.TargetTokens) {
			if piece.tokens < 0 {
				piece.tokens = c.Count(text[piece.start:piece.end])
			}
			units = append(units, unit{piece.start, piece.end, piece.tokens, b.Kind, b.Page, -1, b.Confidence})
		}
	}
	var out []packed
	var cur []unit
	curTokens := 0
	flush := func() {
		if len(cur) == 0 {
			return
		}
		p := packed{start: cur[0].start, end: cur[len(cur)-1].end, image: -1, kinds: map[extract.Kind]bool{}, tokens: -1}
		if len(cur) == 1 {
			p.tokens = cur[0].tokens // one unit: its count is the chunk's
		}
		var sum, weight float64
		for _, u := range cur {
			if u.confidence > 0 {
				sum, weight = sum+u.confidence*float64(u.end-u.start), weight+float64(u.end-u.start)
			}
			p.kinds[u.kind] = true
			if u.page > 0 && (p.pageStart == 0 || u.page < p.pageStart) {
				p.pageStart = u.page
			}
			p.pageEnd = max(p.pageEnd, u.page)
		}
		if weight > 0 {
			p.confidence = sum / weight
		}
		out = append(out, p)
	}
	for _, u := range units {
		if u.kind == extract.Figure {
			flush()
			cur, curTokens = nil, 0
			out = append(out, packed{start: u.start, end: u.end, pageStart: u.page, pageEnd: u.page, image: u.image,
				kinds: map[extract.Kind]bool{extract.Figure: true}, tokens: u.tokens, confidence: u.confidence})
			continue
		}
		// The text between blocks is part of the chunk: count it (a blank
		// line is one token, but "\r  " between pieces may be more).
		gap := func(prev []unit) int {
			if len(prev) == 0 {
				return 0
			}
			return c.Count(text[prev[len(prev)-1].end:u.start])
		}
		// Text read by OCR and text the file held are never in one chunk:
		// a chunk's confidence then speaks for all of its words.
		if len(cur) > 0 && (u.confidence > 0) != (cur[len(cur)-1].confidence > 0) {
			flush()
			cur, curTokens = nil, 0
		}
		if len(cur) > 0 && curTokens+gap(cur)+u.tokens > o.TargetTokens {
			flush()
			// Carry trailing units of the previous chunk as overlap.
			var keep []unit
			kept, toNext := 0, gap(cur)
			// Never the whole previous chunk: the new one must start later.
			for i := len(cur) - 1; i >= 1; i-- {
				with := kept + cur[i].tokens
				if len(keep) > 0 {
					with += c.Count(text[cur[i].end:keep[0].start])
				}
				if with > o.OverlapTokens || with+toNext+u.tokens > o.TargetTokens {
					break
				}
				keep = append([]unit{cur[i]}, keep...)
				kept = with
			}
			cur, curTokens = keep, kept
		}
		curTokens += gap(cur) + u.tokens
		cur = append(cur, u)
	}
	flush()
	return out
}

// limitedCounter stops counting past a limit (ingestor/tokens does): a
// block over it is cut, and its pieces counted then, so its own count is
// not needed.
type limitedCounter interface {
	CountWithin(s string, limit int) (n int, within bool)
}

// countWithin is s's count and whether it is at most limit; past the
// limit, the count may be less than s's whole count (c stopped early).
func countWithin(c Counter, s string, limit int) (int, bool) {
	if l, ok := c.(limitedCounter); ok {
		return l.CountWithin(s, limit)
	}
	n := c.Count(s)
	return n, n <= limit
}

// prefixer tells how many bytes of s its first n tokens take (ingestor/tokens
// does): one pass instead of counting a dozen prefixes.
type prefixer interface{ Prefix(s string, n int) int }

// exactPrefixer is a prefixer that also says when its cut needs no check:
// the prefix's count is exactly the tokens it took (ingestor/tokens does).
type exactPrefixer interface {
	PrefixExact(s string, n int) (int, bool)
}

// eachPrefixer is an exactPrefixer that also tells the count of each
// prefix it walks that ends between two of its pieces (ingestor/tokens
// does): a piece cut there needs no count of its own.
type eachPrefixer interface {
	PrefixEach(s string, n int, at func(end, tokens int)) (int, bool)
}

// prefixCounts are the counts of prefixes of a text: tokens[i] for the
// first ends[i] bytes, ends increasing.
type prefixCounts struct{ ends, tokens []int }

func (p *prefixCounts) add(end, tokens int) {
	p.ends, p.tokens = append(p.ends, end), append(p.tokens, tokens)
}

// of is the count of the first end bytes, or -1 when not known.
func (p *prefixCounts) of(end int) int {
	if i, found := slices.BinarySearch(p.ends, end); found {
		return p.tokens[i]
	}
	return -1
}

// longestWithin is the length of the longest prefix of s within target tokens
// (at least 1 byte). When c tells them, known gets the counts of prefixes
// it walked.
func longestWithin(s string, c Counter, target int, known *prefixCounts) int {
	if p, ok := c.(eachPrefixer); ok {
		n, exact := p.PrefixEach(s, target, known.add)
		if exact && n > 0 {
			return n
		}
		// The cut falls inside a piece: check it as the search below does,
		// counting only from the last piece's end, whose count is known.
		if last := len(known.ends) - 1; n > 0 && last >= 0 && known.ends[last] <= n && (n == len(s) || utf8.RuneStart(s[n])) &&
			(n+1 >= len(s) || utf8.RuneStart(s[n+1])) {
			from, base := known.ends[last], known.tokens[last]
			if base+c.Count(s[from:n]) <= target && (n == len(s) || base+c.Count(s[from:n+1]) > target) {
				return n
			}
		}
	} else if p, ok := c.(exactPrefixer); ok {
		if n, exact := p.PrefixExact(s, target); exact && n > 0 {
			return n
		}
	}
	lo, hi := 1, len(s)
	if p, ok := c.(prefixer); ok {
		// Look at a window a few times the usual bytes per token, widened
		// while it holds fewer than target tokens.
		for window := 8 * target; ; window *= 2 {
			w := min(len(s), window)
			if n := p.Prefix(s[:w], target); n < w || w == len(s) {
				if n >= 1 && c.Count(s[:n]) <= target {
					lo = n
					if n == len(s) || c.Count(s[:n+1]) > target {
						return n
					}
				}
				hi = min(hi, max(n, 1)+64) // a token cut apart at the end counts again: search near n
				break
			}
		}
	}
	for lo < hi { // binary search for the longest prefix within target
		mid := (lo + hi + 1) / 2
		if c.Count(s[:mid]) <= target {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// span is a piece cut from a text, and its tokens (-1: not counted).
type span struct{ start, end, tokens int }

// cut splits an oversized span into pieces of at most target tokens,
// preferring line breaks, then spaces, then any character boundary.
func cut(text string, start, end int, c Counter, target int) []span {
	var out []span
	var known prefixCounts
	for start < end {
		known.ends, known.tokens = known.ends[:0], known.tokens[:0]
		stop := start + longestWithin(text[start:end], c, target, &known)
		if stop < end {
			piece := text[start:stop]
			if i := strings.LastIndexByte(piece, '\n'); i > len(piece)/2 {
				stop = start + i + 1
			} else if i := strings.LastIndexByte(piece, ' '); i > len(piece)/2 {
				stop = start + i + 1
			}
			for stop > start && !utf8.RuneStart(text[stop]) {
				stop--
			}
			if stop == start { // a single rune over target: take it whole
				_, size := utf8.DecodeRuneInString(text[start:])
				stop = start + size
			}
		}
		e := stop
		for e > start && strings.ContainsRune(" \t\r\n", rune(text[e-1])) {
			e--
		}
		if e > start {
			out = append(out, span{start, e, known.of(e - start)})
		}
		start = stop
		for start < end && strings.ContainsRune(" \t\r\n", rune(text[start])) {
			start++
		}
	}
	return out
}

// runeIndex converts byte offsets to rune offsets with a checkpoint about
// every 4 KiB (at a rune boundary), so lookups in any order scan little.
type runeIndex struct {
	text  string
	bytes []int // checkpoint byte offsets, increasing, each at a rune start
	runes []int // rune count before each checkpoint
}

const step = 4096

func newRuneIndex(text string) *runeIndex {
	r := &runeIndex{text: text}
	b, n := 0, 0
	for b <= len(text) {
		r.bytes, r.runes = append(r.bytes, b), append(r.runes, n)
		next := min(b+step, len(text))
		for next < len(text) && !utf8.RuneStart(text[next]) {
			next++
		}
		if next == b {
			break
		}
		n += utf8.RuneCountInString(text[b:next])
		b = next
	}
	return r
}

func (r *runeIndex) at(b int) int {
	k := min(b/step, len(r.bytes)-1)
	for k > 0 && r.bytes[k] > b {
		k--
	}
	return r.runes[k] + utf8.RuneCountInString(r.text[r.bytes[k]:b])
}

// Parts are the sections and chunks of a file version as the CHUNKS
// message carries them (pipeline.FileVersion), with their IDs; each chunk
// has its section's heading path. Image references are the caller's.
func Parts(fileVersionID string, secs []Section) ([]pipeline.Section, []pipeline.Chunk) {
	out := make([]pipeline.Section, 0, len(secs))
	var chunks []pipeline.Chunk
	for _, s := range secs {
		sec := pipeline.Section{
			ID: ids.Section(fileVersionID, s.Ordinal), Ordinal: s.Ordinal, Title: s.Title,
			HeadingPath: s.HeadingPath, Level: s.Level, StartOffset: s.Start, EndOffset: s.End,
			TokenCount: s.Tokens, ChunkCount: len(s.Chunks), PageStart: s.PageStart, PageEnd: s.PageEnd,
		}
		out = append(out, sec)
		for _, c := range s.Chunks {
			chunks = append(chunks, pipeline.Chunk{
				ID: ids.Chunk(fileVersionID, c.Index), Index: c.Index, SectionID: sec.ID, Content: c.Content,
				StartOffset: c.Start, EndOffset: c.End, TokenCount: c.Tokens, SourceChecksum: c.Checksum,
				HeadingPath: s.HeadingPath, Kind: c.Kind, PageStart: c.PageStart, PageEnd: c.PageEnd, OCRConfidence: c.Confidence,
			})
		}
	}
	return out, chunks
}
