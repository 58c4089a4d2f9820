package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestScore checks nDCG@k and recall@k against a hand-computed example.
func TestScore(t *testing.T) {
	// Judged: a=3, b=2, c=1, e=1 relevant; d judged not relevant; x not judged.
	judged := map[string]int{"a": 3, "b": 2, "c": 1, "d": 0, "e": 1}
	ranked := []string{"x", "a", "c", "d", "b"}
	// DCG  = 3/log2(3) + 1/log2(4) + 2/log2(6)           = 1.892789 + 0.5 + 0.773706 = 3.166495
	// IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4) + 1/log2(5) = 3 + 1.261860 + 0.5 + 0.430677 = 5.192536
	for _, tc := range []struct {
		name         string
		ranked       []string
		judged       map[string]int
		k            int
		ndcg, recall float64
	}{
		{"graded", ranked, judged, 10, 3.1664949 / 5.1925361, 3.0 / 4},
		// @2: DCG = 3/log2(3) = 1.892789; IDCG = 3 + 2/log2(3) = 4.261860
		{"cut at 2", ranked, judged, 2, 1.8927893 / 4.2618595, 1.0 / 4},
		{"binary, first", []string{"r", "n"}, map[string]int{"r": 1}, 10, 1, 1},
		{"binary, third", []string{"n", "m", "r"}, map[string]int{"r": 1}, 10, 0.5, 1},
		{"nothing found", []string{"n"}, map[string]int{"r": 1, "s": 1}, 10, 0, 0},
		{"empty ranking", nil, map[string]int{"r": 1}, 10, 0, 0},
		{"no relevant document", []string{"r"}, map[string]int{"r": 0}, 10, 0, 0},
		// 12 relevant, all found in order: perfect nDCG@10 but recall 10/12.
		{"more relevant than k", strings.Fields("a b c d e f g h i j k l"), grades("a b c d e f g h i j k l"), 10, 1, 10.0 / 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := score(tc.ranked, tc.judged, tc.k)
			if !near(got.NDCG, tc.ndcg) || !near(got.Recall, tc.recall) {
				t.Fatalf("score = %+v, want nDCG %.6f recall %.6f", got, tc.ndcg, tc.recall)
			}
		})
	}
	if m := mean([]Scores{{1, 0.5}, {0, 0.25}}); !near(m.NDCG, 0.5) || !near(m.Recall, 0.375) {
		t.Fatalf("mean = %+v", m)
	}
}

func grades(ids string) map[string]int {
	m := map[string]int{}
	for _, id := range strings.Fields(ids) {
		m[id] = 1
	}
	return m
}

// TestRankDocuments ranks documents by their best chunk.
func TestRankDocuments(t *testing.T) {
	got := rankDocuments([]string{"7.md", "7.md", "3.md", "7.md", "9.md", "1.md"}, 3)
	if want := []string{"7", "3", "9"}; !slices.Equal(got, want) {
		t.Fatalf("rankDocuments = %v, want %v", got, want)
	}
}

