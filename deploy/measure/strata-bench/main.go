// Command strata-bench measures queryd: each MCP tool's latency (p50, p99,
// mean) and throughput at 1 and 16 concurrent clients over a synthetic index
// of -chunks chunks, side by side with the tool's core Weaviate query issued
// directly in the same run, and reports queryd's overhead as their ratio.
//
// It starts the whole local stack (localstack.Up) in a temporary directory on
// free ports, loads the index straight into Weaviate with the indexer's
// writer (no S3, no ingestion), measures, writes a plain-text report to
// stdout (and -out) and stops the stack, also on Ctrl-C:
//
//	go run ./deploy/measure/strata-bench -chunks 100000 -out docs/bench/queryd.txt
//	go run ./deploy/measure/strata-bench -chunks 2000   # a quick run
//
// With -access it measures what per-document access control costs a
// reader instead (access.go): one file in -access-every readable by a
// restricted key, the search tools and a read by id called by that key and
// by an admin side by side, and Weaviate's queries without and with the
// readers filter; the markdown report goes to -out (docs/bench/access.md):
//
//	go run ./deploy/measure/strata-bench -access -chunks 100000 -out docs/bench/access.md
//
// With -metadata it measures what a document metadata filter costs a
// search (metadata.go): every document has metadata (dept, year,
// reviewed), hybrid_search runs keyword, vector and hybrid without and with
// filters that match 10% of the documents, side by side, with Weaviate's
// queries without and with the filter and a check of the filtered answers;
// the markdown report goes to -out (docs/bench/metadata.md):
//
//	go run ./deploy/measure/strata-bench -metadata -chunks 100000 -out docs/bench/metadata.md
//
// It is a benchmark, not a test: numbers depend on the machine, and nothing
// fails on a slow result.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/embedder/engine/uselite"
	"github.com/strata-kb/strata/indexer/index"
	"github.com/strata-kb/strata/queryd/store/grpcsearch"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
)

func main() { program.Main("strata-bench", run) }

// Config is the command line.
type Config struct {
	Chunks        int
	ChunksPerFile int
	Projects      int
	LoadWorkers   int
	MaxGroup      int
	BatchParallel int      // batch requests of one write in flight at once
	LoadPath      string   // loadCommit (the indexer's) or loadBatch (the same writes, no commit)
	IndexWorkers  int      // Weaviate's vector indexing goroutines
	WeaviateEnv   []string // extra KEY=VALUE settings for Weaviate (experiments)
	RealVectors   int
	Concurrency   []int
	Calls         []int // per concurrency level
	Rounds        int
	MaxPhase      time.Duration
	Similarity    float64
	Tools         []string // case names (or prefixes) to run; empty: all
	Seed          int64
	Sizes         []int // scale mode: grow one index through these sizes, measuring at each
	RecallVectors int   // compression experiment: vectors in it (0: none)
	// Access mode: one file in AccessEvery readable by a restricted key,
	// measured against an admin (access.go); AccessChecks inputs per tool
	// in its check of the restricted key's answers.
	Access           bool
	AccessEvery      int
	AccessChecks     int
	AccessFlatCutoff int // experiment after the rows: ChunkVector's flatSearchCutoff set to this (0: none)
	// Metadata mode: every document has metadata, hybrid_search measured
	// without and with filters matching 10% of them (metadata.go);
	// MetadataChecks inputs per row in its check of the filtered answers.
	Metadata       bool
	MetadataChecks int
	MetadataIndex  []indexSetting // experiments after the rows: ChunkVector's vector index settings changed in turn
	Out            string
	KeepState      bool
	Pprof          bool
	CPUProfile     string // this process's CPU profile (its loader is the indexer's writer)
	Verbose        bool
	args           []string
}

