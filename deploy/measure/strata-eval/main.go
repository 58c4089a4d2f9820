// Command strata-eval measures Strata's retrieval quality on labelled public
// datasets (BEIR-style corpus.jsonl, queries.jsonl and qrels.tsv). It starts
// the local stack on free ports in a temporary directory, uploads every
// document of a dataset as one Markdown file (project = dataset name), waits
// until everything is indexed and embedded, then asks hybrid_search every
// query in keyword, vector and several hybrid fusion modes, and reports
// nDCG@10 and recall@10 side by side:
//
//	go run ./deploy/measure/strata-eval -datasets scifact,cranfield -out docs/eval/retrieval.md
//
// With -relevance it fits and reports hybrid_search's relevance levels
// instead (relevance.go, docs/eval/relevance.md); -fit-only refits from the
// hits an earlier run dumped:
//
//	go run ./deploy/measure/strata-eval -relevance -out docs/eval/relevance.md
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/program"
)

func main() {
	program.Main("strata-eval", func(ctx context.Context, args []string) error {
		err := run(ctx, args, os.Stdout, os.Stderr)
		if err != nil && ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return err
	})
}

// Config is what one evaluation run does.
type Config struct {
	Root       string    // repository root (the go.work directory)
	DataDir    string    // holds one directory per dataset
	Datasets   []string  // dataset (and project) names
	Out        string    // Markdown report ("" = none); JSON goes next to it
	MaxDocs    int       // 0 = the whole corpus
	MaxQueries int       // 0 = every query that has judgements
	Fusions    []string  // hybrid fusion methods to compare
	Alphas     []float64 // hybrid vector weights to compare
	// HeadingWeights are stemmed keyword search's heading weights to compare.
	HeadingWeights []int
	// BM25 are the Chunk collection's BM25 parameters to compare.
	BM25         []BM25
	TopK         int           // chunks asked per query (hybrid_search allows 50)
	Uploaders    int           // concurrent uploads
	Clients      int           // concurrent MCP sessions
	IndexTimeout time.Duration // per dataset
	StateDir     string        // "" = a temporary directory, removed afterwards
	Render       string        // re-render -out from this JSON report instead of evaluating
	// Relevance fits and reports hybrid_search's relevance levels instead
	// of comparing modes (relevance.go); Hits is its dump of every hit.
	Relevance bool
	Hits      string
	FitOnly   bool // fit and report from the Hits dump of an earlier run (no stack, no searches)
}

