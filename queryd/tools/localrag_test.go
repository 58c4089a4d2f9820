package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/strata-kb/strata/shared/stagehealth"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

func serverWith(t *testing.T, r Reader) *server.MCPServer {
	t.Helper()
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	New(r, signer, slog.New(slog.DiscardHandler)).Register(s)
	return s
}

func doc(project, branch, path, status, errText string, chunks int) store.Document {
	id := ids.File(project, branch, path)
	return store.Document{
		FileID: id, FilePath: path, Branch: branch, FileVersionID: ids.FileVersion(id, "v", "c"), Status: status,
		Error: errText, ChunkCount: chunks,
		DocumentInfo: store.DocumentInfo{Format: "markdown", UpdatedAt: "2026-01-02T03:04:05Z", IngestedAt: "2026-01-02T03:04:00Z"},
	}
}

// mixedIndex has indexed, failed, unsupported and deleted files in acme (on
// main and a branch) and one file in beta.
func mixedIndex() *fakeReader {
	f := &fakeReader{docs: map[string][]store.Document{}, chunks: map[string][]store.Chunk{}}
	deleted := doc("acme", "", "docs/gone.md", "deleted", "", 0)
	deleted.Deleted = true
	f.docs["acme"] = []store.Document{
		doc("acme", "", "docs/guide.md", pipeline.StatusIndexed, "", 3),
		doc("acme", "", "docs/secret.pdf", pipeline.StatusFailed, "encrypted PDF: a password is required", 0),
		doc("acme", "", "media/clip.mp4", pipeline.StatusUnsupported, "unsupported type video/mp4", 0),
		doc("acme", "", "docsv2/x.md", pipeline.StatusIndexed, "", 1),
		doc("acme", "preview-1", "docs/guide.md", pipeline.StatusIndexed, "", 2),
		deleted,
	}
	f.docs["beta"] = []store.Document{doc("beta", "", "b.md", pipeline.StatusIndexed, "", 1)}
	for _, p := range []string{"acme", "beta"} {
		for _, d := range f.docs[p] {
			for i := range d.ChunkCount {
				f.chunks[p] = append(f.chunks[p], store.Chunk{ID: ids.Chunk(d.FileVersionID, i), FileID: d.FileID,
					FileVersionID: d.FileVersionID, FilePath: d.FilePath, Branch: d.Branch, Index: i})
			}
		}
	}
	return f
}