func parseConfig(args []string) (Config, error) {
	c := Config{args: args}
	fs := flag.NewFlagSet("strata-bench", flag.ContinueOnError)
	fs.IntVar(&c.Chunks, "chunks", 100000, "chunks in the index")
	fs.IntVar(&c.ChunksPerFile, "chunks-per-file", 100, "chunks per synthetic file (one commit each)")
	fs.IntVar(&c.Projects, "projects", 1, "projects to spread the files over (the search tools search all of them)")
	fs.IntVar(&c.LoadWorkers, "load-workers", 16, "goroutines writing files while loading (16: the indexer's -concurrency default)")
	fs.IntVar(&c.MaxGroup, "max-group", index.DefaultMaxGroup, "file versions one commit may take when several wait (1: one commit per file, as before group commit)")
	fs.IntVar(&c.BatchParallel, "batch-parallel", index.DefaultBatchParallel, "batch requests one write (a commit's objects, its vectors) sends to Weaviate at once")
	fs.StringVar(&c.LoadPath, "load-path", loadCommit, "how files are written: "+loadCommit+" (the indexer's commit path) or "+loadBatch+" (the same objects in the same batches without the commit protocol, to measure the commit path's cost; scale mode only, loading only: nothing is published for the tools to read)")
	fs.IntVar(&c.IndexWorkers, "index-workers", runtime.NumCPU(), "Weaviate's asynchronous vector indexing goroutines (its own default is one less than the CPUs)")
	fs.IntVar(&c.RealVectors, "real-vectors", 1000, "chunks embedded with the real model; the rest get random unit vectors")
	weaviateEnv := fs.String("weaviate-env", "", "extra Weaviate settings, comma-separated KEY=VALUE (e.g. GOGC=200), after the stack's own: to compare settings side by side")
	conc := fs.String("concurrency", "1,16", "concurrent clients, comma-separated")
	calls := fs.String("calls", "200,800", "calls per side at each concurrency (fewer for slow tools, see -max-phase)")
	fs.IntVar(&c.Rounds, "rounds", 4, "rounds per side, alternating which side goes first")
	fs.DurationVar(&c.MaxPhase, "max-phase", 30*time.Second, "about the longest one side of one row may take; slower tools make fewer calls")
	fs.Float64Var(&c.Similarity, "similarity", 0.5, "search_files similarity_threshold")
	tools := fs.String("tools", "", "only these rows (comma-separated names or name prefixes, e.g. search_,read)")
	fs.Int64Var(&c.Seed, "seed", 1, "seed of the corpus and of the call inputs")
	sizes := fs.String("sizes", "", "scale mode: grow one index through these chunk counts (e.g. 10000,100000,1000000), measure every tool at each, and write a markdown report (-out, default docs/bench/scale.md) with a PNG plot beside it")
	fs.IntVar(&c.RecallVectors, "recall-vectors", 0, "compression experiment first: recall@10 and indexing time of HNSW variants (uncompressed, 8-bit RQ, cheaper graph builds) over this many vectors, written to docs/bench/compression.md (0: skip)")
	fs.BoolVar(&c.Access, "access", false, "access mode: give one file in -access-every the group "+readersGroup+" and the others "+otherGroup+", start queryd with an admin key (*|*) and a restricted one (*|"+readersGroup+"), check the restricted key's answers and measure both keys side by side (search_keyword, search_knowledge, search_files, hybrid_search, get_file_chunk) on inputs from the files it may read, plus Weaviate's own queries without and with the readers filter; writes a markdown report (-out, default docs/bench/access.md)")
	fs.IntVar(&c.AccessEvery, "access-every", 10, "with -access: one file in this many is readable by the restricted key (10: 10%)")
	fs.IntVar(&c.AccessChecks, "access-checks", 100, "with -access: inputs per tool in the check of the restricted key's answers (0: no check)")
	fs.IntVar(&c.AccessFlatCutoff, "access-flat-cutoff", 0, "with -access, an experiment after the rows: set flatSearchCutoff of ChunkVector's vector index to this (Weaviate searches a filtered query flat below it, over the graph above it; its default is 40000) and measure the vector rows again (0: skip)")
	fs.BoolVar(&c.Metadata, "metadata", false, "metadata mode: give every document metadata (dept: 10 strings, year: a number, reviewed: a date; the model-embedded chunks spread over the files), check hybrid_search's filtered answers and measure it side by side without and with filters matching 10% of the documents (equality, number range, date range, a combination) for keyword (alpha 0), vector (alpha 1) and hybrid, plus Weaviate's own queries without and with the filter; writes a markdown report (-out, default docs/bench/metadata.md)")
	fs.IntVar(&c.MetadataChecks, "metadata-checks", 100, "with -metadata: inputs per row in the check of the filtered answers (0: no check)")
	metaIndex := fs.String("metadata-index", "", "with -metadata, experiments after the rows: comma-separated key=value settings of ChunkVector's vector index (e.g. flatSearchCutoff=5000,filterStrategy=sweeping), applied in turn, each on top of the ones before, the vector and hybrid rows measured again after each")
	fs.StringVar(&c.Out, "out", "", "also write the report to this file")
	fs.BoolVar(&c.Pprof, "pprof", false, "serve queryd's Go profiles at /debug/pprof/ on its address (logged), to profile a row from outside: e.g. -tools read_around -concurrency 1 -calls 5000 and go tool pprof on it meanwhile")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write this process's CPU profile to the file: the whole run, whose loading runs the indexer's writer here (profile loading with -tools status)")
	fs.BoolVar(&c.KeepState, "keep-state", false, "keep the stack's temporary state directory (data and logs)")
	fs.BoolVar(&c.Verbose, "v", false, "show the stack's start-up output")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	for _, m := range []struct {
		mode string
		on   bool
	}{{"access", c.Access}, {"metadata", c.Metadata}} {
		mode := m.mode
		if m.on {
			continue
		}
		var stray []string
		fs.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, mode+"-") {
				stray = append(stray, "-"+f.Name)
			}
		})
		if len(stray) > 0 {
			return c, fmt.Errorf("%s only apply with -%s", strings.Join(stray, " and "), mode)
		}
	}
	if c.MetadataIndex, err = parseIndexSettings(*metaIndex); err != nil {
		return c, fmt.Errorf("-metadata-index: %w", err)
	}
	if c.Concurrency, err = intList(*conc); err != nil {
		return c, fmt.Errorf("-concurrency: %w", err)
	}
	if c.Calls, err = intList(*calls); err != nil {
		return c, fmt.Errorf("-calls: %w", err)
	}
	for _, kv := range strings.Split(*weaviateEnv, ",") {
		if kv == "" {
			continue
		}
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return c, fmt.Errorf("-weaviate-env: %q is not KEY=VALUE", kv)
		}
		c.WeaviateEnv = append(c.WeaviateEnv, kv)
	}
	if *tools != "" {
		c.Tools = strings.Split(*tools, ",")
	}
	if *sizes != "" {
		if c.Sizes, err = intList(*sizes); err != nil {
			return c, fmt.Errorf("-sizes: %w", err)
		}
		if !slices.IsSorted(c.Sizes) || c.Sizes[0] < 1 {
			return c, errors.New("-sizes must be positive and increasing")
		}
		c.Chunks = c.Sizes[len(c.Sizes)-1]
	}
	return c, c.validate()
}

