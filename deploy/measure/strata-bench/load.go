package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/embedder/engine/uselite"
	"github.com/strata-kb/strata/indexer/index"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/tick"
)

// startStack starts the whole local stack on free ports in stateDir, with
// queryd's per-session tool budget off (each benchmark client calls far more
// than 20 tools) and querydEnv after queryd's own settings (the last value of
// a variable wins).
func startStack(ctx context.Context, root, stateDir string, indexWorkers int, weaviateEnv, querydEnv []string, pprof bool, progress io.Writer) (*localstack.Stack, error) {
	ports, err := localstack.FreePorts()
	if err != nil {
		return nil, fmt.Errorf("pick ports: %w", err)
	}
	// Bulk loading indexes vectors behind the writes; the scale run waits
	// for the queue before it measures (waitVectorQueue).
	st, err := localstack.Up(ctx, localstack.Options{Root: root, StateDir: stateDir, Ports: ports, Progress: progress,
		ServiceEnv:            map[string][]string{"queryd": append([]string{"STRATA_TOOL_BUDGET=0", "STRATA_PPROF=" + strconv.FormatBool(pprof)}, querydEnv...)},
		WeaviateAsyncIndexing: true, WeaviateIndexWorkers: indexWorkers, WeaviateEnv: weaviateEnv})
	if err != nil {
		return nil, fmt.Errorf("start local stack: %w", err)
	}
	return st, nil
}

// embedSample embeds n chunks of the corpus (the first n in file order, or
// spread over the files: corpus.sampleSlot) with the real model, batch by
// batch.
func embedSample(ctx context.Context, m *uselite.Model, c *corpus, n int, progress io.Writer) ([][]float32, error) {
	n = min(n, c.chunkCount())
	texts := make([]string, 0, n)
	for k, f := range c.Files {
		for i, ch := range f.FV.Chunks {
			if c.sampleSlot(k*c.ChunksPerFile+i, n) >= 0 {
				texts = append(texts, ch.Content)
			}
		}
	}
	const batch = 64
	out := make([][]float32, 0, n)
	started := time.Now()
	for start := 0; start < len(texts); start += batch {
		vecs, err := m.Embed(ctx, texts[start:min(start+batch, len(texts))])
		if err != nil {
			return nil, fmt.Errorf("embed sample chunks %d..: %w", start, err)
		}
		out = append(out, vecs...)
		if (start/batch)%8 == 7 {
			fmt.Fprintf(progress, "embedded %d/%d sample chunks (%.0f chunks/s)\n", len(out), n, float64(len(out))/time.Since(started).Seconds())
		}
	}
	return out, nil
}

// vectorsOf returns file k's chunk vectors: the real embeddings where the
// sample has them (corpus.sampleSlot), random unit vectors for the rest.
func vectorsOf(seed int64, c *corpus, k int, real [][]float32) []pipeline.ChunkVector {
	f := c.Files[k]
	rng := rand.New(rand.NewPCG(uint64(seed)^0x5eed, uint64(k)))
	out := make([]pipeline.ChunkVector, len(f.FV.Chunks))
	for i, ch := range f.FV.Chunks {
		out[i] = pipeline.ChunkVector{ChunkID: ch.ID, SourceChecksum: ch.SourceChecksum}
		if j := c.sampleSlot(k*c.ChunksPerFile+i, len(real)); j >= 0 {
			out[i].Vector = real[j]
		} else {
			out[i].Vector = randomUnitVector(rng, uselite.Dim)
		}
	}
	return out
}

// loadResult says how the load went.
type loadResult struct {
	Files, Chunks int
	Workers       int
	Elapsed       time.Duration
}

func (r loadResult) chunksPerSecond() float64 { return float64(r.Chunks) / r.Elapsed.Seconds() }

// The -load-path values.
const (
	loadCommit = "commit" // ApplyFileVersion + ApplyVectors: what the indexer does
	loadBatch  = "batch"  // rawWriter (raw.go): the same writes, no commit protocol
)

