// Command strata-ingestbench measures what the ingestor does to one file in
// process: detect and extract it, chunk it, and encode its file version's
// message, as ingest does. Its first question is whether a reader is
// linear: each format's file of one long line against the same bytes with
// a newline about every 100 bytes, at several sizes, side by side in one
// run, best of -runs; time, bytes allocated and the heap's peak above
// where it started. It writes a Markdown report (docs/bench/ingest-lines.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/ingestor/chunk"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/tokens"
	"github.com/strata-kb/strata/shared/pipeline"
)

func main() { program.Main("strata-ingestbench", run) }

// Config is the benchmark's configuration.
type Config struct {
	Out         string
	SizesText   string
	FormatsText string
	Runs        int
	CPUProfile  string
	Corpus      string
	// Sizes and Formats are read from SizesText and FormatsText by Validate.
	Sizes   []int
	Formats []string
}

// RegisterFlags registers the benchmark's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Out, "out", "", "write the Markdown report here (\"\": standard output only)")
	fs.StringVar(&c.SizesText, "sizes", "100000,1000000,10000000", "file sizes in bytes, comma-separated")
	fs.StringVar(&c.FormatsText, "formats", strings.Join(formatNames(), ","), "formats to measure, comma-separated")
	fs.IntVar(&c.Runs, "runs", 3, "runs of each case; the best is reported")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run here")
	fs.StringVar(&c.Corpus, "corpus", "", "instead: measure each file of this folder once (e.g. deploy/e2e/testdata/hostile), the heaviest first")
}

// Validate reads the lists and says what is wrong with c.
func (c *Config) Validate() error {
	if c.Runs < 1 {
		return fmt.Errorf("-runs %d: at least 1", c.Runs)
	}
	c.Sizes, c.Formats = nil, nil
	for _, s := range strings.Split(c.SizesText, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-sizes: %q is not a positive number of bytes", s)
		}
		c.Sizes = append(c.Sizes, n)
	}
	for _, f := range strings.Split(c.FormatsText, ",") {
		if _, ok := generators[f]; !ok {
			return fmt.Errorf("-formats: no format %q (%s)", f, strings.Join(formatNames(), ", "))
		}
		c.Formats = append(c.Formats, f)
	}
	return nil
}

