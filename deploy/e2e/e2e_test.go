// Package e2e tests Strata end to end: the real servers and the four services
// as processes, files uploaded with minio-go, answers read through a real MCP
// client over streamable HTTP.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/pipeline"
)

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

type harness struct {
	t     *testing.T
	stack *localstack.Stack
	s3    *minio.Client
	mcp   *client.Client
	js    jetstream.JetStream
	// events counts bucket events the test caused, so settle can wait for
	// MinIO's asynchronous notifications to reach the stream first.
	events uint64
}

func start(t *testing.T) *harness {
	t.Helper()
	return startWith(t, nil)
}

// startWith starts a stack with extra environment per service.
func startWith(t *testing.T, env map[string][]string) *harness {
	t.Helper()
	return startShaped(t, env, nil)
}

// startShaped starts a stack with extra environment per service, shaped
// further by shape (e.g. a NATS cluster), and returns its harness.
func startShaped(t *testing.T, env map[string][]string, shape func(*localstack.Options)) *harness {
	t.Helper()
	if env == nil {
		env = map[string][]string{}
	}
	// Most tests poll through one MCP session, far past a tool budget; TestToolBudget covers it.
	env["queryd"] = append(env["queryd"], "STRATA_TOOL_BUDGET=0")
	st := upShaped(t, t.TempDir(), nil, false, env, shape)
	t.Cleanup(func() {
		st.Stop(15 * time.Second)
		dumpLogsOnFailure(t, st)
	})
	return harnessFor(t, st)
}

// up starts a stack in state (on free ports unless ports is given).
func up(t *testing.T, state string, ports *localstack.Ports, detach bool, querydEnv ...string) *localstack.Stack {
	return upWith(t, state, ports, detach, map[string][]string{"queryd": querydEnv})
}

// upWith starts a stack with extra environment per service.
func upWith(t *testing.T, state string, ports *localstack.Ports, detach bool, env map[string][]string) *localstack.Stack {
	t.Helper()
	return upShaped(t, state, ports, detach, env, nil)
}

func upShaped(t *testing.T, state string, ports *localstack.Ports, detach bool, env map[string][]string, shape func(*localstack.Options)) *localstack.Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test starts the whole stack; skipped with -short")
	}
	if ports == nil {
		p, err := localstack.FreePorts()
		if err != nil {
			t.Fatal(err)
		}
		ports = &p
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	opts := localstack.Options{Root: root, StateDir: state, Ports: *ports, Detach: detach, Progress: logWriter{t}, ServiceEnv: env}
	if shape != nil {
		shape(&opts)
	}
	st, err := localstack.Up(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func dumpLogsOnFailure(t *testing.T, st *localstack.Stack) {
	if !t.Failed() { // the services' logs usually say why
		return
	}
	// The whole logs outlive the test's (and CI's) temporary directories:
	// a failure that is hard to reproduce can still be read afterwards.
	if dir, err := keepLogs(filepath.Join(os.TempDir(), "strata-e2e-failures"), t.Name(), st); err == nil {
		t.Logf("whole service logs kept in %s", dir)
	} else {
		t.Logf("keep service logs: %v", err)
	}
	for name, p := range st.Services { // replicas included
		b, _ := os.ReadFile(p.LogFile)
		var errs []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) {
				errs = append(errs, line)
			}
		}
		t.Logf("--- %s log (last 3000 bytes):\n%s", name, b[max(0, len(b)-3000):])
		if len(errs) > 0 {
			t.Logf("--- %s errors (last 10):\n%s", name, strings.Join(errs[max(0, len(errs)-10):], "\n"))
		}
	}
}

