package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/deploy/measure/benchstack"
)

// bench is one stack under measurement.
type bench struct {
	cfg   config
	st    *benchstack.Stack
	mcp   *client.Client
	reads []mcpclient.ReadCall
	last  int // the node killed last (-1: none yet)
}

func newBench(ctx context.Context, st *benchstack.Stack, cfg config) (*bench, error) {
	c, err := st.Session(ctx, "strata-failover")
	if err != nil {
		return nil, fmt.Errorf("connect to queryd: %w", err)
	}
	return &bench{cfg: cfg, st: st, mcp: c, last: -1}, nil
}

func (b *bench) close() { b.mcp.Close() }

// seed uploads the files, waits until every one is indexed and embedded,
// and lists a call of every read tool about one of them.
func (b *bench) seed(ctx context.Context) error {
	logf("indexing %d files", b.cfg.Files)
	for i := range b.cfg.Files {
		body := fmt.Sprintf("# File %d\n\nfailoverword file%03d body\n", i, i)
		key := fmt.Sprintf("acme/failover/f%03d.md", i)
		if _, err := b.st.S3.PutObject(ctx, localstack.Bucket, key, strings.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{ContentType: "text/markdown"}); err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		out, _ := b.call(ctx, "status", map[string]any{})
		if embedded(out, b.cfg.Files) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not all %d files indexed and embedded: %v", b.cfg.Files, out)
		}
		time.Sleep(time.Second)
	}
	const path, word = "failover/f007.md", "file007"
	list, errText := b.call(ctx, "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
	chunks, _ := list["data"].([]any)
	if errText != "" || len(chunks) == 0 {
		return fmt.Errorf("list_file_chunks %s: %v %s", path, list, errText)
	}
	first := chunks[0].(map[string]any)
	b.reads = mcpclient.EveryRead("acme", path, word, first["id"].(string), first["file_id"].(string))
	return nil
}

// embedded reports a status answer with every file's chunk embedded.
func embedded(status map[string]any, files int) bool {
	projects, _ := status["projects"].([]any)
	for _, p := range projects {
		ps, _ := p.(map[string]any)
		if ps["project"] == "acme" && ps["chunkCount"] == float64(files) && ps["embeddedChunkCount"] == float64(files) {
			return true
		}
	}
	return false
}

// call invokes a tool and returns its structured result, or the error text.
func (b *bench) call(ctx context.Context, tool string, args map[string]any) (map[string]any, string) {
	text, err := b.callText(ctx, tool, args)
	if err != nil {
		return nil, err.Error()
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Sprintf("%s: result is not JSON: %v", tool, err)
	}
	return out, ""
}

// callText invokes a tool and returns its text, or an error for a failed call.
func (b *bench) callText(ctx context.Context, tool string, args map[string]any) (string, error) {
	res, err := mcpclient.Call(ctx, b.mcp, tool, args)
	if err != nil {
		return "", err
	}
	return mcpclient.Text(res), nil
}

// everyReadOnce calls every read tool once, all at once, each within the
// deadline, and returns when each answered (complete or not) after since.
func (b *bench) everyReadOnce(since time.Time) (answered map[string]time.Duration, failed map[string]string) {
	answered, failed = map[string]time.Duration{}, map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, r := range b.reads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Deadline)
			defer cancel()
			text, err := b.callText(ctx, r.Tool, r.Args)
			took := time.Since(since)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failed[r.Tool] = fmt.Sprintf("after %s: %.200s", took.Round(time.Millisecond), err)
			case !strings.Contains(text, r.Want):
				failed[r.Tool] = fmt.Sprintf("after %s: answer without %q", took.Round(time.Millisecond), r.Want)
			default:
				answered[r.Tool] = took
			}
		}()
	}
	wg.Wait()
	return answered, failed
}
