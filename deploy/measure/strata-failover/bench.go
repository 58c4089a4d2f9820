package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/ids"
)

// bench is one stack under measurement.
type bench struct {
	cfg   config
	st    *localstack.Stack
	s3    *minio.Client
	mcp   *client.Client
	reads []readCall
	last  int // the node killed last (-1: none yet)
}

// readCall is one read tool's call and a word its complete answer holds.
type readCall struct {
	tool string
	args map[string]any
	want string
}

func newBench(ctx context.Context, st *localstack.Stack, cfg config) (*bench, error) {
	s3, err := bucket.Client(st.Env.S3Endpoint, st.Env.S3AccessKey, st.Env.S3SecretKey, false)
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	c, err := mcpclient.Connect(ctx, st.Env.MCPURL, st.Env.APIKey, "strata-failover")
	if err != nil {
		return nil, fmt.Errorf("connect to queryd: %w", err)
	}
	return &bench{cfg: cfg, st: st, s3: s3, mcp: c, last: -1}, nil
}

func (b *bench) close() { b.mcp.Close() }

// seed uploads the files, waits until every one is indexed and embedded,
// and lists a call of every read tool about one of them.
func (b *bench) seed(ctx context.Context) error {
	logf("indexing %d files", b.cfg.Files)
	for i := range b.cfg.Files {
		body := fmt.Sprintf("# File %d\n\nfailoverword file%03d body\n", i, i)
		key := fmt.Sprintf("acme/failover/f%03d.md", i)
		if _, err := b.s3.PutObject(ctx, localstack.Bucket, key, strings.NewReader(body), int64(len(body)),
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
	chunk, fileID := first["id"].(string), first["file_id"].(string)
	name := path[strings.LastIndexByte(path, '/')+1:]
	b.reads = []readCall{
		{"status", map[string]any{}, "acme"},
		{"search_keyword", map[string]any{"query": word}, word},
		{"search_knowledge", map[string]any{"query": word}, "acme"},
		{"hybrid_search", map[string]any{"query": word}, word},
		{"query_documents", map[string]any{"query": word}, word},
		{"list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path}, word},
		{"get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": chunk}, word},
		{"get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunk}, "ready"},
		{"read", map[string]any{"path_part_id": fileID}, word},
		{"read_around", map[string]any{"chunk_id": chunk}, word},
		{"get_info", map[string]any{"path_part_id": fileID}, name},
		{"find", map[string]any{"name": name}, fileID},
		{"list_files", map[string]any{}, path},
		{"list_contents", map[string]any{"path_part_id": ids.Project("acme")}, "failover"},
		{"read_chunk_neighbors", map[string]any{"filePath": "/acme/" + path, "chunkIndex": 0}, word},
	}
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
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := b.mcp.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s: %s", tool, text)
	}
	return text, nil
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
			text, err := b.callText(ctx, r.tool, r.args)
			took := time.Since(since)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failed[r.tool] = fmt.Sprintf("after %s: %.200s", took.Round(time.Millisecond), err)
			case !strings.Contains(text, r.want):
				failed[r.tool] = fmt.Sprintf("after %s: answer without %q", took.Round(time.Millisecond), r.want)
			default:
				answered[r.tool] = took
			}
		}()
	}
	wg.Wait()
	return answered, failed
}