// keepLogs copies every service's log into a new directory under root
// named for the test and the time, and returns it.
func keepLogs(root, test string, st *localstack.Stack) (string, error) {
	dir := filepath.Join(root, strings.ReplaceAll(test, "/", "_")+"-"+time.Now().UTC().Format("20060102T150405.000"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, p := range st.Services {
		b, err := os.ReadFile(p.LogFile)
		if err != nil {
			return dir, err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".log"), b, 0o644); err != nil {
			return dir, err
		}
	}
	return dir, nil
}

func harnessFor(t *testing.T, st *localstack.Stack) *harness {
	t.Helper()
	s3, err := bucket.Client(st.Env.S3Endpoint, st.Env.S3AccessKey, st.Env.S3SecretKey, false)
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := pipeline.Connect(st.Env.NATSURL, "e2e", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return &harness{t: t, stack: st, s3: s3, mcp: connect(t, st.Env.MCPURL, st.Env.APIKey), js: js}
}

func connect(t *testing.T, url, key string) *client.Client {
	t.Helper()
	c, err := mcpclient.Connect(context.Background(), url, key, "strata-e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (h *harness) put(key, content string) {
	h.t.Helper()
	_, err := h.s3.PutObject(context.Background(), localstack.Bucket, key, strings.NewReader(content), int64(len(content)),
		minio.PutObjectOptions{ContentType: "text/markdown"})
	if err != nil {
		h.t.Fatalf("put %s: %v", key, err)
	}
	h.events++
}

func (h *harness) remove(key string) {
	h.t.Helper()
	if err := h.s3.RemoveObject(context.Background(), localstack.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		h.t.Fatalf("remove %s: %v", key, err)
	}
	h.events++
}

// call invokes a tool and returns its structured result, or the error text.
func (h *harness) call(tool string, args map[string]any) (map[string]any, string) {
	h.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := h.mcp.CallTool(context.Background(), req)
	if err != nil {
		h.t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		return nil, mcpclient.Text(res)
	}
	var out map[string]any
	if err := json.Unmarshal(mcpclient.JSON(res), &out); err != nil {
		h.t.Fatalf("%s: result is not JSON: %v: %s", tool, err, mcpclient.Text(res))
	}
	return out, ""
}

// settle waits until every stage has processed everything published so far.
func (h *harness) settle() {
	h.t.Helper()
	h.settleWithin(90 * time.Second)
}

// settleWithin is settle with a deadline of its own, for a test whose
// files take long to read or embed (a hostile corpus).
func (h *harness) settleWithin(d time.Duration) {
	h.t.Helper()
	h.settleOn(d, true)
}

// consumersIdle waits until the ingestor's, the indexer's and the
// embedder's consumers hold nothing, without counting the bucket's events
// into OBJECTS (MinIO's durable copies can lag a burst by minutes; the
// live copies were read already).
func (h *harness) consumersIdle(d time.Duration) {
	h.t.Helper()
	h.settleOn(d, false)
}

func (h *harness) settleOn(d time.Duration, countEvents bool) {
	h.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(d)
	for {
		idle := true
		var state []string
		if countEvents {
			msgs := uint64(0)
			if st, err := h.js.Stream(ctx, pipeline.ObjectsStream); err == nil {
				if info, err := st.Info(ctx); err == nil {
					msgs = info.State.Msgs
				}
			}
			idle = msgs >= h.events
			state = append(state, fmt.Sprintf("%s holds %d of the %d events uploaded", pipeline.ObjectsStream, msgs, h.events))
		}
		for _, c := range []struct{ stream, consumer string }{
			{pipeline.ObjectsStream, pipeline.IngestorConsumer},
			{pipeline.ChunksStream, pipeline.IndexerChunksConsumer},
			{pipeline.ChunksStream, pipeline.EmbedderConsumer},
		} {
			info, err := h.js.Consumer(ctx, c.stream, c.consumer)
			if err != nil {
				idle = false
				state = append(state, fmt.Sprintf("%s: %v", c.consumer, err))
				continue
			}
			ci, err := info.Info(ctx)
			if err != nil || ci.NumPending > 0 || ci.NumAckPending > 0 {
				idle = false
			}
			if ci != nil {
				state = append(state, fmt.Sprintf("%s: %d pending, %d unacknowledged", c.consumer, ci.NumPending, ci.NumAckPending))
			}
		}
		if idle {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("pipeline did not settle within %s; last seen: %s", d, strings.Join(state, "; "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitFor polls a tool until ok accepts its answer.
func (h *harness) waitFor(what string, tool string, args map[string]any, ok func(out map[string]any, errText string) bool) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, errText := h.call(tool, args)
		if ok(out, errText) {
			return out
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; last answer: %v %s", what, out, errText)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func chunksOf(out map[string]any) []map[string]any {
	var cs []map[string]any
	if out == nil {
		return nil
	}
	for _, d := range out["data"].([]any) {
		cs = append(cs, d.(map[string]any))
	}
	return cs
}

func results(out map[string]any) []map[string]any {
	var rs []map[string]any
	list, _ := out["results"].([]any)
	for _, d := range list {
		rs = append(rs, d.(map[string]any))
	}
	return rs
}

const guideV1 = `# Guide

Strata turns files into knowledge. The zebracorn token marks version one.

## Install

Run the installer, then check the flux capacitor setting FLUX_LEVEL=88.

## Use ünïcode

Ask questions through MCP — agents read chunks with offsets.
`

const guideV2 = `# Guide

Version two replaces the old text. The quokkaline token marks version two.
`

func TestUploadReadOverwriteDeleteReplay(t *testing.T) {
	h := start(t)
	h.put("acme/docs/guide.md", guideV1)
	list := map[string]any{"project_reference": "acme", "file_path": "docs/guide.md", "include_embeddings": true}
	out := h.waitFor("guide v1 indexed", "list_file_chunks", list, func(out map[string]any, _ string) bool { return len(chunksOf(out)) > 0 })

	// Offsets, token counts and checksums describe the uploaded text exactly.
	runes := []rune(guideV1)
	cs := chunksOf(out)
	v1 := cs[0]["file_version_id"].(string)
	var joined strings.Builder
	for i, c := range cs {
		start, end := int(c["start_offset"].(float64)), int(c["end_offset"].(float64))
		content := c["content"].(string)
		if string(runes[start:end]) != content {
			t.Fatalf("chunk %d: content is not text[%d:%d]: %q", i, start, end, content)
		}
		sum := sha256.Sum256([]byte(content))
		if c["source_checksum"] != hex.EncodeToString(sum[:]) || c["token_count"].(float64) < 1 || int(c["index"].(float64)) != i {
			t.Fatalf("chunk %d: checksum/token_count/index wrong: %v", i, c)
		}
		if c["file_version_id"] != v1 || c["file_path"] != "docs/guide.md" {
			t.Fatalf("chunk %d from another version or path: %v", i, c)
		}
		emb := c["embedding"].(map[string]any)
		if (emb["status"] != "missing" && emb["status"] != "ready") || emb["model"] != "use-lite-512" {
			t.Fatalf("embedding status is missing until the vector is written, then ready: %v", emb)
		}
		joined.WriteString(content)
	}
	if len(cs) != 3 || !strings.Contains(joined.String(), "FLUX_LEVEL=88") {
		t.Fatalf("want the 3 heading sections as chunks, got %d: %q", len(cs), joined.String())
	}
	pi := out["page_info"].(map[string]any)
	if pi["next"] != nil || pi["prev"] != nil || pi["self"] == nil {
		t.Fatalf("page_info of a single page: %v", pi)
	}

	// Paging with a cursor, and a tampered cursor.
	page1, _ := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "docs/guide.md", "limit": 2})
	next := page1["page_info"].(map[string]any)["next"].(string)
	page2, _ := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "docs/guide.md", "cursor": next})
	if got := chunksOf(page2); len(got) != 1 || got[0]["index"].(float64) != 2 || got[0]["embedding"] != nil {
		t.Fatalf("page 2: %v", got)
	}
	if _, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "docs/guide.md", "cursor": next[:len(next)-2] + "AA"}); !strings.Contains(errText, "invalid cursor") {
		t.Fatalf("tampered cursor: %q", errText)
	}

	// get_file_chunk returns the same chunk.
	got, errText := h.call("get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": cs[2]["id"]})
	if errText != "" || got["chunk"].(map[string]any)["content"] != cs[2]["content"] {
		t.Fatalf("get_file_chunk: %v %s", got, errText)
	}

	// Keyword search finds the exact identifier.
	sr, errText := h.call("search_keyword", map[string]any{"query": "FLUX_LEVEL"})
	if errText != "" || len(results(sr)) == 0 || !strings.Contains(results(sr)[0]["content"].(string), "FLUX_LEVEL=88") {
		t.Fatalf("search_keyword: %v %s", sr, errText)
	}
	if loc := results(sr)[0]["location"].(string); loc != "acme > docs > guide.md > Guide > Install" {
		t.Fatalf("location %q", loc)
	}

	// Overwrite: only the new version is visible afterwards.
	h.put("acme/docs/guide.md", guideV2)
	out = h.waitFor("guide v2 indexed", "list_file_chunks", list, func(out map[string]any, _ string) bool {
		cs := chunksOf(out)
		return len(cs) > 0 && cs[0]["file_version_id"] != v1
	})
	h.settle()
	out, _ = h.call("list_file_chunks", list)
	for _, c := range chunksOf(out) {
		if c["file_version_id"] == v1 || strings.Contains(c["content"].(string), "zebracorn") {
			t.Fatalf("old version still visible after overwrite: %v", c)
		}
	}
	if sr, _ := h.call("search_keyword", map[string]any{"query": "zebracorn"}); len(results(sr)) != 0 {
		t.Fatalf("search still finds the old version: %v", sr)
	}
	if sr, _ := h.call("search_keyword", map[string]any{"query": "quokkaline"}); len(results(sr)) != 1 {
		t.Fatalf("search does not find the new version: %v", sr)
	}

	// Delete removes the file's chunks.
	h.remove("acme/docs/guide.md")
	h.waitFor("delete applied", "list_file_chunks", list, func(_ map[string]any, errText string) bool {
		return strings.Contains(errText, "file not found")
	})
	if sr, _ := h.call("search_keyword", map[string]any{"query": "quokkaline"}); len(results(sr)) != 0 {
		t.Fatalf("search finds a deleted file: %v", sr)
	}

	// Replay every bucket event (as an operator replaying the stream would): the
	// old uploads must not come back, and nothing changes.
	h.replayObjects()
	h.settle()
	if _, errText := h.call("list_file_chunks", list); !strings.Contains(errText, "file not found") {
		t.Fatalf("replay resurrected a deleted file: %s", errText)
	}
	for _, q := range []string{"zebracorn", "quokkaline"} {
		if sr, _ := h.call("search_keyword", map[string]any{"query": q}); len(results(sr)) != 0 {
			t.Fatalf("replay resurrected %q: %v", q, sr)
		}
	}
}

// replayObjects republishes every stored bucket event, in order, without
// dedupe ids, as a replay through a new consumer would deliver them.
func (h *harness) replayObjects() {
	h.t.Helper()
	ctx := context.Background()
	cons, err := h.js.OrderedConsumer(ctx, pipeline.ObjectsStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := h.js.Stream(ctx, pipeline.ObjectsStream)
	if err != nil {
		h.t.Fatal(err)
	}
	si, _ := info.Info(ctx)
	n := int(si.State.Msgs)
	var bodies [][]byte
	for range n {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			h.t.Fatal(err)
		}
		bodies = append(bodies, m.Data())
	}
	for _, b := range bodies {
		if _, err := h.js.Publish(ctx, pipeline.ObjectEventsSubject, b); err != nil {
			h.t.Fatal(err)
		}
		h.events++
	}
	h.t.Logf("replayed %d bucket events", n)
}

func TestAuthAndIsolation(t *testing.T) {
	h := start(t)
	h.put("acme/a.md", "# A\n\nacme secret alphaword\n")
	h.put("beta/b.md", "# B\n\nbeta secret alphaword\n")
	h.settle()

	// No key, or a wrong key: HTTP 401 before any MCP handling.
	for _, key := range []string{"", "sk-wrong-0000000000000000"} {
		req, _ := http.NewRequest(http.MethodPost, h.stack.Env.MCPURL, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("key %q: status %d, want 401", key, resp.StatusCode)
		}
	}

	// Every tool is served read-only with the reference's argument names.
	tools, err := h.mcp.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]mcp.Tool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = tl
		if tl.Annotations.ReadOnlyHint == nil || !*tl.Annotations.ReadOnlyHint {
			t.Errorf("%s is not annotated read-only", tl.Name)
		}
	}
	for _, want := range []string{"list_file_chunks", "get_file_chunk", "search_keyword"} {
		if _, ok := names[want]; !ok {
			t.Errorf("tool %s not served", want)
		}
	}

	// A bad argument gets a clear error.
	if _, errText := h.call("get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": "../../etc"}); errText == "" {
		t.Fatal("a non-UUID chunk_id must be refused")
	}
	if _, errText := h.call("search_keyword", map[string]any{"query": "x", "top_k": 500}); errText == "" {
		t.Fatal("top_k over 20 must be refused")
	}
	// A project that does not exist answers like any unknown project.
	_, missing := h.call("list_file_chunks", map[string]any{"project_reference": "nosuch", "file_path": "a.md"})
	if !strings.Contains(missing, `project not found: "nosuch"`) {
		t.Fatalf("missing project: %q", missing)
	}
	sr, _ := h.call("search_keyword", map[string]any{"query": "alphaword"})
	if len(results(sr)) != 2 {
		t.Fatalf("the local key reads every project: %v", sr)
	}
}

