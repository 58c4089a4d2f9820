package main

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// queryParams are the constants of queryd/tools/relevance.go; the mirror
// must give the levels queryd/tools' TestRelevanceLevels expects there.
var queryParams = relevanceParams{RankWeight: 0.25, LowStrength: 0.19, LowCoverage: 0.27, HighStrength: 0.70, HighCoverage: 0.60}

// mirrorAnswer is queryd/tools' relevanceAnswer as hybrid_search returns it.
func mirrorAnswer(alpha float64) RelevanceQuery {
	h := func(path, content string, kwRank int, kwScore float64) DumpHit {
		d := DumpHit{Path: path, Content: content}
		if kwRank > 0 {
			d.KeywordRank, d.KeywordScore = &kwRank, &kwScore
		}
		return d
	}
	return RelevanceQuery{Query: "heat conduction in composite slabs", Alpha: alpha, Hits: []DumpHit{
		h("a.md", "Heat conduction through composite slabs", 1, 10),
		h("b.md", "Conduction of heat in pipes", 2, 6),
		h("a.md", "Results are tabulated.", 0, 0),
		h("c.md", "Slabs of concrete", 4, 1),
		h("d.md", "Thermal diffusion in layered plates", 0, 0),
		h("e.md", "Heat", 3, 9),
	}}
}

func TestRelevanceMirror(t *testing.T) {
	for _, tc := range []struct {
		alpha float64
		want  []string
	}{
		{0.25, []string{"high", "medium", "high", "low", "low", "low"}},
		{1, []string{"high", "medium", "high", "low", "low", "low"}},
	} {
		var got []string
		for _, f := range relevanceFeaturesOf(mirrorAnswer(tc.alpha)) {
			got = append(got, queryParams.level(f))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("alpha %g: levels %q, want %q", tc.alpha, got, tc.want)
		}
	}
	f := relevanceFeaturesOf(mirrorAnswer(0.25))
	if want := (relFeatures{KeywordRatio: 0.9, Coverage: 0.25, Rank: 6}); math.Abs(f[5].KeywordRatio-want.KeywordRatio) > 1e-9 || f[5].Coverage != want.Coverage || f[5].Rank != want.Rank {
		t.Errorf("features of e.md = %+v, want %+v", f[5], want)
	}
}

// relevantRows makes rows of one call: relevant hits at the given
// strengths (keyword ratio at rank 1, full coverage), and non-relevant ones.
func relevantRows(call string, relevant, nonRelevant []float64) []relRow {
	var rows []relRow
	for _, s := range relevant {
		rows = append(rows, relRow{Call: call, TopK: 10, Relevant: true, Rank: 1, F: relFeatures{KeywordRatio: s, Coverage: 1, Rank: 1}})
	}
	for _, s := range nonRelevant {
		rows = append(rows, relRow{Call: call, TopK: 10, Rank: 2, F: relFeatures{KeywordRatio: s, Coverage: 1, Rank: 1}})
	}
	return rows
}

func TestLowStrengthFor(t *testing.T) {
	// 20 relevant hits at 0.05, 0.10, ... 1.00: a 9% budget hides 1 of them.
	var rel []float64
	for i := 1; i <= 20; i++ {
		rel = append(rel, float64(i)*0.05)
	}
	rows := relevantRows("hybrid", rel, nil)
	p := relevanceParams{}
	got, fits := lowStrengthFor(rows, p)
	if !fits || math.Abs(got-0.10) > 1e-9 {
		t.Fatalf("lowStrengthFor = %v, %v; want 0.10, true", got, fits)
	}
	p.LowStrength = got
	if r := lowRatesOf(rows, p).Relevant; r > lowBudget {
		t.Fatalf("relevant marked low %.3f > budget %.2f", r, lowBudget)
	}
	// Coverage that alone hides more than the budget does not fit.
	for i := range rows[:3] {
		rows[i].F.Coverage = 0.1
	}
	if _, fits := lowStrengthFor(rows, relevanceParams{LowCoverage: 0.2}); fits {
		t.Fatal("3 of 20 relevant hits under the low coverage fit a 9% budget")
	}
}

// TestFitRelevance fits separable data: relevant hits strong, non-relevant
// weak; low must take the weak ones and hide at most the budget.
func TestFitRelevance(t *testing.T) {
	var rel, non []float64
	for i := range 100 {
		rel = append(rel, 0.5+float64(i)*0.005) // 0.5 .. 0.995
		non = append(non, float64(i)*0.004)     // 0 .. 0.396
	}
	var rows []relRow
	for _, call := range fitCallsForTest() {
		rows = append(rows, relevantRows(call, rel, non)...)
	}
	p, _ := fitRelevance(rows)
	for _, call := range fitCallsForTest() {
		lr := lowRatesOf(filterRows(rows, func(r relRow) bool { return r.Call == call }), p)
		if lr.Relevant > lowBudget || lr.NonRelevant < 0.99 {
			t.Errorf("%s: %+v with %+v: want relevant low <= %.2f and every non-relevant low", call, lr, p, lowBudget)
		}
	}
	if p.HighStrength < p.LowStrength || p.HighCoverage < p.LowCoverage {
		t.Errorf("high under low: %+v", p)
	}
}

func fitCallsForTest() []string {
	var out []string
	for _, g := range fitGroups {
		out = append(out, g.call)
	}
	return out
}

// The halves are fixed by dataset and query id and about even.
func TestHeldOut(t *testing.T) {
	if heldOut("scifact", "1") != heldOut("scifact", "1") {
		t.Fatal("heldOut is not deterministic")
	}
	n := 0
	for i := range 1000 {
		if heldOut("d", fmt.Sprint(i)) {
			n++
		}
	}
	if n < 450 || n > 550 {
		t.Fatalf("%d of 1000 queries held out, want about half", n)
	}
}

func TestHundredths(t *testing.T) {
	for n, want := range map[int]float64{85: 0.85, 19: 0.19, 27: 0.27, 25: 0.25, 5: 0.05, 100: 1, 0: 0, -3: -0.03} {
		if got := hundredths(n); got != want {
			t.Errorf("hundredths(%d) = %v, want %v", n, got, want)
		}
	}
}
