package tools

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/terms"
)

// TestRelevanceOf checks the levels at and around their thresholds.
func TestRelevanceOf(t *testing.T) {
	// rankAt is the rank at which a keyword ratio of 1 has strength s.
	rankAt := func(s float64) int { return int(math.Round(math.Exp((1 - s) / relevanceRankWeight))) }
	for _, tc := range []struct {
		name string
		f    relevanceFeatures
		want string
	}{
		{"best hit with every query term", relevanceFeatures{KeywordRatio: 1, Coverage: 1, Rank: 1}, relevanceHigh},
		{"strength at the high threshold", relevanceFeatures{KeywordRatio: relevanceHighStrength, Coverage: relevanceHighCoverage, Rank: 1}, relevanceHigh},
		{"coverage just under high", relevanceFeatures{KeywordRatio: 1, Coverage: relevanceHighCoverage - 0.01, Rank: 1}, relevanceMedium},
		{"strength just under high", relevanceFeatures{KeywordRatio: relevanceHighStrength - 0.01, Coverage: 1, Rank: 1}, relevanceMedium},
		{"strength at the low threshold", relevanceFeatures{KeywordRatio: relevanceLowStrength, Coverage: 1, Rank: 1}, relevanceMedium},
		{"strength just under low", relevanceFeatures{KeywordRatio: relevanceLowStrength - 0.01, Coverage: 1, Rank: 1}, relevanceLow},
		{"coverage at the low threshold", relevanceFeatures{KeywordRatio: 1, Coverage: relevanceLowCoverage, Rank: 1}, relevanceMedium},
		{"coverage just under low", relevanceFeatures{KeywordRatio: 1, Coverage: relevanceLowCoverage - 0.01, Rank: 1}, relevanceLow},
		{"not found by keyword", relevanceFeatures{KeywordRatio: 0, Coverage: 1, Rank: 1}, relevanceLow},
		{"strong but far down", relevanceFeatures{KeywordRatio: 1, Coverage: 1, Rank: rankAt(relevanceLowStrength) + 1}, relevanceLow},
		{"rank 0 counts as 1", relevanceFeatures{KeywordRatio: 1, Coverage: 1}, relevanceHigh},
		{"half as strong as the best, second", relevanceFeatures{KeywordRatio: 0.5, Coverage: 0.5, Rank: 2}, relevanceMedium},
		{"a tenth of the best", relevanceFeatures{KeywordRatio: 0.1, Coverage: 0.8, Rank: 2}, relevanceLow},
	} {
		if got := relevanceOf(tc.f); got != tc.want {
			t.Errorf("%s: relevanceOf(%+v) = %s (strength %.3f), want %s", tc.name, tc.f, got, tc.f.strength(), tc.want)
		}
	}
}

// relevanceAnswer is a hand-made answer to "heat conduction in composite
// slabs" (terms heat, conduct, composit, slab), best first.
func relevanceAnswer() []fusedHit {
	h := func(path, content string, kwRank int, kwScore float64) fusedHit {
		return fusedHit{Chunk: store.Chunk{Project: "p", FilePath: path, Content: content}, KeywordRank: kwRank, KeywordScore: kwScore}
	}
	return []fusedHit{
		h("a.md", "Heat conduction through composite slabs", 1, 10), // all 4 terms, the best BM25
		h("b.md", "Conduction of heat in pipes", 2, 6),              // 2 of 4, ratio 0.6
		h("a.md", "Results are tabulated.", 0, 0),                   // a.md again: takes a.md's best
		h("c.md", "Slabs of concrete", 4, 1),                        // ratio 0.1
		h("d.md", "Thermal diffusion in layered plates", 0, 0),      // vector only
		h("e.md", "Heat", 3, 9),                                     // ratio 0.9, 1 of 4 terms
	}
}

func TestAnswerRelevance(t *testing.T) {
	got := answerRelevance("heat conduction in composite slabs", relevanceAnswer(), true)
	want := []relevanceFeatures{
		{KeywordRatio: 1, Coverage: 1, Rank: 1},
		{KeywordRatio: 0.6, Coverage: 0.5, Rank: 2},
		{KeywordRatio: 1, Coverage: 1, Rank: 1},
		{KeywordRatio: 0.1, Coverage: 0.25, Rank: 4},
		{KeywordRatio: 0, Coverage: 0, Rank: 5},
		{KeywordRatio: 0.9, Coverage: 0.25, Rank: 6},
	}
	if !slices.EqualFunc(got, want, func(a, b relevanceFeatures) bool {
		return math.Abs(a.KeywordRatio-b.KeywordRatio) < 1e-9 && math.Abs(a.Coverage-b.Coverage) < 1e-9 && a.Rank == b.Rank
	}) {
		t.Fatalf("answerRelevance =\n%+v\nwant\n%+v", got, want)
	}
}

