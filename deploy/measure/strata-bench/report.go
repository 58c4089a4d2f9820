package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/strata-kb/strata/shared/testservers"
)

// report is everything the output says.
type report struct {
	cfg        Config
	started    time.Time
	corpus     *corpus
	sample     int           // chunks embedded with the model
	sampleTime time.Duration // how long that took
	load       loadResult
	check      string // what status says about the loaded index
	// loadBefore and loadMeasure are the machine's load average before
	// loading and before measuring.
	loadBefore, loadMeasure string
	results                 []result
}

func (r *report) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.header(bw)
	r.table(bw)
	r.notes(bw)
	return bw.Flush()
}

func (r *report) header(w io.Writer) {
	c := r.corpus
	fmt.Fprintf(w, "Strata queryd benchmark (deploy/measure/strata-bench)\n\n")
	fmt.Fprintf(w, "run:      %s, strata-bench %s\n", r.started.UTC().Format("2006-01-02 15:04 MST"), strings.Join(r.cfg.args, " "))
	fmt.Fprintf(w, "machine:  %d CPUs (runtime.NumCPU), %s/%s, %s, %s; servers, services and this client share it\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel(), runtime.Version())
	fmt.Fprintf(w, "json:     %s\n", jsonImplementation)
	fmt.Fprintf(w, "servers:  %s\n", serverVersions())
	fmt.Fprintf(w, "index:    %d chunks in %d files x %d chunks (%d sections each, ~%d words a chunk), %d project(s) (%s), one commit per file\n",
		c.chunkCount(), len(c.Files), c.ChunksPerFile, sectionsPerFile, wordsPerChunk, len(c.Projects), strings.Join(c.Projects, ", "))
	fmt.Fprintf(w, "vectors:  use-lite-512 (512-d, HNSW cosine); the first %d chunks embedded with the model (%.0f chunks/s in process), the other %d random unit vectors\n",
		r.sample, float64(r.sample)/r.sampleTime.Seconds(), c.chunkCount()-r.sample)
	fmt.Fprintf(w, "load:     %d chunks in %s = %.0f chunks/s (indexer/index Writer.ApplyFileVersion + ApplyVectors straight into Weaviate, %d workers; no S3, no ingestion)\n",
		r.load.Chunks, r.load.Elapsed.Round(time.Second), r.load.chunksPerSecond(), r.load.Workers)
	fmt.Fprintf(w, "check:    %s\n", r.check)
	fmt.Fprintf(w, "load avg: %s before loading, %s before measuring (1-minute; other work on the machine shows here and in the load1 column)\n",
		r.loadBefore, r.loadMeasure)
	fmt.Fprintf(w, "method:   each row: warm-up calls (not counted), then %d rounds per side; rounds alternate which side goes first.\n", r.cfg.Rounds)
	fmt.Fprintf(w, "          queryd: MCP tools/call (protocol 2026-07-28, no session) over streamable HTTP, one HTTP client per concurrent caller, answers decoded once, tool budget off.\n")
	fmt.Fprintf(w, "          direct: the tool's core Weaviate query from this process (same Go client and settings as queryd), same inputs.\n")
	fmt.Fprintf(w, "          Latencies in ms; p99 is nearest-rank; calls/s = successful calls / wall time of the side's rounds.\n\n")
}

func (r *report) table(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tc\tcalls\terr\tp50\tp99\tmean\tcalls/s\t|\tdirect p50\tp99\tcalls/s\t|\tratio p50\tp99\t|\thits\tdirect rows\tanswer KB\tload1\t")
	for _, res := range r.results {
		q := res.queryd
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%.1f\t|\t", res.name, res.c, q.calls, q.errors, ms(q.percentile(0.5)),
			ms(q.percentile(0.99)), ms(q.mean()), q.rate())
		if d := res.direct; d != nil {
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t|\t%.1f\t%.1f\t|\t", ms(d.percentile(0.5)), ms(d.percentile(0.99)), d.rate(),
				ratio(q.percentile(0.5), d.percentile(0.5)), ratio(q.percentile(0.99), d.percentile(0.99)))
		} else {
			fmt.Fprint(tw, "-\t-\t-\t|\t-\t-\t|\t")
		}
		drows := "-"
		if res.direct != nil {
			drows = fmt.Sprintf("%.0f", res.direct.hits)
		}
		kb := "-"
		if !res.local {
			kb = fmt.Sprintf("%.1f", q.bytes/1024)
		}
		fmt.Fprintf(tw, "%.0f\t%s\t%s\t%s\t\n", q.hits, drows, kb, res.load1)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func (r *report) notes(w io.Writer) {
	fmt.Fprintln(w, "Direct equivalents (W = the project's watermark, read once after loading; Get queries over gRPC, GET over REST, as queryd asks them):")
	seen := map[string]bool{}
	for _, res := range r.results {
		if res.directDoc == "" || seen[res.name] {
			continue
		}
		seen[res.name] = true
		fmt.Fprintf(w, "  %-26s %s\n", res.name, res.directDoc)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Notes:")
	for _, n := range r.embeddingNotes() {
		fmt.Fprintln(w, "  "+n)
	}
	fmt.Fprintln(w, "  hits = results in queryd's answer (1 for an answer about one thing), direct rows = rows the direct queries")
	fmt.Fprintln(w, "  returned, answer KB = queryd's JSON text: means over the warm-up calls. load1 = the machine's 1-minute load")
	fmt.Fprintln(w, "  average when the row ended (with 2 CPUs, anything above ~2 means something else competed for them).")
	fmt.Fprintf(w, "  search_files runs with similarity_threshold %.2f and limit %d: the random vectors never pass it, so matches come\n", r.cfg.Similarity, searchFilesLimit)
	fmt.Fprintln(w, "  from the model-embedded chunks (typically 0-10 a query); queryd still fetches up to 3,000 neighbours by distance.")
	fmt.Fprintln(w, "  queryd's extra work per call is the ratio's numerator minus its denominator: MCP/JSON-RPC over HTTP and auth,")
	fmt.Fprintln(w, "  argument checks, the project list and watermark reads, version visibility checks (LatestVersions, more Weaviate")
	fmt.Fprintln(w, "  round trips), the tool's own extra queries (e.g. read's node resolution) and building the answer.")
	fmt.Fprintln(w, "  Rows without a direct query (list_contents, find, list_files, status) have no single core query to compare with.")
	fmt.Fprintln(w, "  Everything shares the machine's CPUs: at c=16 the client, queryd and Weaviate compete for them, so")
	fmt.Fprintln(w, "  concurrency-16 numbers measure saturation, not per-request cost.")
}

// embeddingNotes put the tools that embed their query in queryd next to
// the cost of embedding one query in process.
func (r *report) embeddingNotes() []string {
	embed := map[int]time.Duration{}
	for _, res := range r.results {
		if res.local && strings.HasPrefix(res.name, "embed query") {
			embed[res.c] = res.queryd.percentile(0.5)
		}
	}
	var out []string
	for _, res := range r.results {
		e, ok := embed[res.c]
		if !ok || res.direct == nil || (res.name != "search_knowledge" && res.name != "query_documents") {
			continue
		}
		q, d := res.queryd.percentile(0.5), res.direct.percentile(0.5)
		out = append(out, fmt.Sprintf("%s c=%d embeds its query in queryd (the direct side does not): p50 %s - embedding p50 %s = %s ms, x%.1f direct (approximate)",
			res.name, res.c, ms(q), ms(e), ms(max(0, q-e)), ratio(max(0, q-e), d)))
	}
	return out
}

// cpuModel names the CPU from /proc/cpuinfo ("" elsewhere).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// serverVersions lists the servers of the stack with their versions.
func serverVersions() string {
	var bins []string
	for _, b := range testservers.All {
		bins = append(bins, b.Name+" "+b.Version)
	}
	return strings.Join(bins, ", ")
}

// machineLine is the markdown reports' sentence about the machine measured
// on: CPUs, servers and the JSON implementation.
func machineLine() string {
	return fmt.Sprintf("Machine: %d CPUs, %s, %s; servers (%s), services and this client share it. JSON: %s.",
		runtime.NumCPU(), cpuModel(), runtime.Version(), serverVersions(), jsonImplementation)
}

// writeOut writes a report to stdout and, when out is set, to the file out.
func writeOut(out string, write func(io.Writer) error) error {
	if err := write(os.Stdout); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	return writeFile(out, write)
}

// writeFile writes the file path (and its folder) with write.
func writeFile(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
