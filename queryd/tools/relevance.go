package tools

// Relevance levels of hybrid_search hits: high, medium or low, so an agent
// can tell a weak match from a real one. Raw BM25 scores do not compare
// across queries and fused scores depend on top_k, so a level is computed
// from what does compare, all known when the answer is made:
//
//   - keyword ratio: the BM25 score over the answer's best BM25 score;
//   - coverage: the share of the query's distinct terms (shared/terms, as
//     the keyword index analyses them) found in the hit's text, headings
//     and path;
//   - rank: the place in the answer.
//
// Judgements are per document, and so is the level: a hit takes the best
// keyword ratio and coverage of its document's hits in the answer and the
// rank of the document's first hit. The thresholds were fitted on half of
// the labelled queries of docs/eval/relevance.md and checked on the other
// half (go run ./deploy/measure/strata-eval -relevance).

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/terms"
)

// The relevance levels.
const (
	relevanceHigh   = "high"
	relevanceMedium = "medium"
	relevanceLow    = "low"
)

// Thresholds of relevanceOf, fitted in docs/eval/relevance.md.
const (
	// relevanceRankWeight is how much strength a hit loses per unit of
	// ln(rank): strength = keyword ratio - weight * ln(document rank).
	relevanceRankWeight = 0.25
	// A hit is low when its strength is below relevanceLowStrength or its
	// coverage below relevanceLowCoverage.
	relevanceLowStrength = 0.19
	relevanceLowCoverage = 0.27
	// A hit is high when its strength and coverage are both at least these.
	relevanceHighStrength = 0.70
	relevanceHighCoverage = 0.60
)

// noStrongMatch is the first line of hybrid_search's text when its best hit is low.
const noStrongMatch = "No strong match: even the best hit has low relevance (it shares few of the query's words)."

// relevanceFeatures are what a hit's level is computed from.
type relevanceFeatures struct {
	// KeywordRatio is the best BM25 score of the hit's document in the
	// answer over the answer's best BM25 score, 0..1; 0 when BM25 did not
	// find the document, 1 when the answer has no keyword side (alpha 1).
	KeywordRatio float64
	// Coverage is the best share, over the document's hits in the answer,
	// of the query's distinct terms found in a hit's text; 1 for a query
	// without terms.
	Coverage float64
	// Rank is the 1-based place of the document's first hit in the answer.
	Rank int
}

// strength is the keyword ratio less a penalty growing with the rank.
func (f relevanceFeatures) strength() float64 {
	return f.KeywordRatio - relevanceRankWeight*math.Log(float64(max(f.Rank, 1)))
}

// relevanceOf is a hit's level: low when it is weak against the answer's
// best hit or shares too few of the query's terms, high when it is strong
// and shares most of them, medium otherwise.
func relevanceOf(f relevanceFeatures) string {
	s := f.strength()
	switch {
	case s < relevanceLowStrength || f.Coverage < relevanceLowCoverage:
		return relevanceLow
	case s >= relevanceHighStrength && f.Coverage >= relevanceHighCoverage:
		return relevanceHigh
	}
	return relevanceMedium
}

// relevanceLevels gives every hit of an answer (best first, as returned)
// its level. keywordSearched is whether the answer has a keyword side
// (alpha < 1); without one every keyword ratio counts as 1.
func relevanceLevels(query string, hits []fusedHit, keywordSearched bool) []string {
	features := answerRelevance(query, hits, keywordSearched)
	levels := make([]string, len(features))
	for i, f := range features {
		levels[i] = relevanceOf(f)
	}
	return levels
}

// chunkRelevanceLevels is relevanceLevels for an answer made of one
// ranking (best first): keyword (each chunk's Score is its BM25 score) or
// vector (no keyword side), as the seed search tools answer.
func chunkRelevanceLevels(query string, chunks []store.Chunk, keyword bool) []string {
	hits := make([]fusedHit, len(chunks))
	for i, c := range chunks {
		hits[i] = fusedHit{Chunk: c, Score: c.Score}
		if keyword {
			hits[i].KeywordRank, hits[i].KeywordScore = i+1, c.Score
		}
	}
	return relevanceLevels(query, hits, keyword)
}

