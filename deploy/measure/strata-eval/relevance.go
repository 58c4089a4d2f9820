package main

// The relevance mode (-relevance): every hit of hybrid_search carries a
// relevance level (high, medium, low; queryd/tools/relevance.go). This mode
// asks every labelled query as an agent would (hybrid_search's defaults,
// and keyword only, alpha 0, which is all a server without embeddings has),
// records every hit with what the level is computed from and whether its
// document is judged relevant, and dumps that to a JSON file (-hits). The
// fit (-fit-only reads a dump) chooses the levels' thresholds on one half of
// the queries and reports them on the other half (docs/eval/relevance.md).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-kb/strata/deploy/mcpclient"
)

// relevanceCall is one way the relevance mode asks hybrid_search.
type relevanceCall struct {
	Name string // hybrid (the tool's defaults), keyword (alpha 0) or vector (alpha 1)
	TopK int    // hybrid_search's top_k
}

// relevanceCalls are asked for every query: the default call as agents
// make it (top_k 10, the tool's default), and top_k 50, enough for 10
// distinct documents in every dataset, in both modes; vector only (alpha
// 1) at top_k 10 is there to be reported, not fitted.
var relevanceCalls = []relevanceCall{{"hybrid", 10}, {"hybrid", 50}, {"keyword", 10}, {"keyword", 50}, {"vector", 10}}

func (c relevanceCall) args() map[string]any {
	args := map[string]any{"top_k": c.TopK}
	switch c.Name {
	case "keyword":
		args["alpha"] = 0.0
	case "vector":
		args["alpha"] = 1.0
	}
	return args
}

// HitsDump is what a relevance run recorded: every answer of every query.
type HitsDump struct {
	Command  string           `json:"command"`
	Date     time.Time        `json:"date"`
	Machine  string           `json:"machine"`
	Model    string           `json:"embedding_model"`
	Seconds  float64          `json:"run_seconds"`
	Datasets []DumpDataset    `json:"datasets"`
	Answers  []RelevanceQuery `json:"answers"`
}

// DumpDataset describes one dataset of the dump.
type DumpDataset struct {
	Name      string `json:"name"`
	Documents int    `json:"documents"`
	Chunks    int    `json:"chunks"`
	Queries   int    `json:"queries"`
}

// RelevanceQuery is one hybrid_search answer to one labelled query.
type RelevanceQuery struct {
	Dataset string `json:"dataset"`
	// Foreign is the project the query was asked in when it is not its
	// dataset's: none of its hits is relevant.
	Foreign string    `json:"foreign,omitempty"`
	QueryID string    `json:"query_id"`
	Query   string    `json:"query"`
	Call    string    `json:"call"` // hybrid, keyword or vector
	TopK    int       `json:"top_k"`
	Alpha   float64   `json:"alpha"` // as the answer says
	Hits    []DumpHit `json:"hits"`
	// Notes are the answer's text blocks besides its JSON: the server's
	// "No strong match" line when its best hit is low.
	Notes []string `json:"notes,omitempty"`
}

// DumpHit is one hit as hybrid_search returned it, with its document's judgement.
type DumpHit struct {
	Doc              string   `json:"doc"`
	Path             string   `json:"path"` // document_path
	ChunkID          string   `json:"chunk_id"`
	Score            float64  `json:"score"`
	KeywordRank      *int     `json:"keyword_rank,omitempty"`
	KeywordScore     *float64 `json:"keyword_score,omitempty"`
	VectorRank       *int     `json:"vector_rank,omitempty"`
	VectorSimilarity *float64 `json:"vector_similarity,omitempty"`
	Content          string   `json:"content"`
	HeadingPath      []string `json:"heading_path,omitempty"`
	Grade            int      `json:"grade"` // the judged grade; 0 = not relevant or not judged
	// Relevance is the level the server gave the hit, when it gives one.
	Relevance string `json:"relevance,omitempty"`
}

