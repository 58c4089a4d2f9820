package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/deploy/measure/benchstack"
)

// sample is one measured upload.
type sample struct {
	Size            int
	Loaded          bool
	Keyword, Vector time.Duration // from the PUT's return to found; 0 if never
	Stages          stageTimes    // as object_status reports them
	Err             string
}

// stageTimes are object_status's stage times of one upload.
type stageTimes struct {
	Uploaded  time.Time `json:"uploaded"`
	Seen      time.Time `json:"seen"`
	Extracted time.Time `json:"extracted"`
	Committed time.Time `json:"committed"`
	Embedded  time.Time `json:"embedded"`
}

// modeResult is every sample of one event path.
type modeResult struct {
	Mode     string
	Samples  []sample
	LoadRate float64 // background uploads per second achieved
}

type bench struct {
	cfg    Config
	s3     *minio.Client
	bucket string
	mcp    *client.Client
	log    io.Writer
}

// startStack starts the local stack in a new temporary directory with
// extra environment per service; stop stops it and removes the directory.
func startStack(ctx context.Context, cfg Config, env map[string][]string, what string, log io.Writer) (stack *benchstack.Stack, stop func(), err error) {
	dir, err := os.MkdirTemp("", "strata-freshness-")
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(log, "%s: starting the local stack in %s\n", what, dir)
	stack, err = benchstack.Start(ctx, localstack.Options{Root: cfg.Root, StateDir: dir, Progress: log, ServiceEnv: env})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return stack, func() { stack.Stop(30 * time.Second); os.RemoveAll(dir) }, nil
}

// measureMode starts a stack with the given event path and measures every
// size, idle and under load.
func measureMode(ctx context.Context, cfg Config, mode string, log io.Writer) (modeResult, error) {
	res := modeResult{Mode: mode}
	env := map[string][]string{}
	if mode == "durable" {
		env["ingestor"] = []string{"STRATA_LIVE_SUBJECT="} // durable events only
	}
	stack, stop, err := startStack(ctx, cfg, env, mode+" events", log)
	if err != nil {
		return res, err
	}
	defer stop()
	session, err := stack.Session(ctx, "strata-freshness")
	if err != nil {
		return res, fmt.Errorf("MCP session: %w", err)
	}
	defer session.Close()
	b := &bench{cfg: cfg, s3: stack.S3, bucket: stack.Env.Bucket, mcp: session, log: log}
	// One warm-up upload: the first embedding loads the model.
	if s := b.measure(ctx, "fresh/warmup.md", 1000, false); s.Err != "" {
		return res, fmt.Errorf("warm-up upload: %s", s.Err)
	}
	scenarios := []bool{false}
	if cfg.Load > 0 && (mode == "live" || !cfg.DurableIdleOnly) {
		scenarios = append(scenarios, true)
	}
	for _, loaded := range scenarios {
		var stopLoad func() float64
		if loaded {
			stopLoad = b.backgroundLoad(ctx)
		}
		for _, size := range cfg.Sizes {
			for i := range cfg.Samples {
				key := fmt.Sprintf("fresh/%s/%d-%d.md", map[bool]string{false: "idle", true: "loaded"}[loaded], size, i)
				s := b.measure(ctx, key, size, loaded)
				res.Samples = append(res.Samples, s)
				fmt.Fprintf(log, "%s %s %d B: keyword %v vector %v %s\n", mode, key, size, s.Keyword, s.Vector, s.Err)
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
			}
		}
		if stopLoad != nil {
			res.LoadRate = stopLoad()
		}
	}
	return res, nil
}

