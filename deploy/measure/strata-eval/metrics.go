package main

import (
	"math"
	"slices"
	"strings"
)

// cutoff is the rank depth of every metric: nDCG@10 and recall@10.
const cutoff = 10

// Scores are one query's metrics.
type Scores struct {
	NDCG   float64
	Recall float64
}

// rankDocuments turns hits (document paths, best first; a document may
// have several chunks) into document ids ranked by their best chunk, at
// most k of them.
func rankDocuments(paths []string, k int) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		id := strings.TrimSuffix(p, ".md")
		if seen[id] {
			continue
		}
		seen[id] = true
		if out = append(out, id); len(out) == k {
			break
		}
	}
	return out
}

// score computes nDCG@k and recall@k of a ranking against graded
// judgements (document id → grade; grade > 0 is relevant). nDCG uses the
// grade as gain with a log2(rank+1) discount, normalised by the DCG of the
// ideal ranking of the judged documents (as trec_eval's ndcg_cut); recall
// is the share of relevant documents in the top k. A query with no
// relevant document scores 0.
func score(ranked []string, judged map[string]int, k int) Scores {
	var grades []int
	for _, g := range judged {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	if len(grades) == 0 {
		return Scores{}
	}
	slices.SortFunc(grades, func(a, b int) int { return b - a })
	ideal := dcg(grades[:min(k, len(grades))])
	var gains []int
	found := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		g := max(judged[id], 0)
		gains = append(gains, g)
		if g > 0 {
			found++
		}
	}
	return Scores{NDCG: dcg(gains) / ideal, Recall: float64(found) / float64(len(grades))}
}

// dcg is the discounted cumulative gain of gains in rank order.
func dcg(gains []int) float64 {
	sum := 0.0
	for i, g := range gains {
		sum += float64(g) / math.Log2(float64(i+2))
	}
	return sum
}

// mean averages the scores of a set of queries.
func mean(scores []Scores) Scores {
	var m Scores
	if len(scores) == 0 {
		return m
	}
	for _, s := range scores {
		m.NDCG += s.NDCG
		m.Recall += s.Recall
	}
	n := float64(len(scores))
	return Scores{NDCG: m.NDCG / n, Recall: m.Recall / n}
}