// answerRelevance computes the features of every hit of an answer.
func answerRelevance(query string, hits []fusedHit, keywordSearched bool) []relevanceFeatures {
	qt := newQueryTerms(query)
	best := 0.0
	for _, h := range hits {
		if h.KeywordRank > 0 {
			best = max(best, h.KeywordScore)
		}
	}
	type document struct {
		ratio, coverage float64
		rank            int
	}
	docs := map[string]*document{}
	keys := make([]string, len(hits))
	for i, h := range hits {
		keys[i] = h.Chunk.Project + "\x00" + h.Chunk.FilePath
		d := docs[keys[i]]
		if d == nil {
			d = &document{rank: i + 1}
			docs[keys[i]] = d
		}
		switch {
		case !keywordSearched:
			d.ratio = 1
		case h.KeywordRank > 0 && best > 0:
			d.ratio = max(d.ratio, h.KeywordScore/best)
		}
		d.coverage = max(d.coverage, qt.coverage(append([]string{h.Chunk.Content, h.Chunk.FilePath}, h.Chunk.HeadingPath...)...))
	}
	out := make([]relevanceFeatures, len(hits))
	for i, k := range keys {
		d := docs[k]
		out[i] = relevanceFeatures{KeywordRatio: d.ratio, Coverage: d.coverage, Rank: d.rank}
	}
	return out
}

// queryTerms are a query's distinct terms, to measure how many of them a
// hit's text has. Stemming every word of every hit costs more than the
// search, so the words that cannot yield a query term are skipped and every
// other word is analysed once per answer.
type queryTerms struct {
	index map[string]int // term → its number
	// prefixes holds, for the first two bytes of every term (its only byte
	// for a one-byte term), the length of the shortest term starting so. A
	// plain word (ASCII letters, no camelCase) yields one term, its stem;
	// Snowball English rewrites suffixes only, never lengthens a word, and
	// keeps its first two letters but in dying, lying and tying (die, lie,
	// tie). So a plain word none of whose prefixes starts a term at most
	// as long as the word is not analysed. TestTermCoverage checks this
	// against terms.Each, TestStemKeepsPrefix the stemmer.
	prefixes map[string]int
	memo     map[string][]int // word → the numbers of the terms it yields
}

func newQueryTerms(query string) *queryTerms {
	q := &queryTerms{index: map[string]int{}, prefixes: map[string]int{}, memo: map[string][]int{}}
	for _, t := range strings.Fields(terms.Query(query)) {
		if _, ok := q.index[t]; ok {
			continue
		}
		q.index[t] = len(q.index)
		p := t[:min(2, len(t))]
		if m, ok := q.prefixes[p]; !ok || len(t) < m {
			q.prefixes[p] = len(t)
		}
	}
	return q
}

// mayYield reports whether the plain lowercase word w (3 bytes or more)
// may yield a query term.
func (q *queryTerms) mayYield(w string) bool {
	for _, p := range []string{w[:2], w[:1]} {
		if m, ok := q.prefixes[p]; ok && len(w) >= m {
			return true
		}
	}
	return len(w) == 5 && strings.HasSuffix(w, "ying") // dying, lying, tying
}

// coverage is the share of the query's terms found in texts (1 for a
// query without terms): those terms.Each finds there.
func (q *queryTerms) coverage(texts ...string) float64 {
	if len(q.index) == 0 {
		return 1
	}
	found := make([]bool, len(q.index))
	n := 0
	for _, text := range texts {
		// Whitespace never joins words, so analysing text word by word
		// (without the non-word runes around them) is analysing text.
		for _, w := range strings.Fields(text) {
			if w = strings.TrimFunc(w, notWordRune); w == "" {
				continue
			}
			for _, i := range q.termsOf(w) {
				if !found[i] {
					found[i] = true
					n++
				}
			}
		}
	}
	return float64(n) / float64(len(q.index))
}

// termsOf are the numbers of the query terms word w yields.
func (q *queryTerms) termsOf(w string) []int {
	if plainWord(w) {
		w = strings.ToLower(w)
		if len(w) > 2 && !q.mayYield(w) {
			return nil
		}
	}
	if ids, ok := q.memo[w]; ok {
		return ids
	}
	var ids []int
	terms.Each(w, func(t string) {
		if i, ok := q.index[t]; ok && !slices.Contains(ids, i) {
			ids = append(ids, i)
		}
	})
	q.memo[w] = ids
	return ids
}

// plainWord reports whether w is ASCII letters in one case, or capitalised:
// a word terms.Each turns into one term, its lowercased stem.
func plainWord(w string) bool {
	lower, upper := 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= 'a' && c <= 'z':
			lower++
		case c >= 'A' && c <= 'Z':
			if i > 0 {
				upper++
			}
		default:
			return false
		}
	}
	return upper == 0 || lower == 0
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
