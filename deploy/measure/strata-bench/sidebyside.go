package main

// What the side-by-side modes (-access, -metadata) share: each row calls
// two sides with the same inputs (a the reference: the admin, the query
// without the filter; b what is compared with it) at every concurrency,
// and the reports set the two sides' percentiles next to each other.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// pairRun is what a side-by-side report says of its run, whichever mode.
type pairRun struct {
	cfg         Config
	started     time.Time
	corpus      *corpus
	sample      int
	load        loadResult
	drain       time.Duration
	check       string // the admin's status
	hnsw        string // ChunkVector's vector index settings, as Weaviate reports them
	loadMeasure string
	measuring   time.Time // when measuring began
	elapsed     time.Duration
}

// newPairRun is a side-by-side run after the load rep reports, and the
// vector queue's drain.
func newPairRun(rep *report, cfg Config, drain time.Duration) pairRun {
	return pairRun{cfg: cfg, started: rep.started, corpus: rep.corpus, sample: rep.sample, load: rep.load, drain: drain}
}

// startMeasuring notes the load average and when measuring began.
func (run *pairRun) startMeasuring() {
	run.loadMeasure = loadAverage()
	run.measuring = time.Now()
}

// measured sets elapsed: the time measuring has taken so far.
func (run *pairRun) measured() { run.elapsed = time.Since(run.measuring) }

// head writes the report's title and the lines on how it was written: the
// command line, the machine, the code measured.
func (run *pairRun) head(w io.Writer, title string) {
	fmt.Fprintf(w, "# %s\n\n", title)
	fmt.Fprintf(w, "Written by `go run ./deploy/measure/strata-bench %s` on %s.\n", strings.Join(run.cfg.args, " "), run.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintln(w, machineLine())
	fmt.Fprintf(w, "Code measured: %s.\n\n", codeRevision())
}

// vectorIndex writes the paragraph on ChunkVector's vector index.
func (run *pairRun) vectorIndex(w io.Writer) {
	fmt.Fprintf(w, "ChunkVector's vector index as Weaviate reports it: %s. A filtered search that admits fewer vectors than flatSearchCutoff scans them on %s goroutines (HNSW_FLAT_SEARCH_CONCURRENCY, as the stack sets it).\n\n", run.hnsw, flatSearchConcurrency(run.cfg.WeaviateEnv))
}

// pair is one row's two sides measured at one concurrency.
type pair struct {
	c     int
	a, b  side
	load1 string
	// experiment names a setting changed for the row (measured after the
	// main rows): not what the goal is judged on.
	experiment string
}

// p50Ratio is b's p50 over a's.
func (p pair) p50Ratio() float64 { return ratio(p.b.percentile(0.5), p.a.percentile(0.5)) }

// p50Diff is b's p50 less a's, in ms.
func (p pair) p50Diff() float64 { return msf(p.b.percentile(0.5) - p.a.percentile(0.5)) }

// measurePairs measures the two sides of the row name at each concurrency
// of the command line, giving done each pair as it is measured.
func (b *bench) measurePairs(ctx context.Context, mode, name, experiment string, sides []callFunc, done func(pair)) error {
	for i, c := range b.cfg.Concurrency {
		acc, err := b.measureSides(ctx, mode+"/"+name, c, b.cfg.Calls[i], sides, nil)
		if err != nil {
			return fmt.Errorf("measure %s at c=%d: %w", name, c, err)
		}
		done(pair{c: c, a: acc[0], b: acc[1], load1: loadAverage(), experiment: experiment})
	}
	return nil
}

// sideErrors is the progress line's tail for the sides that had errors.
func (p pair) sideErrors() string {
	var sb strings.Builder
	for i, s := range []side{p.a, p.b} {
		if s.errors > 0 {
			fmt.Fprintf(&sb, " | side %d: %d errors: %s", i+1, s.errors, clip(s.firstErr, 160))
		}
	}
	return sb.String()
}

// pairTableHead writes the head of a table of pairs: the first column's
// name, each side's name and what its hits are called, and the percentile
// between p50 and p99 (0.9 or 0.95).
func pairTableHead(w io.Writer, first, aName, bName, aHits, bHits string, upper float64) {
	p := fmt.Sprintf("p%.0f", 100*upper)
	fmt.Fprintf(w, "| %s | clients | calls per side | %s p50 | %s | p99 | %s p50 | %s | p99 | ratio p50 | ratio %s | difference p50 ms | %s | %s | errors | load1 |\n",
		first, aName, p, bName, p, p, aHits, bHits)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
}

// markdownRow writes the pair's line of a table pairTableHead began.
func (p pair) markdownRow(w io.Writer, name string, upper float64) {
	a, b := p.a, p.b
	fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %+.2f | %s | %s | %s | %s |\n", name, p.c, a.calls,
		ms(a.percentile(0.5)), ms(a.percentile(upper)), ms(a.percentile(0.99)),
		ms(b.percentile(0.5)), ms(b.percentile(upper)), ms(b.percentile(0.99)),
		p.p50Ratio(), ratio(b.percentile(upper), a.percentile(upper)), p.p50Diff(),
		meanHits(a.hits), meanHits(b.hits), errorsCell(a.errors+b.errors, a.firstErr+b.firstErr), p.load1)
}

// errorsCell is a table cell of n errors and the first's text, if any.
func errorsCell(n int, first string) string {
	s := fmt.Sprint(n)
	if first != "" {
		s += ": " + strings.ReplaceAll(clip(first, 120), "|", "\\|")
	}
	return s
}

// rowDocs writes the "Rows" section: each row once, with what it calls;
// doc says a row's name and doc, and whether it belongs in the list.
func rowDocs[R any](w io.Writer, rows []R, doc func(R) (name, doc string, listed bool)) {
	fmt.Fprintln(w, "## Rows")
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, r := range rows {
		if name, d, listed := doc(r); listed && !seen[name] {
			seen[name] = true
			fmt.Fprintf(w, "- %s: %s\n", name, d)
		}
	}
	fmt.Fprintln(w)
}

// pairsNote ends a side-by-side report: how to read its hits and its
// rows at many clients.
const pairsNote = "hits / rows are means over each row's warm-up calls. With 2 CPUs, rows at 16 clients measure saturation (client, queryd and Weaviate share the cores), not per-call cost."