func TestBadInputIsRecordedAndDoesNotBlock(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	// A binary file named as Markdown, a key outside the key convention, and a
	// good file after both: the good one must still be indexed.
	bin := string([]byte{0x00, 0xff, 0xfe, 0x00, 0x01})
	h.put("acme/broken.md", bin)
	h.put("not a project/x.md", "text")
	h.put("acme/good.md", "# Good\n\nstill indexed after bad input\n")
	h.settle()
	if out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "good.md"}); len(chunksOf(out)) != 1 {
		t.Fatalf("good file after bad input: %v %s", out, errText)
	}
	_, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "broken.md"})
	if !strings.Contains(errText, "was not indexed (failed)") || !strings.Contains(errText, "binary or invalid UTF-8") {
		t.Fatalf("broken file must report its recorded error, got %q", errText)
	}
	// The status tool lists the failure with its reason.
	st, _ := h.call("status", map[string]any{})
	if b, _ := json.Marshal(st); !strings.Contains(string(b), `"path":"broken.md","status":"failed"`) {
		t.Fatalf("status must list broken.md's failure: %s", b)
	}
	// The hostile key is dead-lettered with its reason and the original event.
	stream, err := h.js.Stream(ctx, pipeline.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, pipeline.DeadLetterSubjectFor("ingestor"))
	if err != nil {
		t.Fatalf("no dead letter for the hostile key: %v", err)
	}
	if reason := msg.Header.Get("Strata-Error"); !strings.Contains(reason, "invalid object key") || !strings.Contains(reason, "not a project") {
		t.Fatalf("dead letter reason %q", reason)
	}
	if !bytes.Contains(msg.Data, []byte("s3:ObjectCreated:Put")) || msg.Header.Get("Strata-Original-Subject") != pipeline.ObjectEventsSubject {
		t.Fatalf("dead letter must keep the original event: %s %v", msg.Data, msg.Header)
	}
}