func TestRelevanceLevels(t *testing.T) {
	q := "heat conduction in composite slabs"
	for _, tc := range []struct {
		name            string
		hits            []fusedHit
		keywordSearched bool
		want            []string
	}{
		{"hybrid", relevanceAnswer(), true, []string{relevanceHigh, relevanceMedium, relevanceHigh, relevanceLow, relevanceLow, relevanceLow}},
		// Without a keyword side every ratio is 1: coverage and rank decide.
		{"vector only", relevanceAnswer(), false, []string{relevanceHigh, relevanceMedium, relevanceHigh, relevanceLow, relevanceLow, relevanceLow}},
		// No BM25 hit at all: nothing shares the query's words strongly.
		{"keyword found nothing", relevanceAnswer()[4:5], true, []string{relevanceLow}},
		{"no hits", nil, true, []string{}},
	} {
		got := relevanceLevels(q, tc.hits, tc.keywordSearched)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: relevanceLevels = %q, want %q", tc.name, got, tc.want)
		}
	}
	// A query without terms has nothing to miss: coverage 1.
	if got := answerRelevance("?!", relevanceAnswer()[:1], true); got[0].Coverage != 1 {
		t.Errorf("coverage of a query without terms = %v, want 1", got[0].Coverage)
	}
	// Documents of different projects with the same path are different documents.
	hits := relevanceAnswer()[:3]
	hits[2].Chunk.Project = "other"
	if got := relevanceLevels(q, hits, true); got[2] != relevanceLow {
		t.Errorf("a.md of another project without keyword score: %s, want low", got[2])
	}
}

// A single ranking gets the levels of the same hits in a fused answer.
func TestChunkRelevanceLevels(t *testing.T) {
	q := "heat conduction in composite slabs"
	var keyword, vector []store.Chunk
	for _, h := range relevanceAnswer() {
		c := h.Chunk
		if h.KeywordRank > 0 {
			c.Score = h.KeywordScore
			keyword = append(keyword, c)
		}
		vector = append(vector, h.Chunk)
	}
	// keyword: a.md, b.md, c.md, e.md with BM25 10, 6, 1, 9 (not sorted: the ratio does not care).
	if got, want := chunkRelevanceLevels(q, keyword, true), []string{relevanceHigh, relevanceMedium, relevanceLow, relevanceLow}; !slices.Equal(got, want) {
		t.Errorf("keyword: %q, want %q", got, want)
	}
	if got, want := chunkRelevanceLevels(q, vector, false), relevanceLevels(q, relevanceAnswer(), false); !slices.Equal(got, want) {
		t.Errorf("vector: %q, want %q", got, want)
	}
}

// naiveCoverage is what queryTerms.coverage must equal: every term
// terms.Each finds in the texts.
func naiveCoverage(query string, texts ...string) float64 {
	want := map[string]bool{}
	for _, t := range strings.Fields(terms.Query(query)) {
		want[t] = true
	}
	if len(want) == 0 {
		return 1
	}
	found := map[string]bool{}
	for _, text := range texts {
		terms.Each(text, func(t string) {
			if want[t] {
				found[t] = true
			}
		})
	}
	return float64(len(found)) / float64(len(want))
}

