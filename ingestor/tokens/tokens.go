// Package tokens counts tokens with a real BPE tokenizer (cl100k_base, the
// encoding of OpenAI's embedding models), loaded from data compiled into the
// binary so nothing is downloaded at run time.
//
// The tokenizer is github.com/tiktoken-go/tokenizer; its split expression is
// matched by hand (pieces.go), about 6x faster, with the same counts. It replaced
// pkoukk/tiktoken-go after giving identical counts on every file and line of
// testdata/corpus (testdata/cl100k_counts.json holds the old counts) at
// about 1.7x its speed.
package tokens

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding is the tokenizer's encoding name.
const Encoding = "cl100k_base"

var (
	once    sync.Once
	codec   tokenizer.Codec
	loadErr error
)

func load() (tokenizer.Codec, error) {
	once.Do(func() {
		codec, loadErr = tokenizer.Get(tokenizer.Cl100kBase)
		if loadErr != nil {
			loadErr = fmt.Errorf("load tokenizer %s: %w", Encoding, loadErr)
		}
	})
	return codec, loadErr
}

// Counter counts tokens. It is safe for concurrent use.
type Counter struct {
	codec  tokenizer.Codec
	pieces *pieceCache
}

// New loads the tokenizer (once per process).
func New() (*Counter, error) {
	c, err := load()
	if err != nil {
		return nil, err
	}
	return &Counter{codec: c, pieces: &pieceCache{seed: maphash.MakeSeed()}}, nil
}

// Pieces of natural text repeat: their counts are cached, pieces of at
// most maxCachedPieceBytes each, in cachedPieces slots.
const (
	cachedPieces        = 1 << 17 // at most about 14 MB
	maxCachedPieceBytes = 64
)

// pieceCache holds piece counts in a table of slots, a piece in the slot
// its hash picks, where a later piece of that slot may replace it
// (replaceEvery). Every
// worker reads it at once without a lock (a slot is one atomic pointer),
// and it keeps counting what the text in hand repeats after it has met
// more distinct pieces than it holds. It replaced a sync.Map, whose lookup
// took 44% of the CPU of chunking a 10 MB CSV (docs/bench/ingest-lines.md).
type pieceCache struct {
	seed  maphash.Seed
	slots [cachedPieces]atomic.Pointer[cachedPiece]
	// misses counts the pieces not found in a taken slot: every
	// replaceEvery-th takes it, so a text of few repeats (a CSV of numbers)
	// allocates for half its pieces, not each, and a text whose pieces do
	// repeat (a wide sheet's column labels after a file of hex numbers)
	// wins its slots back within a few rows (docs/bench/ingest-lines.md).
	misses atomic.Uint64
}

const replaceEvery = 2

type cachedPiece struct {
	piece string
	n     int
}

func (pc *pieceCache) slot(p string) *atomic.Pointer[cachedPiece] {
	return &pc.slots[maphash.String(pc.seed, p)&(cachedPieces-1)]
}

// maxPieceBytes bounds the text one byte-pair merge runs over. A piece is
// a word, a number or a run of punctuation: a few bytes in any text, but a
// 4 MB data URI is one piece, and merging it held 350 MB (its merge heap).
// Longer pieces are counted in parts of at most this many bytes; no token
// of cl100k is nearly that long, so a part boundary adds at most a token.
const maxPieceBytes = 4096

// Count returns the number of tokens in s: the sum over cl100k's pieces
// (pieces.go) of each piece's byte-pair count.
func (c *Counter) Count(s string) int {
	if s == "" {
		return 0
	}
	if !utf8.ValidString(s) {
		// The codec's default error mode tokenizes invalid UTF-8 as bytes and
		// never fails.
		n, _ := c.codec.Count(s)
		return n
	}
	total := 0
	eachPiece(s, func(p string) { total += c.piece(p) })
	return total
}

// CountWithin is Count when s has at most limit tokens (within is true);
// otherwise it stops counting once past limit, and n is more than limit
// and at most Count(s). A chunker asking whether a block fits then
// counts a block of a million tokens no further than its limit.
func (c *Counter) CountWithin(s string, limit int) (n int, within bool) {
	if !utf8.ValidString(s) {
		n = c.Count(s)
		return n, n <= limit
	}
	for i := 0; i < len(s) && n <= limit; {
		if s[i] == 0x7f { // in no piece, as in Count
			i++
			continue
		}
		l := pieceLen(s[i:])
		n += c.piece(s[i : i+l])
		i += l
	}
	return n, n <= limit
}

