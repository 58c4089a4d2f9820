package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// fakeReader is a small in-memory index.
type fakeReader struct {
	docs   map[string][]store.Document // project -> documents
	chunks map[string][]store.Chunk    // project -> chunks
}

// MayRead: the fake holds no groups; a file may be read when it is known.
func (f *fakeReader) MayRead(_ context.Context, project, fileID string) (bool, error) {
	for _, d := range f.docs[project] {
		if d.FileID == fileID {
			return true, nil
		}
	}
	return false, nil
}

func (f *fakeReader) Projects(context.Context) ([]string, error) {
	var ps []string
	for p := range f.docs {
		ps = append(ps, p)
	}
	return ps, nil
}
func (f *fakeReader) HasProject(_ context.Context, p string) (bool, error) {
	_, ok := f.docs[p]
	return ok, nil
}
func (f *fakeReader) FindDocument(_ context.Context, p, branch, path string) (*store.Document, error) {
	for _, d := range f.docs[p] {
		if d.FilePath == path && d.Branch == branch {
			return &d, nil
		}
	}
	return nil, nil
}
func (f *fakeReader) Documents(_ context.Context, p string, _ int) ([]store.Document, error) {
	return f.docs[p], nil
}
func (f *fakeReader) ListChunks(_ context.Context, p, fv string, offset, limit int) ([]store.Chunk, error) {
	var out []store.Chunk
	for _, c := range f.chunks[p] {
		if c.FileVersionID == fv {
			out = append(out, c)
		}
	}
	return out[min(offset, len(out)):min(offset+limit, len(out))], nil
}
func (f *fakeReader) Watermark(context.Context, string) (int64, error) { return 1, nil }
func (f *fakeReader) VersionAt(ctx context.Context, p, branch, path string, _ int64) (*store.Version, error) {
	d, err := f.FindDocument(ctx, p, branch, path)
	if d == nil || err != nil {
		return nil, err
	}
	return &store.Version{FileID: d.FileID, FilePath: d.FilePath, Branch: d.Branch, FileVersionID: d.FileVersionID,
		Status: d.Status, Error: d.Error, Deleted: d.Deleted, ValidFrom: 1}, nil
}
func (f *fakeReader) Branches(_ context.Context, p string) ([]string, error) {
	var out []string
	for _, d := range f.docs[p] {
		if d.Branch != "" {
			out = append(out, d.Branch)
		}
	}
	return out, nil
}
func (f *fakeReader) ReleaseByID(context.Context, string, string) (*store.Release, error) {
	return nil, nil
}
func (f *fakeReader) ReleaseByVersion(context.Context, string, string, string) (*store.Release, error) {
	return nil, nil
}
func (f *fakeReader) GetChunk(_ context.Context, p, id string, _ int64) (*store.Chunk, error) {
	for _, c := range f.chunks[p] {
		if c.ID == id {
			return &c, nil
		}
	}
	return nil, nil
}
func (f *fakeReader) SearchKeyword(_ context.Context, p, q string, limit int, _ *store.Where, _ int64) ([]store.Chunk, error) {
	var out []store.Chunk
	for _, c := range f.chunks[p] {
		if strings.Contains(c.Content, q) {
			c.Score = 1
			out = append(out, c)
		}
	}
	return out[:min(limit, len(out))], nil
}
func (f *fakeReader) SectionExists(context.Context, string, string) (bool, error) { return false, nil }

// AllDocuments ignores where (the tools check scope again) and sorts by path like the store.
func (f *fakeReader) AllDocuments(_ context.Context, p string, _ *store.Where, limit int) ([]store.Document, error) {
	out := slices.DeleteFunc(slices.Clone(f.docs[p]), func(d store.Document) bool { return d.Deleted })
	slices.SortStableFunc(out, func(x, y store.Document) int { return strings.Compare(x.FilePath, y.FilePath) })
	return out[:min(limit, len(out))], nil
}
func (f *fakeReader) Stats(_ context.Context, p string) (store.Stats, error) {
	var st store.Stats
	for _, d := range f.docs[p] {
		switch {
		case d.Deleted:
		case d.Status == pipeline.StatusIndexed:
			st.Indexed++
		case d.Status == pipeline.StatusFailed:
			st.Failed++
		case d.Status == pipeline.StatusUnsupported:
			st.Unsupported++
		}
	}
	st.Chunks = len(f.chunks[p])
	return st, nil
}