func TestParseQrels(t *testing.T) {
	q, err := parseQrels(strings.NewReader("query-id\tcorpus-id\tscore\n1\t184\t3\n1\t29\t0\n2\t5\t1\n2\t5\t2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if q["1"]["184"] != 3 || q["2"]["5"] != 2 || q.relevant("1") != 1 || q.relevant("3") != 0 {
		t.Fatalf("qrels %v", q)
	}
	if _, err := parseQrels(strings.NewReader("query-id\tcorpus-id\tscore\n1\t184\n")); err == nil {
		t.Fatal("short line accepted")
	}
}

// TestSubsample keeps every document relevant to an evaluated query.
func TestSubsample(t *testing.T) {
	d := &Dataset{Qrels: Qrels{"q1": {"d5": 1}, "q2": {"d4": 1}}, Queries: []Query{{ID: "q1"}, {ID: "q2"}}}
	for _, id := range []string{"d1", "d2", "d3", "d4", "d5"} {
		d.Docs = append(d.Docs, Doc{ID: id})
	}
	d.CorpusSize, d.JudgedQueries = 5, 2
	d.subsample(2, 1)
	var ids []string
	for _, doc := range d.Docs {
		ids = append(ids, doc.ID)
	}
	if want := []string{"d1", "d5"}; !slices.Equal(ids, want) || len(d.Queries) != 1 || d.KeptRelevant != 1 || !d.Subsampled() {
		t.Fatalf("subsample kept %v, %d queries, %d relevant", ids, len(d.Queries), d.KeptRelevant)
	}
}

// TestChoose picks the hybrid mode with the best nDCG@10 averaged over datasets.
func TestChoose(t *testing.T) {
	modes := buildModes([]string{"relative", "ranked"}, []float64{0.5}, nil)
	res := func(ndcg ...float64) DatasetResult {
		var d DatasetResult
		for i, m := range modes {
			d.Modes = append(d.Modes, ModeResult{Mode: m, NDCG: ndcg[i]})
		}
		return d
	}
	// keyword, keyword exact, vector, relative 0.5, ranked 0.5, hybrid exact relative 0.25 (never chosen)
	c := choose([]DatasetResult{res(0.95, 0.9, 0.1, 0.6, 0.4, 0.99), res(0.1, 0.1, 0.2, 0.3, 0.6, 0.99)}, modes)
	if c.Mode != (Mode{Name: "hybrid", Fusion: "ranked", Alpha: 0.5}) || !near(c.NDCG, 0.5) || c.RunnerUp.Fusion != "relative" {
		t.Fatalf("choice %+v", c)
	}
	if !strings.Contains(c.Text, `Method: "ranked", Alpha: 0.5`) || !strings.Contains(c.Text, "higher than every hybrid setting") {
		t.Fatalf("choice text: %s", c.Text)
	}
}

// TestRenderRoundTrip rewrites a report from its JSON without changing it.
func TestRenderRoundTrip(t *testing.T) {
	modes := buildModes([]string{"relative"}, []float64{0.5}, nil)
	d := DatasetResult{Name: "tiny", CorpusSize: 10, Documents: 5, KeptRelevant: 2, Queries: 3, JudgedQueries: 4, Graded: true}
	for i, m := range modes {
		d.Modes = append(d.Modes, ModeResult{Mode: m, NDCG: 0.1 * float64(i+1), Recall: 0.2, LatencyMS: 12})
	}
	r := Report{Command: "go run ./deploy/measure/strata-eval", Machine: "test", Model: "m", TopK: 50, Sessions: 2, Modes: modes,
		Datasets: []DatasetResult{d}, Duration: 90 * time.Second}
	r.Choice = choose(r.Datasets, modes)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.md"), filepath.Join(dir, "b.md")
	if err := writeReport(first, r); err != nil {
		t.Fatal(err)
	}
	if err := render(jsonPath(first), second); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if string(a) != string(b) {
		t.Fatalf("rendered report differs:\n%s\n---\n%s", a, b)
	}
	for _, want := range []string{"5 of 10", "3 of 4", "tiny is subsampled", `Method: "relative", Alpha: 0.5`} {
		if !strings.Contains(string(a), want) {
			t.Errorf("report lacks %q:\n%s", want, a)
		}
	}
}

// The identifiers set ships with the repository and loads: every query has
// its one relevant document in the corpus.
func TestIdentifiersDataset(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := datasetDir(Config{Root: root, DataDir: t.TempDir()}, "identifiers")
	d, err := loadDataset(dir, "identifiers")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Docs) != 126 || len(d.Queries) != 207 {
		t.Fatalf("%d documents, %d queries", len(d.Docs), len(d.Queries))
	}
	for _, q := range d.Queries {
		if len(d.Qrels[q.ID]) != 1 {
			t.Fatalf("query %s (%s) has %d relevant documents", q.ID, q.Text, len(d.Qrels[q.ID]))
		}
	}
}

// SciFact and Cranfield ship with the repository too (testdata/<name>/README.md
// names each one's source and licence), so `go tool task eval` needs nothing
// beside a clone.
func TestPublicDatasetsShipWithTheRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for name, docs := range map[string]int{"scifact": 5183, "cranfield": 1400} {
		d, err := loadDataset(datasetDir(Config{Root: root, DataDir: t.TempDir()}, name), name)
		if err != nil {
			t.Fatal(err)
		}
		if d.CorpusSize != docs || len(d.Queries) == 0 {
			t.Fatalf("%s: %d documents (want %d), %d queries", name, d.CorpusSize, docs, len(d.Queries))
		}
	}
}
