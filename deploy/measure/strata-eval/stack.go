package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/deploy/measure/benchstack"
)

// evaluator is a running local stack with MCP sessions.
type evaluator struct {
	cfg       Config
	progress  io.Writer
	stack     *benchstack.Stack
	stateDir  string
	tempState bool
	sessions  []*client.Client
	model     string // the embedding model queryd searches with, from status
}

// startEvaluator starts the local stack on free ports and connects to it.
func startEvaluator(ctx context.Context, cfg Config, progress io.Writer) (_ *evaluator, err error) {
	ev := &evaluator{cfg: cfg, progress: progress, stateDir: cfg.StateDir}
	if ev.stateDir == "" {
		if ev.stateDir, err = os.MkdirTemp("", "strata-eval-"); err != nil {
			return nil, fmt.Errorf("state directory: %w", err)
		}
		ev.tempState = true
	}
	defer func() {
		if err != nil {
			ev.stop(true)
		}
	}()
	fmt.Fprintln(progress, "starting the local stack in", ev.stateDir)
	if ev.stack, err = benchstack.Start(ctx, localstack.Options{Root: cfg.Root, StateDir: ev.stateDir, Progress: progress}); err != nil {
		return nil, err
	}
	for i := range cfg.Clients {
		c, err := ev.stack.Session(ctx, "strata-eval")
		if err != nil {
			return nil, fmt.Errorf("MCP session %d: %w", i, err)
		}
		ev.sessions = append(ev.sessions, c)
	}
	return ev, nil
}

// stop closes the sessions and stops the stack. A temporary state
// directory is removed unless keep (then its logs are left to read).
func (ev *evaluator) stop(keep bool) {
	for _, c := range ev.sessions {
		c.Close()
	}
	if ev.stack != nil {
		fmt.Fprintln(ev.progress, "stopping the local stack")
		ev.stack.Stop(30 * time.Second)
	}
	switch {
	case ev.tempState && !keep:
		_ = os.RemoveAll(ev.stateDir)
	case ev.tempState:
		fmt.Fprintln(ev.progress, "state and logs kept in", ev.stateDir)
	}
}

// notes are an answer's text blocks other than its JSON, such as
// hybrid_search's "No strong match" line before it.
func notes(res *mcp.CallToolResult) []string {
	var out []string
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			if t := strings.TrimSpace(tc.Text); !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
				out = append(out, tc.Text)
			}
		}
	}
	return out
}

// upload puts every document of d into the bucket as Markdown.
func (ev *evaluator) upload(ctx context.Context, d *Dataset) error {
	var done atomic.Int64
	return parallel(ctx, ev.cfg.Uploaders, len(d.Docs), func(ctx context.Context, _, i int) error {
		doc := d.Docs[i]
		body := doc.Markdown()
		if _, err := ev.stack.S3.PutObject(ctx, ev.stack.Env.Bucket, doc.Key(d.Name), strings.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{ContentType: "text/markdown"}); err != nil {
			return fmt.Errorf("upload %s: %w", doc.Key(d.Name), err)
		}
		if n := done.Add(1); n%1000 == 0 {
			fmt.Fprintf(ev.progress, "%s: uploaded %d/%d\n", d.Name, n, len(d.Docs))
		}
		return nil
	})
}

// projectStatus is one project's counts in the status tool's answer.
type projectStatus struct{ mcpclient.ProjectStatus }

// settled reports whether every uploaded file of the project has been
// processed (indexed, or failed) and every chunk has a vector.
func (p projectStatus) settled(files int) bool {
	return p.DocumentCount+p.FailedCount+p.UnsupportedCount >= files && p.ChunkCount > 0 && p.EmbeddedChunkCount == p.ChunkCount
}

func (p projectStatus) String() string {
	return fmt.Sprintf("documents %d, failed %d, chunks embedded %d/%d", p.DocumentCount, p.FailedCount+p.UnsupportedCount,
		p.EmbeddedChunkCount, p.ChunkCount)
}

// waitIndexed polls status every 2 s until d's project has settled.
func (ev *evaluator) waitIndexed(ctx context.Context, d *Dataset) (projectStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, ev.cfg.IndexTimeout)
	defer cancel()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	var last projectStatus
	lastPrint := time.Time{}
	for {
		var st mcpclient.Status
		if _, err := mcpclient.CallJSON(ctx, ev.sessions[0], "status", map[string]any{}, &st); err != nil && ctx.Err() == nil {
			return last, err
		}
		ev.model = strings.TrimSpace(st.Configuration.Model + " (" + st.Configuration.Embedding + ")")
		for _, p := range st.Projects {
			if p.Project == d.Name {
				last = projectStatus{p}
			}
		}
		if last.settled(len(d.Docs)) {
			fmt.Fprintf(ev.progress, "%s: indexed: %s\n", d.Name, last)
			return last, nil
		}
		if time.Since(lastPrint) >= 10*time.Second {
			fmt.Fprintf(ev.progress, "%s: waiting for %d files: %s\n", d.Name, len(d.Docs), last)
			lastPrint = time.Now()
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return last, fmt.Errorf("not indexed and embedded within %s (%d files uploaded; %s)", ev.cfg.IndexTimeout, len(d.Docs), last)
			}
			return last, ctx.Err()
		case <-tick.C:
		}
	}
}

// parallel calls fn for 0..n-1 on the given number of workers (fn learns
// its worker's number). The first error stops the rest and is returned.
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, worker, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, w, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
