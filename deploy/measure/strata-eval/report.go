package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Report is one evaluation run.
type Report struct {
	Command    string          `json:"command"`
	Date       time.Time       `json:"date"`
	Machine    string          `json:"machine"`
	Model      string          `json:"embedding_model"`
	TopK       int             `json:"top_k"`
	Sessions   int             `json:"sessions"`
	Modes      []Mode          `json:"modes"`
	Datasets   []DatasetResult `json:"datasets"`
	Choice     Choice          `json:"choice"`
	Duration   time.Duration   `json:"-"`
	RunSeconds float64         `json:"run_seconds"`
}

// Choice is the hybrid setting with the best nDCG@10, averaged over the
// datasets (each weighs the same), to become queryd's DefaultFusion.
type Choice struct {
	Mode     Mode    `json:"mode"`
	NDCG     float64 `json:"mean_ndcg_at_10"`
	Recall   float64 `json:"mean_recall_at_10"`
	RunnerUp Mode    `json:"runner_up"`
	// RunnerUpNDCG is the second best hybrid setting's mean nDCG@10.
	RunnerUpNDCG float64 `json:"runner_up_mean_ndcg_at_10"`
	Text         string  `json:"text"`
}

// macro averages each mode's metrics over the datasets.
func macro(datasets []DatasetResult, modes []Mode) []Scores {
	out := make([]Scores, len(modes))
	for mi := range modes {
		var s []Scores
		for _, d := range datasets {
			s = append(s, Scores{NDCG: d.Modes[mi].NDCG, Recall: d.Modes[mi].Recall})
		}
		out[mi] = mean(s)
	}
	return out
}