// projectRE is what a dataset name must look like to be a Strata project.
var projectRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// parseConfig reads the flags; relative paths are taken from the repository root.
func parseConfig(args []string, root string, stderr io.Writer) (Config, error) {
	c := Config{Root: root}
	var datasets, fusions, alphas, weights, bm25 string
	fs := flag.NewFlagSet("strata-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.DataDir, "data", "", "directory with one sub-directory per dataset (corpus.jsonl, queries.jsonl, qrels.tsv) for datasets not in testdata (scifact, cranfield and identifiers are)")
	fs.StringVar(&datasets, "datasets", "scifact,cranfield,identifiers", "comma-separated datasets to evaluate; each becomes a project of that name (scifact, cranfield and identifiers are in the repository: testdata/, each with its source and licence)")
	fs.StringVar(&c.Out, "out", "", "Markdown report to write, relative to the repository root (JSON is written beside it); empty: stdout only")
	fs.IntVar(&c.MaxDocs, "max-docs", 0, "evaluate on at most this many documents per dataset, always keeping those relevant to an evaluated query (0 = all)")
	fs.IntVar(&c.MaxQueries, "max-queries", 0, "evaluate at most this many queries per dataset (0 = all that have judgements)")
	fs.StringVar(&fusions, "fusions", "relative,ranked", "hybrid fusion methods to compare")
	fs.StringVar(&alphas, "alphas", "0.25,0.5,0.75", "hybrid alphas (vector weight) to compare; keyword (0) and vector (1) are always run")
	fs.StringVar(&weights, "heading-weights", "0,2,3", "heading weights of stemmed keyword search to compare with the server's default (hybrid_search heading_weight)")
	fs.StringVar(&bm25, "bm25", "0.9:0.4", "BM25 parameters k1:b of stemmed keyword search to compare with schema.ChunkBM25, comma-separated (0.9:0.4 is Anserini's)")
	fs.IntVar(&c.TopK, "top-k", 50, "chunks asked per query (1..50); documents are ranked by their best chunk")
	fs.IntVar(&c.Uploaders, "uploaders", 16, "concurrent uploads")
	fs.IntVar(&c.Clients, "clients", min(4, runtime.NumCPU()), "concurrent MCP sessions asking queries (more than the CPUs only adds contention)")
	fs.DurationVar(&c.IndexTimeout, "index-timeout", 30*time.Minute, "how long a dataset may take to be indexed and embedded")
	fs.StringVar(&c.StateDir, "state", "", "stack state directory (default: a temporary one, removed at the end)")
	fs.StringVar(&c.Render, "render", "", "rewrite the -out report from this JSON report of an earlier run (no stack, no searches)")
	fs.BoolVar(&c.Relevance, "relevance", false, "fit and report hybrid_search's relevance levels (docs/eval/relevance.md) instead of comparing search modes; every hit is dumped to -hits")
	fs.StringVar(&c.Hits, "hits", filepath.Join(os.TempDir(), "strata-relevance-hits.json"), "with -relevance: the dump of every hit (large: keep it out of git)")
	fs.BoolVar(&c.FitOnly, "fit-only", false, "with -relevance: fit and report from the -hits dump of an earlier run (no stack, no searches)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, d := range splitList(datasets) {
		if !projectRE.MatchString(d) {
			return c, fmt.Errorf("dataset %q: must be a valid project name (%s)", d, projectRE)
		}
		c.Datasets = append(c.Datasets, d)
	}
	if len(c.Datasets) == 0 {
		return c, errors.New("-datasets: name at least one dataset")
	}
	for _, f := range splitList(fusions) {
		if f != "relative" && f != "ranked" {
			return c, fmt.Errorf("-fusions: %q is not relative or ranked", f)
		}
		c.Fusions = append(c.Fusions, f)
	}
	for _, a := range splitList(alphas) {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil || v <= 0 || v >= 1 {
			return c, fmt.Errorf("-alphas: %q must be a number strictly between 0 and 1", a)
		}
		c.Alphas = append(c.Alphas, v)
	}
	for _, w := range splitList(weights) {
		v, err := strconv.Atoi(w)
		if err != nil || v < 0 || v > 5 {
			return c, fmt.Errorf("-heading-weights: %q must be an integer from 0 to 5 (Weaviate's property boosts are whole numbers)", w)
		}
		c.HeadingWeights = append(c.HeadingWeights, v)
	}
	for _, p := range splitList(bm25) {
		k1, b, ok := strings.Cut(p, ":")
		kv, err1 := strconv.ParseFloat(k1, 32)
		bv, err2 := strconv.ParseFloat(b, 32)
		if !ok || err1 != nil || err2 != nil || kv < 0 || bv < 0 || bv > 1 {
			return c, fmt.Errorf("-bm25: %q must be k1:b with k1 >= 0 and b from 0 to 1", p)
		}
		c.BM25 = append(c.BM25, BM25{K1: float32(kv), B: float32(bv)})
	}
	switch {
	case c.TopK < 10 || c.TopK > 50:
		return c, fmt.Errorf("-top-k %d: want 10..50 (hybrid_search's limit is 50)", c.TopK)
	case c.MaxDocs < 0 || c.MaxQueries < 0:
		return c, errors.New("-max-docs and -max-queries must not be negative")
	case c.Uploaders < 1 || c.Clients < 1:
		return c, errors.New("-uploaders and -clients must be at least 1")
	}
	if c.Render != "" && c.Out == "" {
		return c, errors.New("-render needs -out")
	}
	if c.FitOnly && !c.Relevance {
		return c, errors.New("-fit-only needs -relevance")
	}
	if !filepath.IsAbs(c.Hits) {
		c.Hits = filepath.Join(root, c.Hits)
	}
	if c.Render != "" && !filepath.IsAbs(c.Render) {
		c.Render = filepath.Join(root, c.Render)
	}
	if c.Out != "" && !filepath.IsAbs(c.Out) {
		c.Out = filepath.Join(root, c.Out)
	}
	if !filepath.IsAbs(c.DataDir) {
		c.DataDir = filepath.Join(root, c.DataDir)
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	root, err := localstack.WorkspaceRoot()
	if err != nil {
		return err
	}
	cfg, err := parseConfig(args, root, stderr)
	if err != nil {
		return err
	}
	if cfg.Render != "" {
		return render(cfg.Render, cfg.Out)
	}
	started := time.Now()
	if cfg.Relevance && cfg.FitOnly {
		dump, err := readDump(cfg.Hits)
		if err != nil {
			return err
		}
		return fitAndReport(cfg, dump, stdout, stderr)
	}
	var datasets []*Dataset
	for _, name := range cfg.Datasets {
		d, err := loadDataset(datasetDir(cfg, name), name)
		if err != nil {
			return err
		}
		d.subsample(cfg.MaxDocs, cfg.MaxQueries)
		fmt.Fprintf(stderr, "%s: %d documents (of %d), %d queries (of %d with judgements)\n", name, len(d.Docs), d.CorpusSize, len(d.Queries), d.JudgedQueries)
		datasets = append(datasets, d)
	}

	if cfg.Relevance {
		return runRelevance(ctx, cfg, args, datasets, started, stdout, stderr)
	}
	ev, err := startEvaluator(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer func() { ev.stop(err != nil && ctx.Err() == nil) }() // on failure the services' logs are kept

	modes := buildModes(cfg.Fusions, cfg.Alphas, cfg.BM25, cfg.HeadingWeights...)
	report := Report{Command: commandLine(args), Date: started.UTC(), Machine: describeMachine(), TopK: cfg.TopK,
		Sessions: cfg.Clients, Modes: modes}
	for _, d := range datasets {
		res, err := ev.evaluate(ctx, d, modes)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		report.Datasets = append(report.Datasets, res)
		fmt.Fprint(stdout, datasetTable(res, modes))
		fmt.Fprintln(stdout)
	}
	report.Model = ev.model
	report.Choice = choose(report.Datasets, modes)
	report.Duration = time.Since(started)
	fmt.Fprint(stdout, summaryTable(report))
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, report.Choice.Text)
	fmt.Fprintf(stdout, "\ntotal run time %s\n", report.Duration.Round(time.Second))
	if cfg.Out != "" {
		if err := writeReport(cfg.Out, report); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", cfg.Out, "and", jsonPath(cfg.Out))
	}
	return nil
}

// commandLine is how the run was started, for the report.
func commandLine(args []string) string {
	return strings.TrimSpace("go run ./deploy/measure/strata-eval " + strings.Join(args, " "))
}

// datasetDir is where dataset name lives: the repository's own sets
// (testdata: scifact, cranfield, identifiers) before -data.
func datasetDir(cfg Config, name string) string {
	own := filepath.Join(cfg.Root, "deploy", "measure", "strata-eval", "testdata")
	if _, err := os.Stat(filepath.Join(own, name, "corpus.jsonl")); err == nil {
		return own
	}
	return cfg.DataDir
}
