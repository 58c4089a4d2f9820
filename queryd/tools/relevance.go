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
// half (go run ./deploy/cmd/strata-eval -relevance).

import (
	"math"
	"strings"

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
	relevanceHighStrength = 0.85
	relevanceHighCoverage = 0.50
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
	want := map[string]bool{}
	for _, t := range strings.Fields(terms.Query(query)) {
		want[t] = true
	}
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
		d.coverage = max(d.coverage, termCoverage(want, h.Chunk.Content, h.Chunk.HeadingPath, h.Chunk.FilePath))
	}
	out := make([]relevanceFeatures, len(hits))
	for i, k := range keys {
		d := docs[k]
		out[i] = relevanceFeatures{KeywordRatio: d.ratio, Coverage: d.coverage, Rank: d.rank}
	}
	return out
}

// termCoverage is the share of the terms in want found in a hit's content,
// headings and path (1 when want is empty).
func termCoverage(want map[string]bool, content string, headings []string, path string) float64 {
	if len(want) == 0 {
		return 1
	}
	found := map[string]bool{}
	see := func(t string) {
		if want[t] {
			found[t] = true
		}
	}
	terms.Each(content, see)
	for _, h := range headings {
		terms.Each(h, see)
	}
	terms.Each(path, see)
	return float64(len(found)) / float64(len(want))
}
