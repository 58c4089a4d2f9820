package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/strata-kb/strata/shared/stagehealth"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

func TestUnits(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := bytesText(n); got != want {
			t.Errorf("bytesText(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{850 * time.Millisecond: "850ms", 4200 * time.Millisecond: "4.2s", 185 * time.Second: "3m05s"} {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%s) = %q, want %q", d, got, want)
		}
	}
	if got := rateText(3<<20, 2*time.Second); got != "1.5 MiB/s" {
		t.Errorf("rateText: %q", got)
	}
	if got := clip("a  b\n\tc "+strings.Repeat("x", 20), 10); got != "a b c xxx…" {
		t.Errorf("clip: %q", got)
	}
	if got := uploadLine(3, 10, 1, 1536, 4096, time.Second); got != "uploading: 3/10 files, 1.5 KiB/4.0 KiB, 1.5 KiB/s, 1 failed" {
		t.Errorf("uploadLine: %q", got)
	}
	if got := waitLine(counts{2, 0, 3, 4, 1}, 12300*time.Millisecond); got != "waiting 12.3s: 2 pending, 0 extracted, 3 committed, 4 embedded, 1 failed (of 10)" {
		t.Errorf("waitLine: %q", got)
	}
}

func TestObjectKeysAndFiles(t *testing.T) {
	for _, tc := range []struct{ project, prefix, rel, want string }{
		{"acme", "", "guide.md", "acme/guide.md"},
		{"acme", "/docs/", "a/b.md", "acme/docs/a/b.md"},
		{"acme@preview-42", "docs", "b.md", "acme@preview-42/docs/b.md"},
	} {
		if got := objectKey(tc.project, tc.prefix, tc.rel); got != tc.want {
			t.Errorf("objectKey(%q, %q, %q) = %q, want %q", tc.project, tc.prefix, tc.rel, got, tc.want)
		}
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"b.md": "# B", "sub/a.txt": "a", "sub/deeper/c.pdf": "%PDF", "bad\x01name.md": "x"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "b.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	files, err := listFiles(dir, "acme", "in")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range files {
		keys = append(keys, f.key)
		if strings.Contains(f.key, "\x01") && (f.stage != stageFailed || !strings.Contains(f.reason, "not uploaded: invalid object key")) {
			t.Errorf("a key outside the convention is not failed before upload: %+v", f)
		}
	}
	want := "acme/in/b.md acme/in/bad\x01name.md acme/in/link.md acme/in/sub/a.txt acme/in/sub/deeper/c.pdf"
	if strings.Join(keys, " ") != want {
		t.Errorf("keys %q, want %q", keys, want)
	}
}

func TestClassify(t *testing.T) {
	extracted := &objectState{ETag: "e1", State: pipeline.StatePending}
	extracted.Stages.Extracted = time.Now()
	for _, tc := range []struct {
		name   string
		st     *objectState
		want   stage
		reason string
	}{
		{"no record yet", nil, stagePending, ""},
		{"another upload's record", &objectState{ETag: "old", State: pipeline.StateEmbedded}, stagePending, ""},
		{"seen", &objectState{ETag: "e1", State: pipeline.StatePending}, stagePending, ""},
		{"extracted", extracted, stageExtracted, ""},
		{"indexed", &objectState{ETag: `"e1"`, State: pipeline.StateIndexed}, stageCommitted, ""},
		{"embedded", &objectState{ETag: "e1", State: pipeline.StateEmbedded}, stageEmbedded, ""},
		{"failed", &objectState{ETag: "e1", State: pipeline.StateFailed, Error: "pdf: broken"}, stageFailed, "pdf: broken"},
		{"deleted", &objectState{State: pipeline.StateDeleted}, stageFailed, "deleted from the bucket since the upload"},
	} {
		if got, reason := classify("e1", tc.st); got != tc.want || reason != tc.reason {
			t.Errorf("%s: %s %q, want %s %q", tc.name, got, reason, tc.want, tc.reason)
		}
	}
}