func (c Config) validate() error {
	var errs []error
	if c.Chunks < 1 || c.ChunksPerFile < sectionsPerFile {
		errs = append(errs, fmt.Errorf("-chunks must be positive and -chunks-per-file at least %d", sectionsPerFile))
	}
	if len(c.Calls) != len(c.Concurrency) {
		errs = append(errs, fmt.Errorf("-calls needs one number per -concurrency level (%d), got %d", len(c.Concurrency), len(c.Calls)))
	}
	if c.Projects < 1 || c.LoadWorkers < 1 || c.Rounds < 1 || c.RealVectors < 0 || c.IndexWorkers < 1 || c.BatchParallel < 1 {
		errs = append(errs, errors.New("-projects, -load-workers, -index-workers, -batch-parallel and -rounds must be at least 1, -real-vectors at least 0"))
	}
	if c.LoadPath != loadCommit && c.LoadPath != loadBatch {
		errs = append(errs, fmt.Errorf("-load-path must be %s or %s", loadCommit, loadBatch))
	}
	if c.LoadPath == loadBatch && len(c.Sizes) == 0 {
		errs = append(errs, fmt.Errorf("-load-path %s needs -sizes: it measures loading only", loadBatch))
	}
	if c.Similarity < 0 || c.Similarity > 1 {
		errs = append(errs, errors.New("-similarity must be from 0 to 1"))
	}
	if c.Access {
		if len(c.Sizes) > 0 {
			errs = append(errs, errors.New("-access measures one index: it does not take -sizes"))
		}
		if c.AccessEvery < 2 {
			errs = append(errs, errors.New("-access-every must be at least 2 (some files readable, some not)"))
		}
		if c.AccessChecks < 0 || c.AccessFlatCutoff < 0 {
			errs = append(errs, errors.New("-access-checks and -access-flat-cutoff must be at least 0"))
		}
	}
	if c.Metadata {
		if c.Access || len(c.Sizes) > 0 {
			errs = append(errs, errors.New("-metadata measures one index on its own: it does not take -access or -sizes"))
		}
		if c.MetadataChecks < 0 {
			errs = append(errs, errors.New("-metadata-checks must be at least 0"))
		}
	}
	return errors.Join(errs...)
}