// choose picks the hybrid mode with the highest mean nDCG@10 (ties: recall@10).
func choose(datasets []DatasetResult, modes []Mode) Choice {
	avg := macro(datasets, modes)
	best, second := -1, -1
	better := func(a, b int) bool {
		return b < 0 || avg[a].NDCG > avg[b].NDCG || (avg[a].NDCG == avg[b].NDCG && avg[a].Recall > avg[b].Recall)
	}
	for i, m := range modes {
		if m.Fusion == "" || m.Match != "" { // exact matching is there for comparison only
			continue
		}
		switch {
		case better(i, best):
			best, second = i, best
		case better(i, second):
			second = i
		}
	}
	if best < 0 {
		return Choice{Text: "No hybrid setting was evaluated, so there is no fusion to choose."}
	}
	c := Choice{Mode: modes[best], NDCG: avg[best].NDCG, Recall: avg[best].Recall}
	var names []string
	for _, d := range datasets {
		names = append(names, d.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Choice: `DefaultFusion = Fusion{Method: %q, Alpha: %s}`.** ", c.Mode.Fusion, formatAlpha(c.Mode.Alpha))
	fmt.Fprintf(&b, "Averaged over %s (each dataset weighs the same), %s has the highest nDCG@10 of the hybrid settings: %.4f (recall@10 %.4f)",
		strings.Join(names, " and "), c.Mode, c.NDCG, c.Recall)
	if second >= 0 {
		c.RunnerUp, c.RunnerUpNDCG = modes[second], avg[second].NDCG
		fmt.Fprintf(&b, ", ahead of %s at %.4f (%+.4f)", c.RunnerUp, c.RunnerUpNDCG, c.NDCG-c.RunnerUpNDCG)
	}
	b.WriteString(".")
	for i, m := range modes {
		if m.Fusion != "" {
			continue
		}
		label := m.Label()
		fmt.Fprintf(&b, " %s alone: %.4f (%+.4f)", strings.ToUpper(label[:1])+label[1:], avg[i].NDCG, avg[i].NDCG-c.NDCG)
		if avg[i].NDCG > c.NDCG {
			b.WriteString(", higher than every hybrid setting")
		}
		b.WriteString(".")
	}
	c.Text = b.String()
	return c
}

// datasetTable is one dataset's results as a Markdown table; the best
// nDCG@10 and recall@10 are bold.
func datasetTable(d DatasetResult, modes []Mode) string {
	bestN, bestR := 0.0, 0.0
	for _, r := range d.Modes {
		bestN, bestR = max(bestN, r.NDCG), max(bestR, r.Recall)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", d.Name)
	fmt.Fprintf(&b, "%d documents (%d chunks), %d queries, %d relevant pairs.\n\n", d.Documents, d.Chunks, d.Queries, d.RelevantPairs)
	b.WriteString("| mode | fusion | alpha | nDCG@10 | recall@10 | ms/search | queries with < 10 docs |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range d.Modes {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.0f | %d |\n", r.Label(), dash(r.Fusion), formatAlpha(r.Alpha),
			bold(r.NDCG, bestN), bold(r.Recall, bestR), r.LatencyMS, r.Short)
	}
	return b.String()
}

// summaryTable shows every mode on every dataset side by side, with the
// mean over datasets.
func summaryTable(r Report) string {
	avg := macro(r.Datasets, r.Modes)
	var b strings.Builder
	b.WriteString("| mode | fusion | alpha |")
	sep := "|---|---|---:|"
	for _, d := range r.Datasets {
		fmt.Fprintf(&b, " %s nDCG@10 | %s R@10 |", d.Name, d.Name)
		sep += "---:|---:|"
	}
	b.WriteString(" mean nDCG@10 | mean R@10 |\n" + sep + "---:|---:|\n")
	for mi, m := range r.Modes {
		fmt.Fprintf(&b, "| %s | %s | %s |", m.Label(), dash(m.Fusion), formatAlpha(m.Alpha))
		for _, d := range r.Datasets {
			fmt.Fprintf(&b, " %.4f | %.4f |", d.Modes[mi].NDCG, d.Modes[mi].Recall)
		}
		name := fmt.Sprintf(" %.4f | %.4f |\n", avg[mi].NDCG, avg[mi].Recall)
		if m == r.Choice.Mode {
			name = fmt.Sprintf(" **%.4f** | %.4f |\n", avg[mi].NDCG, avg[mi].Recall)
		}
		b.WriteString(name)
	}
	return b.String()
}

func bold(v, best float64) string {
	if v == best {
		return fmt.Sprintf("**%.4f**", v)
	}
	return fmt.Sprintf("%.4f", v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// markdown renders the whole report.
func markdown(r Report) string {
	var b strings.Builder
	b.WriteString("# Retrieval evaluation\n\n")
	b.WriteString("How well `hybrid_search` finds the documents people judged relevant, in keyword, vector and hybrid modes, " +
		"on labelled public retrieval datasets. This file is written by `deploy/measure/strata-eval`; rerun the command to refresh it " +
		"(the numbers are also in `retrieval.json`).\n\n")
	fmt.Fprintf(&b, "- Command: `%s` (from the repository root)\n", r.Command)
	fmt.Fprintf(&b, "- Date: %s (UTC); total run time %s\n", r.Date.Format("2006-01-02 15:04"), r.Duration.Round(time.Second))
	fmt.Fprintf(&b, "- Machine: %s\n", r.Machine)
	fmt.Fprintf(&b, "- Embeddings: %s, the local stack's default\n\n", r.Model)

	b.WriteString("## Method\n\n")
	b.WriteString("- The whole stack (NATS, MinIO, Weaviate, ingestor, embedder, indexer, queryd) runs locally on free loopback ports in a fresh state directory.\n")
	b.WriteString("- Every corpus document is uploaded as one Markdown file, `<dataset>/<doc-id>.md` with body `# <title>\\n\\n<text>\\n`, so the project is the dataset. " +
		"The run waits until `status` shows every file processed and every chunk embedded.\n")
	fmt.Fprintf(&b, "- Each query is asked through MCP as `hybrid_search` with `project_reference` = dataset and `top_k` = %d chunks. "+
		"Hits map to documents by `document_path`; a document ranks at its best chunk; the first 10 distinct documents are scored.\n", r.TopK)
	b.WriteString("- Modes: keyword = `alpha` 0 (BM25 only), vector = `alpha` 1 (embeddings only), hybrid = `fusion` `relative` " +
		"(min-max normalised scores) or `ranked` (reciprocal rank) at each alpha (the vector weight).\n")
	b.WriteString("- nDCG@10: gain = the judged grade (see the judgements column: binary datasets have grade 1), discount log2(rank + 1), normalised by the ideal ranking of the judged documents (as trec_eval's `ndcg_cut.10`). " +
		"Recall@10: relevant documents (grade > 0) in the top 10 over all relevant documents. Both are averaged over the queries that have at least one relevant document.\n")
	fmt.Fprintf(&b, "- ms/search is the mean `hybrid_search` call time with %d MCP sessions asking at once (it includes embedding the query when alpha > 0).\n\n", r.Sessions)

	b.WriteString("## Datasets\n\n")
	b.WriteString("| dataset | documents | chunks | failed files | queries | relevant pairs | judgements | upload | index + embed | searches |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n")
	for _, d := range r.Datasets {
		docs := fmt.Sprint(d.Documents)
		if d.Documents < d.CorpusSize {
			docs = fmt.Sprintf("%d of %d", d.Documents, d.CorpusSize)
		}
		queries := fmt.Sprint(d.Queries)
		if d.Queries < d.JudgedQueries {
			queries = fmt.Sprintf("%d of %d", d.Queries, d.JudgedQueries)
		}
		judgements := "binary"
		if d.Graded {
			judgements = "graded"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %d | %s | %s | %s | %s |\n", d.Name, docs, d.Chunks, d.Failed, queries, d.RelevantPairs,
			judgements, secs(d.UploadSeconds), secs(d.IndexSeconds), secs(d.SearchSeconds))
	}
	b.WriteString("\n")
	for _, d := range r.Datasets {
		for _, note := range datasetNotes(d) {
			b.WriteString("- " + note + "\n")
		}
	}
	if !strings.HasSuffix(b.String(), "\n\n") {
		b.WriteString("\n")
	}
	b.WriteString("## Results\n\n")
	for _, d := range r.Datasets {
		b.WriteString(datasetTable(d, r.Modes) + "\n")
	}
	b.WriteString("### Side by side\n\n")
	b.WriteString(summaryTable(r) + "\n")
	b.WriteString("## Choice\n\n" + r.Choice.Text + "\n\n")
	b.WriteString("The numbers hold for the embedding model above: a different model changes the vector side, so rerun the evaluation " +
		"before changing the default model, and choose the fusion again from the new numbers.\n")
	return b.String()
}

// references are published or known keyword (BM25) nDCG@10 figures for
// the datasets (from their READMEs), a check that the data and the scoring
// line up: a full-corpus keyword run should land near them.
var references = map[string]string{
	"scifact": "**published, not measured here**: BM25 nDCG@10 0.665 (BEIR paper, title and text as fields) and 0.679 (Anserini, " +
		"Porter-stemmed, title and text concatenated); the sentence-embedding models the seed systems use score about 0.645 " +
		"(all-MiniLM-L6-v2) and 0.71 (bge-small-en-v1.5) as vector search (their MTEB results; their weights cannot be downloaded here)",
	"cranfield": "**no canonical published baseline**; plain BM25 (k1 0.9, b 0.4, no stemming) over title and text " +
		"scores nDCG@10 0.336 on these files (the dataset README, not measured here)",
	"identifiers": "**no published baseline** (a set made from Go's sources for this repository): each query names one file, " +
		"so nDCG@10 is close to how often that file comes first",
}

// datasetNotes say what a reader must know to compare the numbers.
func datasetNotes(d DatasetResult) []string {
	var notes []string
	if ref, ok := references[d.Name]; ok && !d.Subsampled {
		measured := ""
		for _, m := range d.Modes {
			if m.Name == "keyword" {
				measured += fmt.Sprintf("; **measured here**, %s: %.4f", m.Mode.Label(), m.NDCG)
			}
		}
		notes = append(notes, fmt.Sprintf("%s reference point: %s%s.", d.Name, ref, measured))
	}
	if d.Documents < d.CorpusSize {
		notes = append(notes, fmt.Sprintf("%s is subsampled: %d of %d documents, keeping all %d documents judged relevant to an evaluated query "+
			"and filling up in corpus order. A smaller corpus makes retrieval easier, so these numbers are higher than on the full corpus.",
			d.Name, d.Documents, d.CorpusSize, d.KeptRelevant))
	}
	if d.Queries < d.JudgedQueries {
		notes = append(notes, fmt.Sprintf("%s: only the first %d of %d judged queries are evaluated.", d.Name, d.Queries, d.JudgedQueries))
	}
	if d.Failed > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d files were not indexed: %s.", d.Name, d.Failed, strings.Join(d.Failures, "; ")))
	}
	if missing := d.Documents - d.Indexed - d.Failed; missing > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d uploaded files are not counted as documents by `status`.", d.Name, missing))
	}
	return notes
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

// writeReport writes the Markdown report and its JSON twin.
func writeReport(path string, r Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report directory: %w", err)
	}
	if err := os.WriteFile(path, []byte(markdown(r)), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	r.RunSeconds = r.Duration.Seconds()
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(jsonPath(path), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// render rewrites a report (Markdown and JSON) from an earlier run's JSON.
func render(from, out string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("read report %s: %w", from, err)
	}
	r.Duration = time.Duration(r.RunSeconds * float64(time.Second))
	r.Choice = choose(r.Datasets, r.Modes)
	return writeReport(out, r)
}

// jsonPath is where the JSON twin of a Markdown report goes.
func jsonPath(md string) string { return strings.TrimSuffix(md, filepath.Ext(md)) + ".json" }

// describeMachine names the OS, CPU and memory the run had.
func describeMachine() string {
	cpu, mem := "", ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() && cpu == "" {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = " (" + strings.TrimSpace(v) + ")"
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() && mem == "" {
			var kb int64
			if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); err == nil {
				mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%s/%s, %d CPUs%s%s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpu, mem, runtime.Version())
}
