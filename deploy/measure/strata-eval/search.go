package main

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/schema"
)

// Mode is one way of calling hybrid_search.
type Mode struct {
	Name   string  `json:"name"`   // keyword, vector or hybrid
	Fusion string  `json:"fusion"` // relative or ranked ("" for keyword and vector: irrelevant)
	Alpha  float64 `json:"alpha"`  // 0 = keyword only, 1 = vector only
	// Match is hybrid_search's keyword_match: "" (its default, stemmed) or exact.
	Match string `json:"match,omitempty"`
	// HeadingWeight is hybrid_search's heading_weight (nil: its default).
	HeadingWeight *int `json:"heading_weight,omitempty"`
	// BM25 sets the Chunk collection's BM25 parameters for this mode's
	// searches (nil: schema.ChunkBM25); they apply at query time.
	BM25 *BM25 `json:"bm25,omitempty"`
}

// BM25 is a pair of BM25 parameters.
type BM25 struct {
	K1 float32 `json:"k1"`
	B  float32 `json:"b"`
}

// Label is the mode's name with what sets it apart: exact matching or a
// heading weight other than the server's default.
func (m Mode) Label() string {
	name := m.Name
	if m.Match != "" {
		name += " " + m.Match
	}
	if m.HeadingWeight != nil {
		name += fmt.Sprintf(" (headings x%d)", *m.HeadingWeight)
	}
	if m.BM25 != nil {
		name += fmt.Sprintf(" (BM25 k1=%g b=%g)", m.BM25.K1, m.BM25.B)
	}
	return name
}

func (m Mode) String() string {
	name := m.Label()
	if m.Fusion == "" {
		return name
	}
	return fmt.Sprintf("%s %s α=%s", name, m.Fusion, formatAlpha(m.Alpha))
}

func formatAlpha(a float64) string { return strconv.FormatFloat(a, 'f', -1, 64) }

// args are the mode's hybrid_search arguments. With alpha 0 or 1 only one
// ranking is fetched, and the fusion method does not change its order.
func (m Mode) args() map[string]any {
	fusion := m.Fusion
	if fusion == "" {
		fusion = "relative"
	}
	args := map[string]any{"fusion": fusion, "alpha": m.Alpha}
	if m.Match != "" {
		args["keyword_match"] = m.Match
	}
	if m.HeadingWeight != nil {
		args["heading_weight"] = *m.HeadingWeight
	}
	return args
}

// buildModes is keyword (stemmed, then exact), vector, then every fusion at
// every alpha, and the former default (exact words, relative, alpha 0.25)
// beside them.
func buildModes(fusions []string, alphas []float64, bm25 []BM25, headingWeights ...int) []Mode {
	modes := []Mode{{Name: "keyword", Alpha: 0}, {Name: "keyword", Alpha: 0, Match: "exact"}}
	for _, w := range headingWeights {
		modes = append(modes, Mode{Name: "keyword", Alpha: 0, HeadingWeight: &w})
	}
	for _, p := range bm25 {
		modes = append(modes, Mode{Name: "keyword", Alpha: 0, BM25: &p})
	}
	modes = append(modes, Mode{Name: "vector", Alpha: 1})
	for _, f := range fusions {
		for _, a := range alphas {
			modes = append(modes, Mode{Name: "hybrid", Fusion: f, Alpha: a})
		}
	}
	return append(modes, Mode{Name: "hybrid", Fusion: "relative", Alpha: 0.25, Match: "exact"})
}

// ModeResult is one mode's averages over a dataset's queries.
type ModeResult struct {
	Mode
	NDCG   float64 `json:"ndcg_at_10"`
	Recall float64 `json:"recall_at_10"`
	// LatencyMS is the mean hybrid_search call time in milliseconds, with
	// the -clients sessions asking at once.
	LatencyMS float64 `json:"mean_latency_ms"`
	// Short counts queries whose top_k chunks held fewer than 10 distinct documents.
	Short int `json:"queries_under_10_docs"`
}

// DatasetResult is one dataset's evaluation.
type DatasetResult struct {
	Name          string       `json:"name"`
	CorpusSize    int          `json:"corpus_documents"`
	Documents     int          `json:"documents_uploaded"`
	KeptRelevant  int          `json:"relevant_documents_kept,omitempty"`
	Indexed       int          `json:"documents_indexed"`
	Failed        int          `json:"documents_failed"`
	Chunks        int          `json:"chunks"`
	JudgedQueries int          `json:"queries_with_judgements"`
	Queries       int          `json:"queries_evaluated"`
	RelevantPairs int          `json:"relevant_pairs"`
	Graded        bool         `json:"graded"`
	UploadSeconds float64      `json:"upload_seconds"`
	IndexSeconds  float64      `json:"index_seconds"`
	SearchSeconds float64      `json:"search_seconds"`
	Subsampled    bool         `json:"subsampled"`
	Failures      []string     `json:"failures,omitempty"`
	Modes         []ModeResult `json:"modes"`
}