// loader writes the corpus with the indexer's own writer, bypassing S3 and
// the ingestion pipeline: each file is one commit (ApplyFileVersion) and its
// vectors one ApplyVectors, or with path loadBatch the same objects without
// a commit.
type loader struct {
	w    *index.Writer
	c    *corpus
	real [][]float32
	seed int64
	raw  *rawWriter // with path loadBatch: writes instead of w
}

// openWriter connects an index.Writer to the stack's Weaviate and NATS; the
// returned close releases the NATS connection.
func openWriter(ctx context.Context, st *localstack.Stack, maxGroup, batchParallel int) (*index.Writer, func(), error) {
	wv, err := schema.NewClient(st.Servers.WeaviateHost, st.Servers.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		return nil, nil, err
	}
	nc, js, err := pipeline.Connect(st.Env.NATSURL, "strata-bench", nil)
	if err != nil {
		return nil, nil, err
	}
	seqs, err := index.OpenSequences(ctx, js, 1)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	marks, err := index.OpenEmbeddedMarks(ctx, js, 1)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	w := index.New(index.Config{Weaviate: wv, Sequences: seqs, Log: slog.New(slog.DiscardHandler), EmbeddedMarks: marks, MaxGroup: max(maxGroup, 1), BatchParallel: batchParallel})
	return w, nc.Close, nil
}

func (l *loader) loadFile(ctx context.Context, k int) error {
	f := l.c.Files[k]
	v := pipeline.Vectors{Object: f.FV.Object, Project: f.project(), FileID: f.FV.FileID, FileVersionID: f.FV.FileVersionID,
		Model: uselite.ModelName, Dimensions: uselite.Dim, Chunks: vectorsOf(l.seed, l.c, k, l.real)}
	if l.raw != nil {
		return l.raw.write(ctx, f.FV, v)
	}
	out, err := l.w.ApplyFileVersion(ctx, f.FV)
	if err != nil {
		return fmt.Errorf("apply %s: %w", f.FV.Object.Path, err)
	}
	if out != index.Applied {
		return fmt.Errorf("apply %s: %s, want %s (is the state directory fresh?)", f.FV.Object.Path, out, index.Applied)
	}
	if err := l.w.ApplyVectors(ctx, v); err != nil {
		return fmt.Errorf("vectors of %s: %w", f.FV.Object.Path, err)
	}
	return nil
}

// load writes every file with workers goroutines, printing progress.
func (l *loader) load(ctx context.Context, workers int, progress io.Writer) (loadResult, error) {
	return l.loadRange(ctx, workers, 0, len(l.c.Files), progress)
}

// loadRange writes files [from, to).
func (l *loader) loadRange(ctx context.Context, workers, from, to int, progress io.Writer) (loadResult, error) {
	started := time.Now()
	total := (to - from) * l.c.ChunksPerFile
	var done atomic.Int64
	stop := tick.Every(10*time.Second, func() bool {
		chunks := int(done.Load()) * l.c.ChunksPerFile
		fmt.Fprintf(progress, "loaded %d/%d chunks (%.0f chunks/s)\n", chunks, total, float64(chunks)/time.Since(started).Seconds())
		return true
	})
	err := forEach(ctx, workers, to-from, func(ctx context.Context, _, k int) error {
		if err := l.loadFile(ctx, from+k); err != nil {
			return err
		}
		done.Add(1)
		return nil
	})
	stop()
	res := loadResult{Files: to - from, Chunks: total, Workers: workers, Elapsed: time.Since(started)}
	if err != nil {
		return res, fmt.Errorf("load index: %w", err)
	}
	return res, nil
}

// forEach runs fn(worker, 0..n-1) on workers goroutines (worker is the
// goroutine's number) and returns the first error; the others stop at
// their next item.
func forEach(ctx context.Context, workers, n int, fn func(ctx context.Context, worker, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range max(1, min(workers, n)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, w, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