func run(ctx context.Context, args []string) error {
	var cfg Config
	fs := flag.NewFlagSet("strata-ingestbench", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	counter, err := tokens.New()
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	p := pipelineOf(counter)
	if cfg.Corpus != "" {
		return corpusReport(ctx, p, cfg.Corpus, os.Stdout)
	}
	var rows []row
	for _, f := range cfg.Formats {
		for _, size := range cfg.Sizes {
			if err := ctx.Err(); err != nil {
				return err
			}
			long := generators[f].make(size)
			lined := withNewlines(long, generators[f].breakAfter)
			r := row{format: f, size: len(long)}
			// Alternate the two shapes run by run, so a noisy moment
			// falls on both.
			for range cfg.Runs {
				for _, shape := range []struct {
					data []byte
					into *measure
				}{{long, &r.long}, {lined, &r.lined}} {
					m, err := p.measure(ctx, generators[f].name, shape.data)
					if err != nil {
						return fmt.Errorf("%s, %d bytes: %w", f, size, err)
					}
					shape.into.best(m)
				}
			}
			program.Logf(os.Stderr, "%s %s: one line %s, lined %s", f, bytesText(r.size), r.long, r.lined)
			rows = append(rows, r)
		}
	}
	var out io.Writer = os.Stdout
	if cfg.Out != "" {
		file, err := os.Create(cfg.Out)
		if err != nil {
			return err
		}
		defer file.Close()
		out = io.MultiWriter(os.Stdout, file)
	}
	report(out, cfg, rows)
	return nil
}

// ingestPipeline is what ingest does to one file's bytes, minus the object store.
type ingestPipeline struct {
	registry detect.Registry
	counter  chunk.Counter
	limits   extract.Limits
}

func pipelineOf(c chunk.Counter) *ingestPipeline {
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 64 << 20 // the largest case is measured, not refused
	return &ingestPipeline{registry: detect.NewRegistry(nil), counter: c, limits: lim}
}

// measure is one run: time, bytes allocated, the heap's peak above its start,
// and the message's size.
type measure struct {
	took         time.Duration
	alloc, peak  uint64
	messageBytes int
	status       string
}

func (m measure) String() string {
	return fmt.Sprintf("%s, %s allocated, peak %s", m.took.Round(time.Millisecond), bytesText(int(m.alloc)), bytesText(int(m.peak)))
}

// best keeps the least of each figure over the runs.
func (m *measure) best(o measure) {
	if m.took == 0 || o.took < m.took {
		m.took = o.took
	}
	if m.alloc == 0 || o.alloc < m.alloc {
		m.alloc = o.alloc
	}
	if m.peak == 0 || o.peak < m.peak {
		m.peak = o.peak
	}
	m.messageBytes, m.status = o.messageBytes, o.status
}

func (p *ingestPipeline) measure(ctx context.Context, name string, data []byte) (measure, error) {
	runtime.GC()
	base := heapBytes()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the heap's peak, sampled every millisecond
		defer close(sampled)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heapBytes(); h > base && h-base > peak.Load() {
				peak.Store(h - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	n, status, err := p.once(ctx, name, data)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	close(stop)
	<-sampled
	if err != nil {
		return measure{}, err
	}
	return measure{took: took, alloc: after.TotalAlloc - before.TotalAlloc, peak: peak.Load(), messageBytes: n, status: status}, nil
}

// once extracts, chunks and encodes data as the ingestor does; a file the
// readers refuse is measured up to its refusal (status says why).
func (p *ingestPipeline) once(ctx context.Context, name string, data []byte) (int, string, error) {
	doc, err := p.registry.Extract(ctx, data, name, p.limits)
	if err != nil {
		return 0, "refused: " + err.Error(), nil
	}
	secs := chunk.Split(doc, p.counter, chunk.Options{TargetTokens: 512})
	fv := pipeline.FileVersion{FileVersionID: "6f1c3f52-8d9c-5b41-9a7e-0c7d2f4e9b10", Format: doc.Format, Title: doc.Title, Status: pipeline.StatusIndexed}
	fv.Sections, fv.Chunks = chunk.Parts(fv.FileVersionID, secs)
	body, err := pipeline.EncodeFileVersion(fv)
	if err != nil {
		return 0, "", err
	}
	return len(body), fmt.Sprintf("%d sections, %d chunks", len(fv.Sections), len(fv.Chunks)), nil
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

type row struct {
	format      string
	size        int
	long, lined measure
}

func report(w io.Writer, cfg Config, rows []row) {
	fmt.Fprintf(w, "## One long line against the same bytes in lines\n\n")
	fmt.Fprintf(w, "`go run ./deploy/measure/strata-ingestbench -out docs/bench/ingest-lines.md` on %s, %d CPUs, Go %s, %s. Each format's file of one long line against the same bytes with a newline about every 100 bytes (a space or a comma's following space turned into a newline), extracted by detect's registry, chunked (512 tokens) and encoded as the ingestor's message, in process; best of %d runs each, the two shapes alternating. Time, bytes allocated, and the heap's peak above where it started (sampled every millisecond).\n\n",
		runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(), time.Now().UTC().Format("2006-01-02"), cfg.Runs)
	fmt.Fprintf(w, "| format | size | time: one line | lined | ratio | allocated: one line | lined | ratio | peak heap: one line | lined | ratio | message: one line | lined | one line read as |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	worstTime, worstMem := 0.0, 0.0
	for _, r := range rows {
		tr := float64(r.long.took) / float64(max(r.lined.took, 1))
		ar := float64(r.long.alloc) / float64(max(r.lined.alloc, 1))
		pr := float64(r.long.peak) / float64(max(r.lined.peak, 1))
		worstTime, worstMem = max(worstTime, tr), max(worstMem, ar, pr)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.2fx | %s | %s | %.2fx | %s | %s | %.2fx | %s | %s | %s |\n", r.format, bytesText(r.size),
			r.long.took.Round(time.Millisecond), r.lined.took.Round(time.Millisecond), tr,
			bytesText(int(r.long.alloc)), bytesText(int(r.lined.alloc)), ar,
			bytesText(int(r.long.peak)), bytesText(int(r.lined.peak)), pr,
			bytesText(r.long.messageBytes), bytesText(r.lined.messageBytes), r.long.status)
	}
	fmt.Fprintf(w, "\nResult: one long line takes at most %.2fx the time and %.2fx the memory of the same bytes in lines (goal: 2x).\n", worstTime, worstMem)
}

func bytesText(n int) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
