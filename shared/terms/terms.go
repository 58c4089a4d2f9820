// Package terms turns text into the terms of Strata's stemmed keyword index.
// Weaviate has no stemmer, so the indexer writes each chunk's terms into a
// whitespace-tokenized property and queryd analyses queries the same way.
//
// Words are lowercased and Snowball-stemmed (English). Identifiers survive:
// a run of letters and digits joined by _ . - / or : (asn1_der_coding,
// net/http, x-request-id) is kept whole besides its parts, camelCase words
// (panicNil, HTTPServer) keep their whole form besides their parts, and a
// word with a digit is never stemmed. A query for an identifier thus
// matches the rare whole term first, and a query in plain English matches
// every inflection.
package terms

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// joiners join the parts of an identifier.
const joiners = "_.-/:"

// Query returns the terms of a search query: those of text without English
// stopwords (Lucene's list, as Weaviate's "en" preset), which Weaviate drops
// from queries only on word-tokenized properties, not on these. A query of
// stopwords alone keeps them.
func Query(text string) string {
	var b strings.Builder
	all := Of(text)
	for _, t := range strings.Fields(all) {
		if stopwords[t] {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	if b.Len() == 0 {
		return all
	}
	return b.String()
}

// stopwords are Lucene's English stopwords (EnglishAnalyzer), as Weaviate's "en" preset.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with") {
		stopwords[w] = true
	}
}

// Of returns the terms of text separated by spaces.
func Of(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	Each(text, func(term string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(term)
	})
	return b.String()
}

// Each calls emit with every term of text in order (a compound first, then
// its parts).
func Each(text string, emit func(string)) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		// A compound: words joined by single joiners, e.g. asn1_der_coding.
		end, words := i, 0
		for end < len(text) {
			w := wordEnd(text, end)
			words++
			end = w
			if end+1 < len(text) && strings.IndexByte(joiners, text[end]) >= 0 {
				if next, _ := utf8.DecodeRuneInString(text[end+1:]); isWordRune(next) {
					end++
					continue
				}
			}
			break
		}
		compound := text[i:end]
		if words > 1 {
			emit(strings.ToLower(compound))
			// Each segment of a path that is a compound itself, so that
			// "asn1.go" finds "encoding/asn1/asn1.go".
			if segs := strings.Split(compound, "/"); len(segs) > 1 {
				for _, seg := range segs {
					if strings.ContainsAny(seg, joiners) {
						emit(strings.ToLower(seg))
					}
				}
			}
		}
		for j := 0; j < len(compound); {
			r, size := utf8.DecodeRuneInString(compound[j:])
			if !isWordRune(r) {
				j += size
				continue
			}
			w := wordEnd(compound, j)
			word(compound[j:w], emit)
			j = w
		}
		i = end
	}
}

// word emits one word: its whole lowercased form (stemmed when it is plain
// letters), then its camelCase parts when it has any.
func word(w string, emit func(string)) {
	parts := camelParts(w)
	if len(parts) > 1 {
		emit(strings.ToLower(w))
		for _, p := range parts {
			emit(stem(strings.ToLower(p)))
		}
		return
	}
	emit(stem(strings.ToLower(w)))
}

// stem stems a lowercase English word; words with digits or other scripts
// stay as they are (snowball's English stemmer knows only a-z). Stems are
// remembered: text repeats a small vocabulary, and stemming was most of
// the CPU the indexer spent building a commit's objects
// (docs/bench/loading.md).
func stem(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	if len(w) <= 2 {
		return w
	}
	if s, ok := stems.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, false)
	if len(w) <= maxStemmedWordKept && stemsKept.Load() < maxStemsKept {
		// Clones: w and s may be slices of a whole lowercased text.
		if _, had := stems.LoadOrStore(strings.Clone(w), strings.Clone(s)); !had {
			stemsKept.Add(1)
		}
	}
	return s
}

// maxStemsKept bounds the words whose stems are remembered, and
// maxStemmedWordKept their length (a few MB at most, whatever a hostile
// query or file holds): a vocabulary's frequent words come early, and the
// rest are stemmed each time.
const (
	maxStemsKept       = 1 << 16
	maxStemmedWordKept = 32
)

var (
	stems     sync.Map // word -> stem
	stemsKept atomic.Int64
)

// camelParts splits panicNil into panic, Nil and HTTPServer into HTTP,
// Server; a word without case changes is one part.
func camelParts(w string) []string {
	var parts []string
	start := 0
	runes := []rune(w)
	for i := 1; i < len(runes); i++ {
		prev, cur := runes[i-1], runes[i]
		next := rune(0)
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		lowerToUpper := unicode.IsLower(prev) && unicode.IsUpper(cur)
		acronymEnd := unicode.IsUpper(prev) && unicode.IsUpper(cur) && unicode.IsLower(next)
		if lowerToUpper || acronymEnd {
			parts = append(parts, string(runes[start:i]))
			start = i
		}
	}
	return append(parts, string(runes[start:]))
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// wordEnd is the end of the run of word runes starting at i.
func wordEnd(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			break
		}
		i += size
	}
	return i
}