// TestTermCoverage checks the word skipping of queryTerms against
// terms.Each: on hand-made words and on the evaluation's labelled sets
// (each query against its judged documents and others).
func TestTermCoverage(t *testing.T) {
	check := func(query string, texts ...string) {
		t.Helper()
		if got, want := newQueryTerms(query).coverage(texts...), naiveCoverage(query, texts...); got != want {
			t.Fatalf("coverage(%q, %.200q) = %v, want %v", query, texts, got, want)
		}
	}
	check("heat conduction in composite slabs", "Heat-conduction (through) COMPOSITE slabs.", "b.md")
	check("dying lying tying skies news", "Dying, lying and tying under the skies: news")
	check("yellow yields", "Yellow yielding YIELDS")
	check("HTTPServer panicNil asn1_der_coding", "the HTTPServer calls panicNil in asn1_der_coding, e.g. net/http")
	check("generously hopefully", "generous hopeful generously hopefully")
	check("Ünïcode wörds 東京", "ünïcode Wörds 東京_tokyo")
	check("?!", "anything")
	check("a of", "a b of")

	words := 0
	for _, set := range []string{"scifact", "cranfield", "identifiers"} {
		dir := filepath.Join("..", "..", "deploy", "measure", "strata-eval", "testdata", set)
		docs := readLines(t, filepath.Join(dir, "corpus.jsonl"))
		queries := readLines(t, filepath.Join(dir, "queries.jsonl"))
		if len(docs) == 0 || len(queries) == 0 {
			t.Logf("%s: not found, skipped", dir)
			continue
		}
		for i, q := range queries {
			for j := range 2 {
				d := docs[(i*2+j)*7919%len(docs)]
				check(q, d)
				words += len(strings.Fields(d))
			}
		}
	}
	t.Logf("%d words of the labelled sets checked", words)
}

// readLines reads the "title" and "text" (or "text" alone) of a JSON-lines file.
func readLines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		var v struct{ Title, Text string }
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, strings.TrimSpace(v.Title+"\n"+v.Text))
	}
	return out
}

// TestStemKeepsPrefix checks what queryTerms assumes of the stemmer: a
// plain word's one term is no longer than the word and starts with its
// first two letters, or its only letter with the word's first (but in
// dying, lying and tying), on every plain word
// of the labelled sets and on the stemmer's special words.
func TestStemKeepsPrefix(t *testing.T) {
	words := map[string]bool{}
	for _, w := range strings.Fields("skis skies dying lying tying idly gently ugly early only singly sky news howe atlas cosmos bias andes " +
		"inning innings outing outings canning cannings herring herrings earring earrings proceed exceed succeed " +
		"hoping using cries ties dies yes bus gas crying flies generously communism arsenal yielding yearly") {
		words[w] = true
	}
	for _, set := range []string{"scifact", "cranfield", "identifiers"} {
		dir := filepath.Join("..", "..", "deploy", "measure", "strata-eval", "testdata", set)
		for _, text := range readLines(t, filepath.Join(dir, "corpus.jsonl")) {
			for _, w := range strings.Fields(text) {
				if w = strings.TrimFunc(w, notWordRune); plainWord(w) && len(w) > 2 {
					words[strings.ToLower(w)] = true
				}
			}
		}
	}
	for w := range words {
		var got []string
		terms.Each(w, func(t string) { got = append(got, t) })
		if len(got) != 1 {
			t.Fatalf("plain word %q yields %q, want one term", w, got)
		}
		s := got[0]
		if n := min(2, len(s)); len(s) > len(w) || (s[:n] != w[:n] && w != "dying" && w != "lying" && w != "tying") {
			t.Errorf("%q stems to %q", w, s)
		}
	}
	t.Logf("%d words", len(words))
}

// TestCitationNamesTheUnit: a hit in a deck names its slide and section
// (its notes, "(hidden)"), in a workbook its sheet, in an e-book its
// chapter; other formats' pages stay pages.
func TestCitationNamesTheUnit(t *testing.T) {
	for _, tt := range []struct {
		c    store.Chunk
		want string
	}{
		{store.Chunk{FilePath: "decks/q3.pptx", PageStart: 2, PageEnd: 2, HeadingPath: []string{"Roadmap", "Notes"}}, `decks/q3.pptx, slide 2, section "Roadmap > Notes"`},
		{store.Chunk{FilePath: "books/a.xlsx", PageStart: 2, PageEnd: 3}, "books/a.xlsx, sheets 2-3"},
		{store.Chunk{FilePath: "b.epub", PageStart: 4, PageEnd: 4, HeadingPath: []string{"Chapter 4"}}, `b.epub, chapter 4, section "Chapter 4"`},
		{store.Chunk{FilePath: "r.pdf", PageStart: 2, PageEnd: 2, HeadingPath: []string{"Results"}}, `r.pdf, page 2, section "Results"`},
		{store.Chunk{FilePath: "n.md", HeadingPath: []string{"A", "B"}}, `n.md, section "A > B"`},
	} {
		if got := citation(tt.c); got != tt.want {
			t.Errorf("citation(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}