// selected reports whether the row name is one -tools asked for.
func (c Config) selected(name string) bool {
	if len(c.Tools) == 0 {
		return true
	}
	for _, t := range c.Tools {
		if t = strings.TrimSpace(t); t != "" && strings.HasPrefix(name, t) {
			return true
		}
	}
	return false
}

func (c Config) maxConcurrency() int {
	m := 1
	for _, n := range c.Concurrency {
		m = max(m, n)
	}
	return m
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive whole numbers, comma-separated", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(ctx context.Context, args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	root, err := localstack.WorkspaceRoot()
	if err != nil {
		return err
	}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	rep := &report{cfg: cfg, started: time.Now()}
	progress := os.Stderr
	model, err := loadModel(ctx, progress)
	if err != nil {
		return err
	}
	program.Logf(progress, "generating %d chunks", cfg.Chunks)
	accessEvery := 0
	if cfg.Access {
		accessEvery = cfg.AccessEvery
	}
	rep.corpus = generateCorpus(cfg.Seed, cfg.Chunks, cfg.ChunksPerFile, cfg.Projects, accessEvery)
	if cfg.Metadata {
		addMetadata(rep.corpus, cfg.Seed)
		rep.corpus.SpreadSample = true
	}
	pool := rep.corpus
	if cfg.Access { // queries name the files the restricted key may read
		pool = &corpus{Files: rep.corpus.readable(), ChunksPerFile: rep.corpus.ChunksPerFile, Projects: rep.corpus.Projects}
	}
	queries, err := newQueryPool(ctx, model, pool, cfg.Seed, 64)
	if err != nil {
		return err
	}
	program.Logf(progress, "embedding %d sample chunks with %s", min(cfg.RealVectors, rep.corpus.chunkCount()), model.Model())
	t0 := time.Now()
	sample, err := embedSample(ctx, model, rep.corpus, cfg.RealVectors, progress)
	if err != nil {
		return err
	}
	rep.sample, rep.sampleTime = len(sample), time.Since(t0)

	state, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		return err
	}
	defer cleanup(state, cfg.KeepState, progress)
	program.Logf(progress, "starting the local stack in %s", state)
	stackOut := program.Progress(cfg.Verbose)
	var keys accessKeys
	var querydEnv []string
	if cfg.Access {
		if keys, err = newAccessKeys(); err != nil {
			return err
		}
		querydEnv = keys.env()
	}
	st, err := startStack(ctx, root, state, cfg.IndexWorkers, cfg.WeaviateEnv, querydEnv, cfg.Pprof, stackOut)
	if err != nil {
		return err
	}
	if cfg.Access {
		st.Env.APIKey = keys.admin // the stack's own key is replaced (STRATA_API_KEYS)
	}
	defer func() {
		program.Logf(progress, "stopping the stack")
		st.Stop(15 * time.Second)
	}()
	program.Logf(progress, "queryd serves MCP at %s", st.Env.MCPURL)
	if cfg.Pprof {
		program.Logf(progress, "queryd profiles at %s/debug/pprof/", strings.TrimSuffix(st.Env.MCPURL, "/mcp"))
	}

	if cfg.RecallVectors > 0 {
		r, err := runRecall(ctx, cfg, st, sample, func(f string, a ...any) { program.Logf(progress, f, a...) })
		if err != nil {
			return err
		}
		out := filepath.Join(root, "docs", "bench", "compression.md")
		if err := writeRecall(out, cfg, r); err != nil {
			return err
		}
		for _, v := range r.Variants {
			program.Logf(progress, "recall@10 %.3f, overlap with uncompressed %.3f, indexed in %s: %s", v.Recall, v.Overlap, (v.Insert + v.Index).Round(time.Second), v.Label)
		}
		program.Logf(progress, "compression report: %s", out)
	}
	w, closeWriter, err := openWriter(ctx, st, cfg.MaxGroup, cfg.BatchParallel)
	if err != nil {
		return err
	}
	defer closeWriter()
	if len(cfg.Sizes) > 0 {
		_, err := runScale(ctx, cfg, st, w, rep.corpus, model, sample, progress)
		return err
	}
	rep.loadBefore = loadAverage()
	program.Logf(progress, "loading %d chunks (%d files) with %d workers", rep.corpus.chunkCount(), len(rep.corpus.Files), cfg.LoadWorkers)
	l := &loader{w: w, c: rep.corpus, real: sample, seed: cfg.Seed}
	if rep.load, err = l.load(ctx, cfg.LoadWorkers, progress); err != nil {
		return err
	}
	program.Logf(progress, "loaded in %s (%.0f chunks/s)", rep.load.Elapsed.Round(time.Second), rep.load.chunksPerSecond())
	var drain time.Duration
	if cfg.Access || cfg.Metadata { // searches measure the vector index, not its queue
		program.Logf(progress, "waiting for Weaviate's vector queue")
		t0 := time.Now()
		if err := waitVectorQueue(ctx, st); err != nil {
			return err
		}
		drain = time.Since(t0)
	}

	b, err := newBench(ctx, cfg, st, w, rep.corpus, queries, model, progress)
	if err != nil {
		return err
	}
	defer b.close()
	if cfg.Access {
		return runAccessMode(ctx, rep, st, b, keys, drain)
	}
	if cfg.Metadata {
		return runMetadataMode(ctx, rep, st, b, drain)
	}
	if rep.check, err = b.checkIndex(ctx); err != nil {
		return err
	}
	program.Logf(progress, "index check: %s", rep.check)
	rep.loadMeasure = loadAverage()
	rep.results, err = b.runAll(ctx)
	if err != nil {
		return err
	}
	return writeOut(cfg.Out, rep.write)
}