func index() *fakeReader {
	f := &fakeReader{docs: map[string][]store.Document{}, chunks: map[string][]store.Chunk{}}
	for _, p := range []string{"acme", "beta"} {
		fileID := ids.File(p, "", "a.md")
		fv := ids.FileVersion(fileID, "e", "s")
		f.docs[p] = []store.Document{{FileID: fileID, FilePath: "a.md", FileVersionID: fv, Status: pipeline.StatusIndexed}}
		for i := range 5 {
			f.chunks[p] = append(f.chunks[p], store.Chunk{ID: ids.Chunk(fv, i), FileID: fileID, FileVersionID: fv, FilePath: "a.md",
				Index: i, Content: fmt.Sprintf("%s chunk %d", p, i), EndOffset: 10})
		}
	}
	return f
}

func newServer(t *testing.T) *server.MCPServer {
	t.Helper()
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	New(index(), signer, slog.New(slog.DiscardHandler)).Register(s)
	return s
}

// rpc sends one JSON-RPC request as the principal with key access and returns the raw response.
func rpc(t *testing.T, s *server.MCPServer, projects string, method string, params any) map[string]any {
	t.Helper()
	keys, err := auth.ParseKeys("test-key-0123456789=" + projects)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := keys.Lookup("test-key-0123456789")
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp := s.HandleMessage(auth.WithPrincipal(context.Background(), p), body)
	raw, _ := json.Marshal(resp)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func callTool(t *testing.T, s *server.MCPServer, projects, name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	out := rpc(t, s, projects, "tools/call", map[string]any{"name": name, "arguments": args})
	if e, ok := out["error"].(map[string]any); ok {
		return nil, fmt.Sprint(e["message"])
	}
	res := out["result"].(map[string]any)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if res["isError"] == true {
		return nil, text
	}
	return res["structuredContent"].(map[string]any), ""
}

// TestServedSchemasMatchReference compares each served input schema with the
// original public page in testdata/reference (names, required, defaults, ranges).
func TestServedSchemasMatchReference(t *testing.T) {
	s := newServer(t)
	out := rpc(t, s, "*", "tools/list", map[string]any{})
	served := map[string]map[string]any{}
	for _, tl := range out["result"].(map[string]any)["tools"].([]any) {
		m := tl.(map[string]any)
		served[m["name"].(string)] = m
		ann := m["annotations"].(map[string]any)
		if ann["readOnlyHint"] != true || ann["destructiveHint"] != false {
			t.Errorf("%s annotations %v", m["name"], ann)
		}
	}
	refDir := filepath.Join("testdata", "reference")
	for _, name := range []string{"list_file_chunks", "get_file_chunk"} {
		page, err := os.ReadFile(filepath.Join(refDir, "veryfront-"+name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		text := string(page)
		start := strings.Index(text, "Input schema\nInput schema\n") + len("Input schema\nInput schema\n")
		end := strings.Index(text, "Output schema\nOutput schema\n")
		var want, wantOut map[string]any
		if err := json.Unmarshal([]byte(text[start:end]), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(text[end+len("Output schema\nOutput schema\n"):]), &wantOut); err != nil {
			t.Fatal(err)
		}
		if got := served[name]["inputSchema"]; !reflect.DeepEqual(got, any(want)) {
			t.Errorf("%s input schema differs from the reference:\n got %v\nwant %v", name, got, want)
		}
		if got := served[name]["outputSchema"]; !reflect.DeepEqual(got, any(wantOut)) {
			t.Errorf("%s output schema differs from the reference", name)
		}
	}
	// Knowledge Stack publishes a table, not JSON: check names, required, defaults, ranges.
	ks := served["search_keyword"]["inputSchema"].(map[string]any)
	props := ks["properties"].(map[string]any)
	topK := props["top_k"].(map[string]any)
	if !reflect.DeepEqual(ks["required"], []any{"query"}) || topK["default"] != 5.0 || topK["minimum"] != 1.0 || topK["maximum"] != 20.0 ||
		props["parent_path_part_ids"] == nil || len(props) != 3 {
		t.Errorf("search_keyword schema %v", ks)
	}
}

func TestProjectIsolation(t *testing.T) {
	s := newServer(t)
	args := map[string]any{"project_reference": "beta", "file_path": "a.md"}
	_, foreign := callTool(t, s, "acme", "list_file_chunks", args)
	args["project_reference"] = "nosuch"
	_, missing := callTool(t, s, "acme", "list_file_chunks", args)
	if foreign == "" || strings.ReplaceAll(foreign, "beta", "X") != strings.ReplaceAll(missing, "nosuch", "X") {
		t.Fatalf("a foreign project must answer like a missing one: %q vs %q", foreign, missing)
	}
	args["project_reference"] = ids.Project("beta")
	if _, errText := callTool(t, s, "acme", "list_file_chunks", args); !strings.Contains(errText, "project not found") {
		t.Fatalf("foreign project by id: %q", errText)
	}
	if out, errText := callTool(t, s, "acme", "list_file_chunks", map[string]any{"project_reference": ids.Project("acme"), "file_path": "a.md"}); errText != "" || len(out["data"].([]any)) != 5 {
		t.Fatalf("own project by id: %v %q", out, errText)
	}
	out, _ := callTool(t, s, "acme", "search_keyword", map[string]any{"query": "chunk"})
	for _, r := range out["results"].([]any) {
		if r.(map[string]any)["project"] != "acme" {
			t.Fatalf("search leaked another project: %v", r)
		}
	}
	// get_file_chunk of another project's chunk id: not found, like any unknown id.
	beta := index().chunks["beta"][0].ID
	if _, errText := callTool(t, s, "acme", "get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": beta}); !strings.Contains(errText, "chunk not found") {
		t.Fatalf("cross-project chunk: %q", errText)
	}
}

func TestArgumentValidation(t *testing.T) {
	s := newServer(t)
	for name, c := range map[string]struct {
		tool string
		args map[string]any
	}{
		"limit too big":       {"list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "limit": 101}},
		"limit fractional":    {"list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "limit": 2.5}},
		"unknown argument":    {"list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "drop": "table"}},
		"missing file_path":   {"list_file_chunks", map[string]any{"project_reference": "acme"}},
		"branch not uuid":     {"list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "branch_id": "main"}},
		"release":             {"list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "release_version": "v1"}},
		"chunk id not uuid":   {"get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": "1 OR 1=1"}},
		"chunk id wrong type": {"get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": 7}},
		"empty query":         {"search_keyword", map[string]any{"query": "   "}},
		"huge query":          {"search_keyword", map[string]any{"query": strings.Repeat("x", MaxQueryBytes+1)}},
		"top_k zero":          {"search_keyword", map[string]any{"query": "x", "top_k": 0}},
		"parent not uuid":     {"search_keyword", map[string]any{"query": "x", "parent_path_part_ids": []string{"../etc"}}},
		"parent unknown":      {"search_keyword", map[string]any{"query": "x", "parent_path_part_ids": []string{ids.Project("nosuch")}}},
	} {
		if out, errText := callTool(t, s, "*", c.tool, c.args); errText == "" {
			t.Errorf("%s: accepted, got %v", name, out)
		}
	}
}

func TestCursorPaging(t *testing.T) {
	s := newServer(t)
	args := map[string]any{"project_reference": "acme", "file_path": "a.md", "limit": 2}
	var seen []float64
	for page := 0; page < 5; page++ {
		out, errText := callTool(t, s, "*", "list_file_chunks", args)
		if errText != "" {
			t.Fatal(errText)
		}
		for _, c := range out["data"].([]any) {
			seen = append(seen, c.(map[string]any)["index"].(float64))
		}
		next := out["page_info"].(map[string]any)["next"]
		if next == nil {
			break
		}
		args = map[string]any{"project_reference": "acme", "file_path": "a.md", "cursor": next}
	}
	if !reflect.DeepEqual(seen, []float64{0, 1, 2, 3, 4}) {
		t.Fatalf("paged indexes %v", seen)
	}
	// A cursor of acme's listing used for beta is refused.
	out, _ := callTool(t, s, "*", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "limit": 2})
	next := out["page_info"].(map[string]any)["next"]
	if _, errText := callTool(t, s, "*", "list_file_chunks", map[string]any{"project_reference": "beta", "file_path": "a.md", "cursor": next}); !strings.Contains(errText, "another listing") {
		t.Fatalf("cursor reuse across projects: %q", errText)
	}
}