func TestIngestSummary(t *testing.T) {
	up := uploadStats{files: 4, bytes: 3 << 20, took: 2 * time.Second}
	files := []*file{
		{key: "acme/a.md", stage: stageEmbedded, state: &objectState{}},
		{key: "acme/empty.md", stage: stageCommitted},
		{key: "acme/bad.pdf", stage: stageFailed, reason: "pdf: not a PDF\nsecond line"},
		{key: "acme/slow.md", stage: stagePending},
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	files[0].state.Stages.Uploaded, files[0].state.Stages.Committed, files[0].state.Stages.Embedded = base, base.Add(120*time.Millisecond), base.Add(900*time.Millisecond)
	w := &waiter{files: files, settled: map[*file]bool{files[0]: true, files[1]: true, files[2]: true}, keywordOnly: 1, timedOut: true, stall: time.Minute}
	var out bytes.Buffer
	printSummary(&out, files, up, w, 4200*time.Millisecond)
	want := `
Uploaded 4 files (3.0 MiB) in 2.0s, 1.5 MiB/s.
After 4.2s: 1 embedded (keyword and vector search), 1 committed without vectors (keyword search; no chunks or no embedding provider), 1 failed.
Upload to keyword-searchable median 120ms, max 120ms; embedded median 900ms, max 900ms.

Failed (1):
  acme/bad.pdf: pdf: not a PDF; second line

Not searchable yet (1, nothing moved for 1m00s):
  acme/slow.md: pending
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
	if err := failures(files, w); err == nil || err.Error() != "2 files of 4 not searchable (see above)" {
		t.Errorf("failures: %v", err)
	}
	if err := failures(files[:2], w); err != nil {
		t.Errorf("failures of settled files: %v", err)
	}
	if err := failures(files[3:], nil); err != nil { // --no-wait: an upload is not a failure
		t.Errorf("failures without a wait: %v", err)
	}
}

func TestDeadLetterOutput(t *testing.T) {
	event := `{"Records":[{"s3":{"object":{"key":"bad+project%2Fx.md"}}}]}`
	letters := []letter{
		{Seq: 3, Subject: "strata.deadletter.ingestor", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: []byte(event), Headers: map[string][]string{
			worker.HeaderStage: {"ingestor"}, worker.HeaderError: {"invalid object key\nproject"}, worker.HeaderDelivered: {"1"}, worker.HeaderOriginalSubject: {"strata.objects.events"}}},
		{Seq: 9, Subject: "strata.deadletter.indexer", Data: []byte(`{"object":{"key":"acme/later.md"}}`), Headers: map[string][]string{
			worker.HeaderStage: {"indexer"}, worker.HeaderError: {"weaviate down"}, worker.HeaderDelivered: {"5"}, worker.HeaderFailedAt: {"2026-01-02T03:05:00Z"},
			worker.HeaderOriginalSubject: {"strata.chunks.acme"}, pipeline.HeaderKind: {pipeline.KindFileVersion}}},
	}
	for i := range letters {
		letters[i].Object = pipeline.ObjectKeyOf(letters[i].Data)
	}
	if letters[0].Object != "bad project/x.md" || letters[1].Object != "acme/later.md" {
		t.Fatalf("object keys: %q %q", letters[0].Object, letters[1].Object)
	}
	var out bytes.Buffer
	printLetters(&out, letters)
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "SEQ  FAILED AT             STAGE     ATTEMPTS  OBJECT            ERROR") ||
		!strings.HasPrefix(lines[1], "3    2026-01-02 03:04:05Z  ingestor  1         bad project/x.md  invalid object key project") ||
		!strings.HasPrefix(lines[2], "9    2026-01-02 03:05:00Z  indexer   5         acme/later.md     weaviate down") ||
		!strings.Contains(out.String(), "2 dead letters; see one with: strata deadletters show SEQ") {
		t.Errorf("list:\n%s", out.String())
	}
	if keep := letterFilter("indexer", "acme"); keep(letters[0]) || !keep(letters[1]) {
		t.Error("filter by stage and project")
	}
	out.Reset()
	printLetter(&out, letters[1])
	for _, want := range []string{"Dead letter 9 on strata.deadletter.indexer", "Object: acme/later.md", "  Strata-Kind: file-version\n",
		"  Strata-Stage: indexer\n", "Body (34 B):\n{\n  \"object\": {\n    \"key\": \"acme/later.md\"\n  }\n}\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	big := letters[1]
	big.Data = bytes.Repeat([]byte("z"), maxShownBody+10)
	printLetter(&out, big)
	if !strings.Contains(out.String(), "… (10 B more; --body prints it all)") {
		t.Errorf("a long body is not cut:\n%s", out.String()[len(out.String())-200:])
	}
}

func TestReleaseAndReindexOutput(t *testing.T) {
	var out bytes.Buffer
	printReleaseCreated(&out, pipeline.Release{ReleaseID: "rid", Project: "acme", Branch: "preview-42", BranchID: "bid", Version: "b1", Sequence: 7})
	if out.String() != "release b1 of acme@preview-42 pins sequence 7\n  release_id rid\n  branch_id  bid\n" {
		t.Errorf("created: %q", out.String())
	}
	out.Reset()
	printReleases(&out, "acme", []pipeline.Release{{Version: "v1.2.0", Sequence: 17, ReleaseID: "r1", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Version: "b1", Branch: "preview-42", Sequence: 18, ReleaseID: "r2"}})
	want := "VERSION  BRANCH      SEQUENCE  CREATED               RELEASE_ID\n" +
		"v1.2.0   main        17        2026-01-02 03:04:05Z  r1\n" +
		"b1       preview-42  18        -                     r2\n"
	if out.String() != want {
		t.Errorf("list:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	printReleases(&out, "acme", nil)
	if out.String() != "project acme has no releases\n" {
		t.Errorf("none: %q", out.String())
	}
	out.Reset()
	printReindex(&out, "acme", pipeline.ReindexRequest{Prefix: "docs/", Branch: "preview-42", Force: true}, "OBJECTS", 12)
	if out.String() != "reindex of acme@preview-42/docs/ requested: every file (forced) (stored in OBJECTS at sequence 12)\n" {
		t.Errorf("reindex: %q", out.String())
	}
	out.Reset()
	printReindex(&out, "acme", pipeline.ReindexRequest{Retag: true}, "OBJECTS", 13)
	if out.String() != "reindex of acme requested: changed and unprocessed files, and the tags of files never compared (stored in OBJECTS at sequence 13)\n" {
		t.Errorf("reindex with retag: %q", out.String())
	}
}

// fakeQueryd serves the MCP tools search and status use, with canned answers.
func fakeQueryd(t *testing.T, key string) string {
	t.Helper()
	s := server.NewMCPServer("fake-queryd", "1")
	var lastArgs map[string]any
	s.AddTool(mcp.NewTool("hybrid_search"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		lastArgs = req.GetArguments()
		if lastArgs["project_reference"] == "nope" {
			return mcp.NewToolResultError("project not found: \"nope\""), nil
		}
		b, _ := json.Marshal(lastArgs)
		return mcp.NewToolResultText(`{"query":"deploy guide","fusion":"relative","alpha":0.25,"model":"uselite","watermarks":{"acme":17},"results":[
			{"project":"acme","document_path":"docs/guide.md","heading_path":["Guide","Deploy"],"content":"Run   the\n deploy script. ` + strings.ReplaceAll(string(b), `"`, `'`) + `","score":0.8312,"index":2,
			 "explain":{"keyword_rank":1,"keyword_score":2.4101,"vector_rank":3,"vector_similarity":0.6123}},
			{"project":"acme","branch":"preview-42","document_path":"b.md","heading_path":[],"content":"vector only","score":0.1,"index":0,
			 "explain":{"keyword_rank":null,"keyword_score":null,"vector_rank":1,"vector_similarity":0.7}}]}`), nil
	})
	s.AddTool(mcp.NewTool("status"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"documentCount":3,"chunkCount":12,"failedCount":1,"unsupportedCount":0,"searchMode":"hybrid",
			"projects":[{"project":"acme","documentCount":3,"chunkCount":12,"failedCount":1,"unsupportedCount":0,"embeddedChunkCount":10,"watermark":17,
			"failures":[{"path":"bad/random.pdf","status":"failed","error":"pdf: syntax error","updatedAt":"x"}]}],
			"configuration":{"embedding":"local","model":"uselite","dimensions":512,"embeddings":"partial","search":"hybrid","maxListFiles":1000}}`), nil
	})
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestSearchAndStatusOverMCP(t *testing.T) {
	url := fakeQueryd(t, "sk-test")
	env := map[string]string{"STRATA_MCP_URL": url, "STRATA_API_KEY": "sk-test"}
	code, out, errOut := runArgs(t, env, "search", "deploy", "guide", "--project", "acme", "--top-k", "2", "--branch", "preview-42", "--alpha", "0.5")
	if code != exitOK || errOut != "" {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`2 results for "deploy guide" (relative fusion, alpha 0.25, model uselite; read at acme@17)`,
		"\n 1. acme/docs/guide.md › Guide › Deploy  (score 0.8312, chunk 2)\n    keyword #1 (bm25 2.410) · vector #3 (cosine 0.612)\n    Run the deploy script.",
		"'project_reference':'acme'", "'top_k':2", "'alpha':0.5", "'branch_id':'", "'query':'deploy guide'",
		"\n 2. acme@preview-42/b.md  (score 0.1000, chunk 0)\n    vector #1 (cosine 0.700)\n    vector only\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("search output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runArgs(t, env, "search", "deploy", "--json")
	var raw map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &raw) != nil || raw["fusion"] != "relative" || !strings.Contains(out, "\n  \"alpha\": 0.25,") {
		t.Errorf("search --json: exit %d:\n%s", code, out)
	}
	code, out, errOut = runArgs(t, env, "search", "x", "--project", "nope")
	if code != exitError || out != "" || errOut != "strata search: hybrid_search: project not found: \"nope\"\n" {
		t.Errorf("a tool error: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runArgs(t, map[string]string{"STRATA_MCP_URL": url, "STRATA_API_KEY": "wrong"}, "status")
	if code != exitError || !strings.HasPrefix(errOut, "strata status: MCP endpoint "+url) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("a wrong key: exit %d, %q", code, errOut)
	}

	code, out, errOut = runArgs(t, env, "status")
	want := `Search: hybrid (embedding local, model uselite, 512-d); embeddings partial
Total: 3 documents, 12 chunks, 1 failed, 0 unsupported

PROJECT  DOCUMENTS  CHUNKS  EMBEDDED  FAILED  UNSUPPORTED  WATERMARK
acme     3          12      10        1       0            17

Files not indexed:
  acme/bad/random.pdf (failed): pdf: syntax error
`
	if code != exitOK || out != want || errOut != "" {
		t.Errorf("status: exit %d, stderr %q:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	code, out, _ = runArgs(t, env, "status", "--json")
	if code != exitOK || !strings.Contains(out, `"embeddedChunkCount": 10`) {
		t.Errorf("status --json: exit %d:\n%s", code, out)
	}
}

func TestNATSUnreachable(t *testing.T) {
	env := map[string]string{"STRATA_NATS_URL": "nats://127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"strata release list", []string{"release", "list", "--project", "acme"}},
		{"strata reindex", []string{"reindex", "--project", "acme"}},
		{"strata deadletters list", []string{"deadletters", "list"}},
		{"strata status", []string{"status", "--pipeline", "--mcp-url", "http://127.0.0.1:1/mcp", "--api-key", "k"}},
	} {
		code, out, errOut := runArgs(t, env, tc.args...)
		if code != exitError || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, tc.name+": ") ||
			(tc.name != "strata status" && !strings.Contains(errOut, "connect to NATS at nats://127.0.0.1:1")) {
			t.Errorf("%s: exit %d, %q, %q", tc.name, code, out, errOut)
		}
	}
}

// TestHeldBackOutput: each replica a full disk or its memory budget holds
// back gets a line per condition; the others are counted.
func TestHeldBackOutput(t *testing.T) {
	var b strings.Builder
	printHeldBack(&b, []stagehealth.Report{
		{Stage: "indexer", Instance: "host-7", Refused: "shard Chunk_acme: store is read-only", RefusedSince: time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)},
		{Stage: "embedder", Instance: "host-8"},
		{Stage: "ingestor", Instance: "host-9", RSSBytes: 700 << 20, MemoryLimitBytes: 512 << 20, OverMemoryBudget: true},
	})
	want := "  indexer host-7: refused by a full disk since 09:30:00: shard Chunk_acme: store is read-only\n" +
		"  ingestor host-9: over its memory budget: 700 MiB resident, -memory-limit 512 MiB\n" +
		"1 worker replica without a full disk or memory over budget\n"
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