// measure uploads one file holding a word no other file has and polls until
// keyword search and vector search find it.
func (b *bench) measure(ctx context.Context, key string, size int, loaded bool) sample {
	s := sample{Size: size, Loaded: loaded}
	token := fmt.Sprintf("fresh%016x", rand.Uint64())
	body := document(token, size)
	if _, err := b.s3.PutObject(ctx, b.bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{ContentType: "text/markdown"}); err != nil {
		s.Err = fmt.Sprintf("upload: %v", err)
		return s
	}
	uploaded := time.Now()
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	path := strings.TrimPrefix(key, "fresh/")
	var wg sync.WaitGroup
	var kerr, verr error
	wg.Go(func() {
		kerr = b.poll(ctx, "search_keyword", map[string]any{"query": token, "top_k": 1}, func(out map[string]json.RawMessage) bool {
			return len(list(out, "results")) > 0
		})
		if kerr == nil {
			s.Keyword = time.Since(uploaded)
		}
	})
	wg.Go(func() {
		verr = b.poll(ctx, "hybrid_search", map[string]any{"query": token, "alpha": 1, "path_prefix": path, "top_k": 1}, func(out map[string]json.RawMessage) bool {
			for _, hit := range list(out, "results") {
				var h struct {
					Explain struct {
						VectorRank *int `json:"vector_rank"`
					} `json:"explain"`
				}
				if json.Unmarshal(hit, &h) == nil && h.Explain.VectorRank != nil {
					return true
				}
			}
			return false
		})
		if verr == nil {
			s.Vector = time.Since(uploaded)
		}
	})
	wg.Wait()
	switch {
	case kerr != nil:
		s.Err = fmt.Sprintf("keyword search: %v", kerr)
	case verr != nil:
		s.Err = fmt.Sprintf("vector search: %v", verr)
	}
	var st struct {
		Stages stageTimes `json:"stages"`
	}
	if out, err := b.call(ctx, "object_status", map[string]any{"key": key}); err == nil {
		_ = json.Unmarshal(out["stages"], &st.Stages)
		s.Stages = st.Stages
	}
	return s
}

// poll calls tool every 10 ms until found says yes or ctx ends.
func (b *bench) poll(ctx context.Context, tool string, args map[string]any, found func(map[string]json.RawMessage) bool) error {
	for {
		out, err := b.call(ctx, tool, args)
		if err != nil {
			if ctx.Err() != nil { // the sample's deadline struck during a call
				return fmt.Errorf("not found within %v", b.cfg.Timeout)
			}
			return err
		}
		if found(out) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not found within %v", b.cfg.Timeout)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (b *bench) call(ctx context.Context, tool string, args map[string]any) (map[string]json.RawMessage, error) {
	var out map[string]json.RawMessage
	_, err := mcpclient.CallJSON(ctx, b.mcp, tool, args, &out)
	return out, err
}

func list(out map[string]json.RawMessage, key string) []json.RawMessage {
	var l []json.RawMessage
	_ = json.Unmarshal(out[key], &l)
	return l
}

// backgroundLoad uploads 1 KB files to another project at cfg.Load a second
// until the returned stop is called, which reports the rate achieved.
func (b *bench) backgroundLoad(ctx context.Context) (stop func() float64) {
	ctx, cancel := context.WithCancel(ctx)
	var sent atomic.Int64
	var wg sync.WaitGroup
	started := time.Now()
	wg.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(b.cfg.Load))
		defer tick.Stop()
		sem := make(chan struct{}, 16)
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case sem <- struct{}{}:
			default:
				continue // the uploads lag: skip a beat rather than pile up
			}
			wg.Go(func() {
				defer func() { <-sem }()
				body := document(fmt.Sprintf("load%d", i), 1000)
				if _, err := b.s3.PutObject(ctx, b.bucket, fmt.Sprintf("load/%d.md", i), strings.NewReader(body), int64(len(body)),
					minio.PutObjectOptions{ContentType: "text/markdown"}); err == nil {
					sent.Add(1)
				}
			})
		}
	})
	return func() float64 {
		cancel()
		wg.Wait()
		return float64(sent.Load()) / time.Since(started).Seconds()
	}
}

// fillerWords make a document of any size; none starts with "fresh".
var fillerWords = strings.Fields("the quarterly report covers revenue growth in the northern region and the plans for next year " +
	"including hiring budget product launches customer feedback and the migration of billing to the new platform")

// document is Markdown of about size bytes with token in its first
// paragraph. The words are shuffled per file so that no chunk repeats one of
// another file (the embedder would not embed it again).
func document(token string, size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	fmt.Fprintf(&b, "# Freshness probe\n\nThis file carries the word %s once.\n\n", token)
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for i := 0; b.Len() < size; i++ {
		if i%80 == 79 {
			b.WriteString(".\n\n")
			if i%800 == 799 {
				fmt.Fprintf(&b, "## Part %d\n\n", i/800+1)
			}
			continue
		}
		b.WriteString(fillerWords[rng.IntN(len(fillerWords))])
		b.WriteByte(' ')
	}
	return b.String()
}