// evaluate uploads d, waits until it is indexed, and scores every mode.
func (ev *evaluator) evaluate(ctx context.Context, d *Dataset, modes []Mode) (DatasetResult, error) {
	res := DatasetResult{Name: d.Name, CorpusSize: d.CorpusSize, Documents: len(d.Docs), KeptRelevant: d.KeptRelevant,
		JudgedQueries: d.JudgedQueries, Queries: len(d.Queries), Subsampled: d.Subsampled()}
	for _, q := range d.Queries {
		for _, g := range d.Qrels[q.ID] {
			if g > 0 {
				res.RelevantPairs++
			}
			res.Graded = res.Graded || g > 1
		}
	}
	t := time.Now()
	fmt.Fprintf(ev.progress, "%s: uploading %d documents\n", d.Name, len(d.Docs))
	if err := ev.upload(ctx, d); err != nil {
		return res, err
	}
	res.UploadSeconds = time.Since(t).Seconds()
	st, err := ev.waitIndexed(ctx, d)
	if err != nil {
		return res, err
	}
	res.IndexSeconds = time.Since(t).Seconds() - res.UploadSeconds
	res.Indexed, res.Failed, res.Chunks = st.DocumentCount, st.FailedCount+st.UnsupportedCount, st.ChunkCount
	for _, f := range st.Failures {
		res.Failures = append(res.Failures, f.Path+": "+f.Error)
	}
	t = time.Now()
	// Modes with their own BM25 parameters run apart, each with the
	// collection set to them, then the default comes back.
	var plain []Mode
	for _, m := range modes {
		if m.BM25 == nil {
			plain = append(plain, m)
		}
	}
	results, err := ev.search(ctx, d, plain)
	if err != nil {
		return res, err
	}
	for _, m := range modes {
		if m.BM25 == nil {
			res.Modes = append(res.Modes, results[0])
			results = results[1:]
			continue
		}
		r, err := ev.searchWithBM25(ctx, d, m)
		if err != nil {
			return res, err
		}
		res.Modes = append(res.Modes, r)
	}
	res.SearchSeconds = time.Since(t).Seconds()
	return res, nil
}

// searchWithBM25 runs one mode with the Chunk collection's BM25 parameters
// set to the mode's, restoring schema.ChunkBM25 afterwards.
func (ev *evaluator) searchWithBM25(ctx context.Context, d *Dataset, m Mode) (ModeResult, error) {
	wv, err := schema.NewClient(ev.stack.Env.WeaviateHost, ev.stack.Servers.WeaviateGRPCHost, ev.stack.Env.WeaviateWriterKey)
	if err != nil {
		return ModeResult{}, err
	}
	if err := schema.SetBM25(ctx, wv, schema.ChunkClass, models.BM25Config{K1: m.BM25.K1, B: m.BM25.B}); err != nil {
		return ModeResult{}, err
	}
	defer func() {
		if err := schema.SetBM25(context.WithoutCancel(ctx), wv, schema.ChunkClass, schema.ChunkBM25); err != nil {
			fmt.Fprintln(ev.progress, "restore BM25:", err)
		}
	}()
	out, err := ev.search(ctx, d, []Mode{m})
	if err != nil {
		return ModeResult{}, err
	}
	return out[0], nil
}

// hybridAnswer is the part of hybrid_search's answer the evaluation reads.
type hybridAnswer struct {
	Results []struct {
		DocumentPath string  `json:"document_path"`
		Score        float64 `json:"score"`
	} `json:"results"`
}

// search asks every query in every mode and averages the scores per mode.
func (ev *evaluator) search(ctx context.Context, d *Dataset, modes []Mode) ([]ModeResult, error) {
	type outcome struct {
		scores  Scores
		short   bool
		elapsed time.Duration
	}
	outcomes := make([]outcome, len(d.Queries)*len(modes)) // query-major
	total := len(outcomes)
	var done atomic.Int64
	fmt.Fprintf(ev.progress, "%s: %d searches (%d queries × %d modes) on %d sessions\n", d.Name, total, len(d.Queries), len(modes), len(ev.sessions))
	err := parallel(ctx, len(ev.sessions), total, func(ctx context.Context, worker, i int) error {
		q, m := d.Queries[i/len(modes)], modes[i%len(modes)]
		args := m.args()
		args["query"], args["project_reference"], args["top_k"] = q.Text, d.Name, ev.cfg.TopK
		var ans hybridAnswer
		start := time.Now()
		if _, err := mcpclient.CallJSON(ctx, ev.sessions[worker], "hybrid_search", args, &ans); err != nil {
			return fmt.Errorf("query %s, %s: %w", q.ID, m, err)
		}
		elapsed := time.Since(start)
		paths := make([]string, len(ans.Results))
		for j, h := range ans.Results {
			paths[j] = h.DocumentPath
		}
		ranked := rankDocuments(paths, cutoff)
		outcomes[i] = outcome{scores: score(ranked, d.Qrels[q.ID], cutoff), short: len(ranked) < cutoff, elapsed: elapsed}
		if n := done.Add(1); n%500 == 0 || int(n) == total {
			fmt.Fprintf(ev.progress, "%s: %d/%d searches\n", d.Name, n, total)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]ModeResult, len(modes))
	for mi, m := range modes {
		var scores []Scores
		var elapsed time.Duration
		r := ModeResult{Mode: m}
		for qi := range d.Queries {
			o := outcomes[qi*len(modes)+mi]
			scores = append(scores, o.scores)
			elapsed += o.elapsed
			if o.short {
				r.Short++
			}
		}
		avg := mean(scores)
		r.NDCG, r.Recall = avg.NDCG, avg.Recall
		r.LatencyMS = elapsed.Seconds() * 1000 / float64(len(d.Queries))
		out[mi] = r
	}
	return out, nil
}