// runRelevance starts the stack, asks every query of every dataset, writes
// the dump to cfg.Hits, then fits and reports from it.
func runRelevance(ctx context.Context, cfg Config, args []string, datasets []*Dataset, started time.Time, stdout, stderr io.Writer) (err error) {
	ev, err := startEvaluator(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer func() { ev.stop(err != nil && ctx.Err() == nil) }()
	dump := HitsDump{Command: commandLine(args), Date: started.UTC(), Machine: describeMachine()}
	for _, d := range datasets {
		fmt.Fprintf(ev.progress, "%s: uploading %d documents\n", d.Name, len(d.Docs))
		if err := ev.upload(ctx, d); err != nil {
			return err
		}
		st, err := ev.waitIndexed(ctx, d)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		dump.Datasets = append(dump.Datasets, DumpDataset{Name: d.Name, Documents: st.DocumentCount, Chunks: st.ChunkCount, Queries: len(d.Queries)})
	}
	// Every dataset's queries are asked in its own project, then in the
	// next dataset's project (foreign: nothing there is relevant).
	for i, d := range datasets {
		answers, err := ev.askRelevance(ctx, d, "")
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		dump.Answers = append(dump.Answers, answers...)
		if len(datasets) > 1 {
			foreign := datasets[(i+1)%len(datasets)].Name
			answers, err := ev.askRelevance(ctx, d, foreign)
			if err != nil {
				return fmt.Errorf("%s in %s: %w", d.Name, foreign, err)
			}
			dump.Answers = append(dump.Answers, answers...)
		}
	}
	dump.Model = ev.model
	dump.Seconds = time.Since(started).Seconds()
	if err := writeDump(cfg.Hits, dump); err != nil {
		return err
	}
	fmt.Fprintln(ev.progress, "wrote", cfg.Hits)
	return fitAndReport(cfg, dump, stdout, stderr)
}

// askRelevance asks every query of d in every relevance call, in d's
// project or, when foreign is set, in that project (where no hit is relevant).
func (ev *evaluator) askRelevance(ctx context.Context, d *Dataset, foreign string) ([]RelevanceQuery, error) {
	project := d.Name
	if foreign != "" {
		project = foreign
	}
	out := make([]RelevanceQuery, len(d.Queries)*len(relevanceCalls))
	var done atomic.Int64
	total := len(out)
	fmt.Fprintf(ev.progress, "%s in %s: %d searches (%d queries × %d calls) on %d sessions\n", d.Name, project, total, len(d.Queries), len(relevanceCalls), len(ev.sessions))
	err := parallel(ctx, len(ev.sessions), total, func(ctx context.Context, worker, i int) error {
		q, c := d.Queries[i/len(relevanceCalls)], relevanceCalls[i%len(relevanceCalls)]
		args := c.args()
		args["query"], args["project_reference"] = q.Text, project
		var ans mcpclient.HybridAnswer
		res, err := mcpclient.CallJSON(ctx, ev.sessions[worker], "hybrid_search", args, &ans)
		if err != nil {
			return fmt.Errorf("query %s, %s top_k %d: %w", q.ID, c.Name, c.TopK, err)
		}
		rq := RelevanceQuery{Dataset: d.Name, Foreign: foreign, QueryID: q.ID, Query: q.Text, Call: c.Name, TopK: c.TopK, Alpha: ans.Alpha, Notes: notes(res)}
		docs := map[string]bool{}
		for _, h := range ans.Results {
			doc := strings.TrimSuffix(h.DocumentPath, ".md")
			grade := max(d.Qrels[q.ID][doc], 0)
			if foreign != "" {
				grade = 0
			}
			if !docs[doc] && len(docs) == cutoff {
				break // the hits of the first 10 distinct documents are kept
			}
			docs[doc] = true
			rq.Hits = append(rq.Hits, DumpHit{Doc: doc, ChunkID: h.ChunkID, Score: h.Score,
				KeywordRank: h.Explain.KeywordRank, KeywordScore: h.Explain.KeywordScore,
				VectorRank: h.Explain.VectorRank, VectorSimilarity: h.Explain.VectorSimilarity,
				Content: h.Content, HeadingPath: h.HeadingPath, Path: h.DocumentPath, Grade: grade, Relevance: h.Relevance})
		}
		out[i] = rq
		if n := done.Add(1); n%500 == 0 || int(n) == total {
			fmt.Fprintf(ev.progress, "%s in %s: %d/%d searches\n", d.Name, project, n, total)
		}
		return nil
	})
	return out, err
}

func writeDump(path string, d HitsDump) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func readDump(path string) (HitsDump, error) {
	var d HitsDump
	b, err := os.ReadFile(path)
	if err != nil {
		return d, fmt.Errorf("read hits dump: %w", err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("read hits dump %s: %w", path, err)
	}
	for _, a := range d.Answers {
		for i := range a.Hits {
			if a.Hits[i].Path == "" { // dumps made before the path was recorded
				a.Hits[i].Path = a.Hits[i].Doc + ".md"
			}
		}
	}
	return d, nil
}