// endsInSpace reports whether piece p ends in white space.
func endsInSpace(p string) bool {
	r, _ := utf8.DecodeLastRuneInString(p)
	return unicode.IsSpace(r)
}

func (c *Counter) piece(p string) int {
	if len(p) > maxPieceBytes {
		total := 0
		for len(p) > maxPieceBytes {
			cut := maxPieceBytes
			for cut > 0 && !utf8.RuneStart(p[cut]) {
				cut--
			}
			n, _ := c.codec.Count(p[:cut])
			total += n
			p = p[cut:]
		}
		n, _ := c.codec.Count(p)
		return total + n
	}
	if len(p) > maxCachedPieceBytes {
		n, _ := c.codec.Count(p)
		return n
	}
	slot := c.pieces.slot(p)
	if e := slot.Load(); e != nil && e.piece == p {
		return e.n
	}
	n, _ := c.codec.Count(p)
	if slot.Load() == nil || c.pieces.misses.Add(1)%replaceEvery == 0 {
		slot.Store(&cachedPiece{piece: strings.Clone(p), n: n})
	}
	return n
}

// Prefix returns how many bytes of s its first n tokens take: all of s when
// it has n tokens or fewer. Cutting an oversized text at a token boundary
// this way costs one pass instead of a search that counts many prefixes.
// It walks the pieces as Count does (cached counts, the hand-matched split)
// and runs the tokenizer only on the piece where the n-th token ends: the
// tokenizer's own split expression cost a cut of a long line of short
// tokens (a CSV row of 20,000 cells) fifteen times the same bytes in lines.
func (c *Counter) Prefix(s string, n int) int {
	b, _ := c.PrefixExact(s, n)
	return b
}

// PrefixExact is Prefix, and whether Count of that prefix is exactly its
// tokens (the cut falls between pieces, or takes all of s): then a caller
// needs no count of its own to check it.
func (c *Counter) PrefixExact(s string, n int) (int, bool) {
	return c.PrefixEach(s, n, nil)
}

// PrefixEach is PrefixExact, and tells at (when not nil) the tokens of
// each prefix of s it walks that ends between two pieces, the first not
// white space at its end, in order: Count of s[:end] is tokens. A chunker
// that cuts a long text there then knows the count of what it cut without
// counting it again. (White space at a prefix's end is split by what
// follows it: "  0" is " ", " ", "0", where "  " alone is one piece.)
func (c *Counter) PrefixEach(s string, n int, at func(end, tokens int)) (int, bool) {
	if n <= 0 || s == "" {
		return 0, true
	}
	if !utf8.ValidString(s) {
		return c.codecPrefix(s, n), false
	}
	total, end := 0, 0 // tokens so far, and the bytes they take
	for i := 0; i < len(s); {
		if s[i] == 0x7f { // in no piece, as in Count
			i++
			continue
		}
		l := pieceLen(s[i:])
		p := s[i : i+l]
		k := c.piece(p)
		if total+k > n {
			if m := n - total; m > 0 {
				return i + c.piecePrefix(p, m), false
			}
			return end, true
		}
		total += k
		i += l
		end = i
		if at != nil && !endsInSpace(p) {
			at(end, total)
		}
	}
	return len(s), true
}

// piecePrefix is how many bytes of piece p its first m tokens take (m is
// less than its count), counted in parts as piece counts a long one.
func (c *Counter) piecePrefix(p string, m int) int {
	off := 0
	for len(p) > maxPieceBytes {
		cut := maxPieceBytes
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		k, _ := c.codec.Count(p[:cut])
		if k > m {
			return off + c.codecPrefix(p[:cut], m)
		}
		m, off, p = m-k, off+cut, p[cut:]
	}
	return off + c.codecPrefix(p, m)
}

// codecPrefix is the tokenizer's own answer: the bytes of s's first n tokens.
func (c *Counter) codecPrefix(s string, n int) int {
	if n <= 0 {
		return 0
	}
	_, toks, _ := c.codec.Encode(s)
	if len(toks) <= n {
		return len(s)
	}
	size := 0
	for _, t := range toks[:n] {
		size += len(t)
	}
	return min(size, len(s))
}
