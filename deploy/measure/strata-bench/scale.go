package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/embedder/engine/uselite"
	"github.com/strata-kb/strata/indexer/index"
)

// stage is one size of a scale run (-sizes): the index grown to Chunks in
// one stack, how fast it grew, and every row measured at that size.
type stage struct {
	Chunks     int
	Load       loadResult    // the files added since the previous stage
	Drain      time.Duration // then until Weaviate's vector queue was empty
	RSS        int64         // weaviate-server's resident memory, bytes
	Check      string
	Load1      string
	Results    []result
	MeasuredIn time.Duration
}

// runScale grows one index through cfg.Sizes and measures every tool at
// each size, then writes the scale report (markdown) and its plot (PNG).
func runScale(ctx context.Context, cfg Config, st *localstack.Stack, w *index.Writer, full *corpus, model *uselite.Model,
	sample [][]float32, progress io.Writer) ([]stage, error) {
	var stages []stage
	var raw *rawWriter
	if cfg.LoadPath == loadBatch {
		var err error
		if raw, err = newRawWriter(st, cfg.BatchParallel); err != nil {
			return nil, err
		}
	}
	loaded := 0
	for _, size := range cfg.Sizes {
		files := (size + full.ChunksPerFile - 1) / full.ChunksPerFile
		view := &corpus{Files: full.Files[:files], ChunksPerFile: full.ChunksPerFile, Projects: full.Projects}
		program.Logf(progress, "scale: growing the index from %d to %d chunks", loaded*full.ChunksPerFile, view.chunkCount())
		l := &loader{w: w, c: full, real: sample, seed: cfg.Seed, raw: raw}
		res, err := l.loadRange(ctx, cfg.LoadWorkers, loaded, files, progress)
		if err != nil {
			return stages, err
		}
		loaded = files
		s := stage{Chunks: view.chunkCount(), Load: res}
		program.Logf(progress, "scale: loaded %d chunks in %s (%.0f chunks/s); waiting for the vector queue", res.Chunks, res.Elapsed.Round(time.Second), res.chunksPerSecond())
		t0 := time.Now()
		if err := waitVectorQueue(ctx, st); err != nil {
			return stages, err
		}
		s.Drain = time.Since(t0)
		s.RSS = rss(st.Servers.Weaviate.Pid())
		if cfg.LoadPath == loadBatch { // nothing published: no tool would see the files
			s.Check = "not measured: loaded without commits (-load-path batch)"
			stages = append(stages, s)
			if err := writeScale(cfg, stages, full); err != nil {
				return stages, err
			}
			continue
		}
		queries, err := newQueryPool(ctx, model, view, cfg.Seed, 64)
		if err != nil {
			return stages, err
		}
		b, err := newBench(ctx, cfg, st, w, view, queries, model, progress)
		if err != nil {
			return stages, err
		}
		if s.Check, err = b.checkIndex(ctx); err != nil {
			b.close()
			return stages, err
		}
		s.Load1 = loadAverage()
		m0 := time.Now()
		s.Results, err = b.runAll(ctx)
		b.close()
		if err != nil {
			return stages, err
		}
		s.MeasuredIn = time.Since(m0)
		stages = append(stages, s)
		program.Logf(progress, "scale: measured at %d chunks in %s", s.Chunks, s.MeasuredIn.Round(time.Second))
		if err := writeScale(cfg, stages, full); err != nil { // after every stage: a long run keeps what it measured
			return stages, err
		}
	}
	return stages, nil
}

// waitVectorQueue waits until Weaviate has indexed every queued vector
// (asynchronous indexing), so searches measure the index, not the queue.
func waitVectorQueue(ctx context.Context, st *localstack.Stack) error {
	for {
		n, err := vectorQueue(ctx, st)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

func vectorQueue(ctx context.Context, st *localstack.Stack) (int64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+st.Env.WeaviateHost+"/v1/nodes?output=verbose", nil)
	req.Header.Set("Authorization", "Bearer "+st.Env.WeaviateWriterKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("weaviate nodes: %w", err)
	}
	defer resp.Body.Close()
	var nodes struct {
		Nodes []struct {
			Shards []struct {
				VectorQueueLength int64 `json:"vectorQueueLength"`
			} `json:"shards"`
		} `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&nodes); err != nil {
		return 0, fmt.Errorf("weaviate nodes: %w", err)
	}
	var n int64
	for _, node := range nodes.Nodes {
		for _, s := range node.Shards {
			n += s.VectorQueueLength
		}
	}
	return n, nil
}

// rss is a process's resident memory from /proc (0 where there is none).
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// writeScale writes the markdown report to cfg.Out and the plot beside it.
func writeScale(cfg Config, stages []stage, full *corpus) error {
	out := cmp.Or(cfg.Out, filepath.Join("docs", "bench", "scale.md"))
	png := strings.TrimSuffix(out, filepath.Ext(out)) + ".png"
	if cfg.LoadPath == loadBatch {
		png = "" // loading only: no latency to plot
	} else if err := plotScale(png, stages); err != nil {
		return err
	}
	return writeFile(out, func(w io.Writer) error { return scaleMarkdown(w, cfg, stages, full, filepath.Base(png)) })
}