// TestDownKeepsDataAndUpResumes runs the stack detached as `task up` does:
// down stops every process, and up again serves the same data with the same key.
func TestDownKeepsDataAndUpResumes(t *testing.T) {
	state := t.TempDir()
	ports, err := localstack.FreePorts()
	if err != nil {
		t.Fatal(err)
	}
	st := up(t, state, &ports, true, "STRATA_TOOL_BUDGET=0")
	t.Cleanup(func() { _ = localstack.Down(state, 15*time.Second, io.Discard) })
	h := harnessFor(t, st)
	h.put("acme/keep.md", "# Keep\n\npersistent marmalade\n")
	list := map[string]any{"project_reference": "acme", "file_path": "keep.md"}
	before := h.waitFor("indexed", "list_file_chunks", list, func(out map[string]any, _ string) bool { return len(chunksOf(out)) == 1 })
	h.mcp.Close()
	if n := len(localstack.Running(state)); n != 7 {
		t.Fatalf("%d processes recorded as running, want 7", n)
	}
	if err := localstack.Down(state, 15*time.Second, logWriter{t}); err != nil {
		t.Fatal(err)
	}
	if running := localstack.Running(state); len(running) != 0 {
		t.Fatalf("still running after down: %v", running)
	}

	st2 := up(t, state, &ports, true, "STRATA_TOOL_BUDGET=0")
	if st2.Env.APIKey != st.Env.APIKey {
		t.Fatal("the API key must survive down/up")
	}
	env, err := os.ReadFile(filepath.Join(state, "local.env"))
	if err != nil || !strings.Contains(string(env), "STRATA_MCP_URL="+st2.Env.MCPURL) || !strings.Contains(string(env), "NATS_URL=") {
		t.Fatalf("local.env: %s %v", env, err)
	}
	h2 := harnessFor(t, st2)
	after, errText := h2.call("list_file_chunks", list)
	if errText != "" || chunksOf(after)[0]["id"] != chunksOf(before)[0]["id"] {
		t.Fatalf("data not kept across down/up: %v %s", after, errText)
	}
}
