package main

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os/exec"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// scaleMarkdown writes the scale report: how each stage was loaded, then
// per stage every row side by side with its direct query and the ratio.
func scaleMarkdown(w io.Writer, cfg Config, stages []stage, full *corpus, plot string) error {
	bw := bufio.NewWriter(w)
	title := "Strata at scale: every tool"
	if cfg.LoadPath == loadBatch {
		title = "Loading without commits"
	}
	fmt.Fprintf(bw, "# %s from %s to %s chunks\n\n", title, count(cfg.Sizes[0]), count(cfg.Sizes[len(cfg.Sizes)-1]))
	fmt.Fprintf(bw, "Written by `go run ./deploy/measure/strata-bench %s` on %s.\n", strings.Join(cfg.args, " "), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintln(bw, machineLine())
	fmt.Fprintf(bw, "Code measured: %s.\n", codeRevision())
	commits := "one commit per file"
	if cfg.LoadPath == loadBatch {
		commits = "no commits"
	}
	fmt.Fprintf(bw, "One index grows through the sizes in one stack: %d chunks a file (%d sections, ~%d words a chunk), %s, project(s) %s; ",
		full.ChunksPerFile, sectionsPerFile, wordsPerChunk, commits, strings.Join(full.Projects, ", "))
	fmt.Fprintf(bw, "vectors 512-d (use-lite-512: the first %d chunks embedded with the model, the rest random unit vectors), HNSW cosine, asynchronous indexing with %d indexing workers (-index-workers).\n\n", cfg.RealVectors, cfg.IndexWorkers)
	fmt.Fprintln(bw, "## Loading")
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "| index size | chunks added | load time | chunks/s (objects stored) | vector queue drained after | chunks/s incl. vector indexing | weaviate-server RSS |")
	fmt.Fprintln(bw, "|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range stages {
		total := s.Load.Elapsed + s.Drain
		fmt.Fprintf(bw, "| %s | %d | %s | %.0f | %s | %.0f | %.0f MiB |\n", count(s.Chunks), s.Load.Chunks, s.Load.Elapsed.Round(time.Second),
			s.Load.chunksPerSecond(), s.Drain.Round(time.Second), float64(s.Load.Chunks)/total.Seconds(), float64(s.RSS)/(1<<20))
	}
	if cfg.LoadPath == loadBatch {
		fmt.Fprintf(bw, "\nLoading wrote the objects of the indexer's commits (sections, chunks, Version, Document, then the ChunkVectors) in the same batches with %d goroutines, but without the commit protocol (strata-bench's raw write path: index.CommitObjects and index.VectorObjects written in batches as the indexer sends them; no lock, no watermark, no outcome decision, no object state): Weaviate's own cost of the same writes. Nothing was published, so no tool was measured.\n", cfg.LoadWorkers)
		return bw.Flush()
	}
	fmt.Fprintf(bw, "\nLoading is the indexer's own commit path (index.Writer.ApplyFileVersion + ApplyVectors, %d goroutines, one project, commits serialised per project and shared by the versions waiting together, at most -max-group %d) straight into Weaviate, without S3 or extraction.\n\n", cfg.LoadWorkers, cfg.MaxGroup)
	fmt.Fprintf(bw, "## Latency against index size\n\n![p50 latency of each tool at one client against index size](%s)\n\n", plot)
	for _, s := range stages {
		fmt.Fprintf(bw, "## %s chunks\n\n%s; load average %s before measuring; measured in %s.\n\n", count(s.Chunks), s.Check, s.Load1, s.MeasuredIn.Round(time.Second))
		fmt.Fprintln(bw, "| tool | clients | p50 ms | p99 ms | direct p50 | direct p99 | ratio p50 | ratio p99 | goal p50 (direct x1.15 + 0.5 ms) |")
		fmt.Fprintln(bw, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
		for _, r := range s.Results {
			q := r.queryd
			if r.direct == nil {
				fmt.Fprintf(bw, "| %s | %d | %s | %s | - | - | - | - | - |\n", r.name, r.c, ms(q.percentile(0.5)), ms(q.percentile(0.99)))
				continue
			}
			d := r.direct
			goal := "-"
			if r.c == 1 && !r.local { // a local row compares two queries, not a tool with its query
				limit := time.Duration(float64(d.percentile(0.5))*1.15) + 500*time.Microsecond
				goal = "met"
				if q.percentile(0.5) > limit {
					goal = fmt.Sprintf("missed by %s ms", ms(q.percentile(0.5)-limit))
				}
			}
			fmt.Fprintf(bw, "| %s | %d | %s | %s | %s | %s | %.2f | %.2f | %s |\n", r.name, r.c, ms(q.percentile(0.5)), ms(q.percentile(0.99)),
				ms(d.percentile(0.5)), ms(d.percentile(0.99)), ratio(q.percentile(0.5), d.percentile(0.5)), ratio(q.percentile(0.99), d.percentile(0.99)), goal)
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintln(bw, "Direct: the tool's core Weaviate query issued from the benchmark process with the same client, protocol (gRPC for filtered, keyword and vector queries, REST for reads by id, as queryd), inputs and watermark (see docs/bench/queryd.txt for each one); for the text-query tools (search_knowledge, query_documents) it embeds the query with the same model first, as queryd does. Rows without a direct query (list_contents, find, list_files, status) are answered from queryd's catalog or several queries.")
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "MCP side: protocol 2026-07-28 tools/call over streamable HTTP from a plain net/http client that decodes each answer once, as the direct side's Weaviate client does (mcp-go's own client decodes a tool result three times; see BenchmarkListFileChunksLarge/over-HTTP). The anchor row is mcp-go's server with a no-op tool, called the same way.")
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "At 16 clients the client, queryd and Weaviate share 2 cores, so the ratio there compares CPU per call: queryd's HTTP, JSON-RPC and JSON work against Weaviate's own. For the cheapest reads (get_file_chunk: one REST GET) the anchor alone costs about as much CPU as the query.")
	return bw.Flush()
}

func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// plotScale draws p50 at one client against index size (both log scale),
// one line per tool, with a legend.
func plotScale(path string, stages []stage) error {
	const w, h, left, right, top, bottom = 960, 600, 70, 250, 30, 50
	series := map[string][]float64{} // tool -> p50 ms per stage (NaN: not measured)
	for i, s := range stages {
		for _, r := range s.Results {
			if r.c != 1 {
				continue
			}
			if series[r.name] == nil {
				series[r.name] = make([]float64, len(stages))
				for j := range series[r.name] {
					series[r.name][j] = math.NaN()
				}
			}
			series[r.name][i] = float64(r.queryd.percentile(0.5)) / float64(time.Millisecond)
		}
	}
	names := make([]string, 0, len(series))
	lo, hi := math.Inf(1), math.Inf(-1)
	for n, v := range series {
		names = append(names, n)
		for _, x := range v {
			if x > 0 {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	xlo, xhi := math.Log10(float64(stages[0].Chunks)), math.Log10(float64(stages[len(stages)-1].Chunks))
	if xhi == xlo {
		xlo, xhi = xlo-0.5, xhi+0.5
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(img, img.Bounds(), color.White)
	px := func(chunks int) int {
		return left + int((math.Log10(float64(chunks))-xlo)/(xhi-xlo)*float64(w-left-right))
	}
	py := func(ms float64) int {
		return h - bottom - int((math.Log10(ms)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*float64(h-top-bottom))
	}
	grey, black := color.RGBA{220, 220, 220, 255}, color.Black
	for d := lo; d <= hi*1.0001; d *= 10 {
		line(img, left, py(d), w-right, py(d), grey)
		label(img, 5, py(d)+4, fmt.Sprintf("%g ms", d), black)
	}
	for _, s := range stages {
		line(img, px(s.Chunks), top, px(s.Chunks), h-bottom, grey)
		label(img, px(s.Chunks)-15, h-bottom+18, count(s.Chunks), black)
	}
	label(img, left+(w-left-right)/2-60, h-10, "index size (chunks)", black)
	label(img, left, 18, "p50 latency at 1 client (log scales)", black)
	for i, n := range names {
		c := palette[i%len(palette)]
		v := series[n]
		for j := 1; j < len(v); j++ {
			if v[j-1] > 0 && v[j] > 0 {
				thick(img, px(stages[j-1].Chunks), py(v[j-1]), px(stages[j].Chunks), py(v[j]), c)
			}
		}
		for j := range v {
			if v[j] > 0 {
				fill(img, image.Rect(px(stages[j].Chunks)-3, py(v[j])-3, px(stages[j].Chunks)+4, py(v[j])+4), c)
			}
		}
		y := top + 10 + i*18
		fill(img, image.Rect(w-right+15, y-6, w-right+35, y), c)
		label(img, w-right+40, y, n, black)
	}
	return writeFile(path, func(w io.Writer) error { return png.Encode(w, img) })
}

var palette = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255}, {0, 0, 128, 255},
	{128, 0, 0, 255}, {0, 128, 128, 255}, {255, 215, 0, 255}, {0, 0, 0, 255}, {75, 0, 130, 255}}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.Set(x, y, c)
		}
	}
}

// line draws with Bresenham's algorithm.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func thick(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	for d := -1; d <= 1; d++ {
		line(img, x0, y0+d, x1, y1+d, c)
	}
}

func label(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// codeRevision is the commit this binary was built from (go build stamps
// it; for go run, git is asked in the working directory), noting
// uncommitted changes.
func codeRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" { // go run does not stamp it: ask git
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			return "unknown (no build information and no git)"
		}
		rev = strings.TrimSpace(string(out))
		status, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
		dirty = len(bytes.TrimSpace(status)) > 0
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if dirty {
		return "commit " + rev + " + uncommitted changes"
	}
	return "commit " + rev
}