// TestLocalRAGSchemasMatchOriginal checks list_files and status against
// shinpr/mcp-local-rag v0.17.4 src/server/tool-definitions.ts.
func TestLocalRAGSchemasMatchOriginal(t *testing.T) {
	out := rpc(t, serverWith(t, mixedIndex()), "*", "tools/list", map[string]any{})
	served := map[string]map[string]any{}
	for _, tl := range out["result"].(map[string]any)["tools"].([]any) {
		m := tl.(map[string]any)
		served[m["name"].(string)] = m
	}
	want := map[string]string{
		"list_files": `{"type":"object","properties":{"scope":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}],` +
			`"description":"Optional absolute path prefix(es) — one string or a list (unioned) — restricting the listing to files reachable at a path equal to or under a prefix within the base directories. \"/docs/api\" matches \"/docs/api/x.md\" but not \"/docs/apiv2\". Must be absolute (server OS style); a relative prefix matches nothing. A prefix outside every base directory yields an empty files list, so compare it against the baseDirs in the response before concluding no files exist. Scope filters files by their scan path; ingest_data sources, which have no base-directory path, are always listed."}}}`,
		"status": `{"type":"object","properties":{}}`,
	}
	descriptions := map[string]string{
		"list_files": "List supported files (PDF, DOCX, TXT, MD) under the configured base directories and whether each is ingested. Returns { baseDirs, files, sources }; sources lists ingested items reported apart from the file scan, chiefly ingest_data content (web pages, clipboard, etc.).",
		"status":     "Get index status: { documentCount, chunkCount, memoryUsage (MB), uptime (s), ftsIndexEnabled, searchMode }.",
	}
	for name, js := range want {
		tool, ok := served[name]
		if !ok {
			t.Fatalf("%s is not served", name)
		}
		var w map[string]any
		if err := json.Unmarshal([]byte(js), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tool["inputSchema"], any(w)) {
			t.Errorf("%s input schema\n got %v\nwant %v", name, tool["inputSchema"], w)
		}
		if tool["description"] != descriptions[name] {
			t.Errorf("%s description %q", name, tool["description"])
		}
		ann := tool["annotations"].(map[string]any)
		if ann["readOnlyHint"] != true || ann["destructiveHint"] != false || ann["idempotentHint"] != true {
			t.Errorf("%s annotations %v", name, ann)
		}
	}
	// No required arguments; list_files' only property is scope, status has none.
	ls := served["list_files"]["inputSchema"].(map[string]any)
	if ls["required"] != nil || !reflect.DeepEqual(keys(ls["properties"].(map[string]any)), []string{"scope"}) {
		t.Errorf("list_files schema %v", ls)
	}
	st := served["status"]["inputSchema"].(map[string]any)
	if st["required"] != nil || len(st["properties"].(map[string]any)) != 0 {
		t.Errorf("status schema %v", st)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func files(t *testing.T, out map[string]any) map[string]map[string]any {
	t.Helper()
	byPath := map[string]map[string]any{}
	for _, f := range out["files"].([]any) {
		m := f.(map[string]any)
		byPath[m["filePath"].(string)] = m
	}
	return byPath
}

func TestListFiles(t *testing.T) {
	s := serverWith(t, mixedIndex())
	out, errText := callTool(t, s, "acme", "list_files", map[string]any{})
	if errText != "" {
		t.Fatal(errText)
	}
	got := files(t, out)
	wantPaths := []string{"/acme/docs/guide.md", "/acme/docs/secret.pdf", "/acme/docsv2/x.md", "/acme/media/clip.mp4", "/acme@preview-1/docs/guide.md"}
	var paths []string
	for _, f := range out["files"].([]any) {
		paths = append(paths, f.(map[string]any)["filePath"].(string))
	}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Fatalf("files %v, want %v (deleted hidden, beta not readable)", paths, wantPaths)
	}
	if !reflect.DeepEqual(out["baseDirs"], []any{"/acme", "/acme@preview-1"}) || out["baseDir"] != "/acme" ||
		!reflect.DeepEqual(out["sources"], []any{}) || out["truncated"] != false {
		t.Errorf("result %v", out)
	}
	guide := got["/acme/docs/guide.md"]
	if guide["ingested"] != true || guide["chunkCount"] != 3.0 || guide["timestamp"] != "2026-01-02T03:04:00Z" ||
		guide["baseDir"] != "/acme" || guide["status"] != "indexed" || guide["project"] != "acme" || guide["path"] != "docs/guide.md" {
		t.Errorf("indexed entry %v", guide)
	}
	failed := got["/acme/docs/secret.pdf"]
	if failed["ingested"] != false || failed["status"] != "failed" || failed["error"] != "encrypted PDF: a password is required" ||
		failed["chunkCount"] != nil || failed["timestamp"] != nil {
		t.Errorf("failed entry %v", failed)
	}
	unsupported := got["/acme/media/clip.mp4"]
	if unsupported["ingested"] != false || unsupported["status"] != "unsupported" || unsupported["error"] != "unsupported type video/mp4" {
		t.Errorf("unsupported entry %v", unsupported)
	}
	if b := got["/acme@preview-1/docs/guide.md"]; b["branch"] != "preview-1" || b["baseDir"] != "/acme@preview-1" || b["chunkCount"] != 2.0 {
		t.Errorf("branch entry %v", b)
	}

	// A key for every project sees beta too.
	all, _ := callTool(t, s, "*", "list_files", nil)
	if _, ok := files(t, all)["/beta/b.md"]; !ok || !reflect.DeepEqual(all["baseDirs"], []any{"/acme", "/acme@preview-1", "/beta"}) {
		t.Errorf("all projects: %v", all)
	}
	// A key that cannot read acme learns nothing about it, even when scoped to it.
	other, _ := callTool(t, s, "beta", "list_files", map[string]any{"scope": "/acme"})
	if len(other["files"].([]any)) != 0 || !reflect.DeepEqual(other["baseDirs"], []any{"/beta"}) {
		t.Errorf("beta key scoped to acme: %v", other)
	}
	if strings.Contains(fmt.Sprint(other), "secret") {
		t.Errorf("leaked: %v", other)
	}
}

func TestListFilesScope(t *testing.T) {
	s := serverWith(t, mixedIndex())
	for _, c := range []struct {
		scope any
		want  []string
	}{
		{"/acme/docs", []string{"/acme/docs/guide.md", "/acme/docs/secret.pdf"}}, // not docsv2, not the branch
		{"/acme/docs/", []string{"/acme/docs/guide.md", "/acme/docs/secret.pdf"}},
		{"  /acme/docs/guide.md ", []string{"/acme/docs/guide.md"}},
		{"/acme@preview-1", []string{"/acme@preview-1/docs/guide.md"}},
		{[]string{"/beta", "/acme/media"}, []string{"/acme/media/clip.mp4", "/beta/b.md"}},
		{"/acme/doc", nil},
		{"/", []string{"/acme/docs/guide.md", "/acme/docs/secret.pdf", "/acme/docsv2/x.md", "/acme/media/clip.mp4", "/acme@preview-1/docs/guide.md", "/beta/b.md"}},
	} {
		out, errText := callTool(t, s, "*", "list_files", map[string]any{"scope": c.scope})
		if errText != "" {
			t.Fatalf("scope %v: %s", c.scope, errText)
		}
		var paths []string
		for _, f := range out["files"].([]any) {
			paths = append(paths, f.(map[string]any)["filePath"].(string))
		}
		if !reflect.DeepEqual(paths, c.want) {
			t.Errorf("scope %v: %v, want %v", c.scope, paths, c.want)
		}
		if out["warnings"] != nil {
			t.Errorf("scope %v: warnings %v", c.scope, out["warnings"])
		}
	}
	// A relative prefix matches nothing and says so.
	out, _ := callTool(t, s, "*", "list_files", map[string]any{"scope": "acme/docs"})
	if len(out["files"].([]any)) != 0 || !strings.Contains(fmt.Sprint(out["warnings"]), "not absolute") {
		t.Errorf("relative scope: %v", out)
	}
	for _, bad := range []any{"", "   ", []string{}, []string{"/acme", ""}, 5, []any{"/acme", 7}, nil} {
		if out, errText := callTool(t, s, "*", "list_files", map[string]any{"scope": bad}); errText == "" {
			t.Errorf("scope %#v accepted: %v", bad, out)
		}
	}
}

func TestListFilesTruncated(t *testing.T) {
	f := &fakeReader{docs: map[string][]store.Document{}, chunks: map[string][]store.Chunk{}}
	for i := range MaxListFiles + 5 {
		f.docs["big"] = append(f.docs["big"], doc("big", "", fmt.Sprintf("f%04d.md", i), pipeline.StatusIndexed, "", 1))
	}
	f.docs["small"] = []store.Document{doc("small", "", "s.md", pipeline.StatusFailed, "empty file", 0)}
	s := serverWith(t, f)
	out, errText := callTool(t, s, "*", "list_files", map[string]any{})
	if errText != "" {
		t.Fatal(errText)
	}
	if n := len(out["files"].([]any)); n != MaxListFiles || out["truncated"] != true {
		t.Fatalf("%d files, truncated %v", n, out["truncated"])
	}
	if !reflect.DeepEqual(out["baseDirs"], []any{"/big", "/small"}) {
		t.Errorf("baseDirs %v", out["baseDirs"])
	}
	if w := fmt.Sprint(out["warnings"]); !strings.Contains(w, "scope set to a folder") || !strings.Contains(w, "\"/big\"") {
		t.Errorf("a cut listing must say how to get the rest: %v", out["warnings"])
	}
	// Scoped to what fits: complete.
	out, _ = callTool(t, s, "*", "list_files", map[string]any{"scope": "/small"})
	if n := len(out["files"].([]any)); n != 1 || out["truncated"] != false {
		t.Fatalf("scoped: %d files, truncated %v", n, out["truncated"])
	}
}

func TestStatus(t *testing.T) {
	f := mixedIndex()
	f.chunks["beta"][0].EmbeddingStatus = pipeline.EmbeddingReady
	s := serverWith(t, f)
	out, errText := callTool(t, s, "acme", "status", map[string]any{})
	if errText != "" {
		t.Fatal(errText)
	}
	// acme: 3 indexed (guide on main and branch, docsv2/x), 1 failed, 1 unsupported, 3+1+2 chunks; deleted not counted.
	wantAcme := map[string]any{"project": "acme", "documentCount": 3.0, "chunkCount": 6.0, "failedCount": 1.0,
		"unsupportedCount": 1.0, "embeddedChunkCount": 0.0, "watermark": 1.0, "failures": []any{
			map[string]any{"path": "docs/secret.pdf", "status": "failed", "error": "encrypted PDF: a password is required", "updatedAt": "2026-01-02T03:04:05Z"},
			map[string]any{"path": "media/clip.mp4", "status": "unsupported", "error": "unsupported type video/mp4", "updatedAt": "2026-01-02T03:04:05Z"},
		}}
	if !reflect.DeepEqual(out["projects"], []any{wantAcme}) {
		t.Errorf("projects %v", out["projects"])
	}
	if out["documentCount"] != 3.0 || out["chunkCount"] != 6.0 || out["failedCount"] != 1.0 || out["unsupportedCount"] != 1.0 {
		t.Errorf("totals %v", out)
	}
	if out["ftsIndexEnabled"] != true || out["searchMode"] != "keyword" || out["uptime"].(float64) < 0 || out["memoryUsage"].(float64) <= 0 {
		t.Errorf("runtime fields %v", out)
	}
	wantConfig := map[string]any{"embedding": "none", "embeddings": "missing", "search": "keyword", "maxListFiles": float64(MaxListFiles)}
	if !reflect.DeepEqual(out["configuration"], wantConfig) {
		t.Errorf("configuration %v", out["configuration"])
	}

	all, _ := callTool(t, s, "*", "status", nil)
	if ps := all["projects"].([]any); len(ps) != 2 || ps[1].(map[string]any)["project"] != "beta" {
		t.Errorf("all projects %v", ps)
	}
	if all["documentCount"] != 4.0 || all["chunkCount"] != 7.0 || all["configuration"].(map[string]any)["embeddings"] != "missing" {
		t.Errorf("all totals %v", all)
	}
	none, _ := callTool(t, s, "gamma", "status", nil)
	if none["documentCount"] != 0.0 || len(none["projects"].([]any)) != 0 {
		t.Errorf("no readable project: %v", none)
	}
}

// fakeStages answers the replicas' reports.
type fakeStages []stagehealth.Report

func (f fakeStages) Stages(context.Context) ([]stagehealth.Report, error) { return f, nil }

// TestStatusNamesStagesHeldBack: status tells admins which worker replica a
// full disk or its memory budget holds back (not one that is fine), and
// tells other keys nothing of the pipeline.
func TestStatusNamesStagesHeldBack(t *testing.T) {
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 11, 28, 12, 0, 1, 0, time.UTC)
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	New(mixedIndex(), signer, slog.New(slog.DiscardHandler)).SetStageHealth(fakeStages{
		{Stage: "indexer", Instance: "a-1", Refused: "batch: shard Chunk_acme: store is read-only", RefusedSince: since},
		{Stage: "ingestor", Instance: "b-2", RSSBytes: 600 << 20, MemoryLimitBytes: 512 << 20, OverMemoryBudget: true},
		{Stage: "embedder", Instance: "c-3", RSSBytes: 100 << 20},
	}).Register(s)
	admin, errText := callTool(t, s, "*|*", "status", nil)
	if errText != "" {
		t.Fatal(errText)
	}
	want := []any{
		map[string]any{"stage": "indexer", "instance": "a-1", "conditions": []any{"refused by a full disk since 12:00:01: batch: shard Chunk_acme: store is read-only"}},
		map[string]any{"stage": "ingestor", "instance": "b-2", "conditions": []any{"over its memory budget: 600 MiB resident, -memory-limit 512 MiB"}},
	}
	if !reflect.DeepEqual(admin["stages"], want) {
		t.Fatalf("stages %v", admin["stages"])
	}
	if reader, _ := callTool(t, s, "*", "status", nil); reader["stages"] != nil {
		t.Fatalf("a key without every group sees the pipeline: %v", reader["stages"])
	}
}