func loadModel(ctx context.Context, progress io.Writer) (*uselite.Model, error) {
	dir, err := localstack.InstallModel(ctx, progress)
	if err != nil {
		return nil, err
	}
	m, err := uselite.Load(dir)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// newBench connects the MCP sessions and the direct Weaviate client (with
// queryd's read-only key) and reads each project's watermark.
func newBench(ctx context.Context, cfg Config, st *localstack.Stack, w *index.Writer, c *corpus, q *queryPool,
	m *uselite.Model, progress io.Writer) (*bench, error) {
	wv, err := schema.NewClient(st.Servers.WeaviateHost, st.Servers.WeaviateGRPCHost, testservers.LocalWeaviateReader)
	if err != nil {
		return nil, err
	}
	rpc, err := grpcsearch.New(st.Servers.WeaviateGRPCHost, testservers.LocalWeaviateReader)
	if err != nil {
		return nil, err
	}
	d := &direct{wv: wv, rpc: rpc, at: map[string]int64{}, vectorName: schema.VectorName(m.Model())}
	for _, p := range c.Projects {
		if d.at[p], err = w.Watermark(ctx, p); err != nil {
			return nil, fmt.Errorf("watermark of %s: %w", p, err)
		}
	}
	s, err := openSessions(ctx, st.Env.MCPURL, st.Env.APIKey, cfg.maxConcurrency())
	if err != nil {
		return nil, err
	}
	a, err := startAnchor(ctx, cfg.maxConcurrency())
	if err != nil {
		s.close()
		return nil, err
	}
	return &bench{cfg: cfg, corpus: c, queries: q, model: m, sessions: s, anchor: a, direct: d, progress: progress}, nil
}

// checkIndex asks queryd's status tool what it sees, and fails when the
// index is not what was loaded.
func (b *bench) checkIndex(ctx context.Context) (string, error) {
	text, err := call(ctx, b.sessions[0], "status", map[string]any{})
	if err != nil {
		return "", fmt.Errorf("status: %w", err)
	}
	var st struct {
		DocumentCount int `json:"documentCount"`
		ChunkCount    int `json:"chunkCount"`
		Projects      []struct {
			EmbeddedChunkCount int `json:"embeddedChunkCount"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		return "", fmt.Errorf("status answer: %w", err)
	}
	embedded := 0
	for _, p := range st.Projects {
		embedded += p.EmbeddedChunkCount
	}
	summary := fmt.Sprintf("queryd status reports %d documents, %d chunks, %d embedded", st.DocumentCount, st.ChunkCount, embedded)
	if st.ChunkCount != b.corpus.chunkCount() || st.DocumentCount != len(b.corpus.Files) {
		return "", fmt.Errorf("index check: %s; loaded %d documents, %d chunks", summary, len(b.corpus.Files), b.corpus.chunkCount())
	}
	return summary, nil
}

func cleanup(state string, keep bool, progress io.Writer) {
	if keep {
		program.Logf(progress, "state kept in %s", state)
		return
	}
	if err := os.RemoveAll(state); err != nil {
		program.Logf(progress, "remove %s: %v", state, err)
	}
}
