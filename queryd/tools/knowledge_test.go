package tools

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/shared/ids"
)

var ksTools = []string{"list_contents", "find", "get_info", "read", "read_around", "view_chunk_image"}

// kbServer serves the fixture with a token budget (0 = default) and an
// optional image reader; validate keeps the input schema checks on, so
// without them the handlers' own checks are what refuse bad arguments.
func kbServer(t *testing.T, f *kbFixture, budget int, images ImageReader, validate bool) *server.MCPServer {
	t.Helper()
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	tl := New(newKBReader(f.x), signer, slog.New(slog.DiscardHandler)).SetTokenBudget(budget)
	if !validate {
		tl.SkipArgumentChecks()
	}
	if images != nil {
		tl.SetImageReader(images)
	}
	tl.Register(s)
	return s
}

func mustCall(t *testing.T, s *server.MCPServer, projects, name string, args map[string]any) map[string]any {
	t.Helper()
	out, errText := callTool(t, s, projects, name, args)
	if errText != "" {
		t.Fatalf("%s %v: %s", name, args, errText)
	}
	return out
}

func mustFail(t *testing.T, s *server.MCPServer, projects, name string, args map[string]any, want string) string {
	t.Helper()
	out, errText := callTool(t, s, projects, name, args)
	if errText == "" {
		t.Fatalf("%s %v: accepted, got %v", name, args, out)
	}
	if !strings.Contains(errText, want) {
		t.Fatalf("%s %v: error %q does not say %q", name, args, errText, want)
	}
	return errText
}

// field collects one field of each object in list.
func field(out map[string]any, list, key string) []any {
	var vals []any
	l, _ := out[list].([]any)
	for _, v := range l {
		vals = append(vals, v.(map[string]any)[key])
	}
	return vals
}

func strs(vals []any) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		out = append(out, v.(string))
	}
	return out
}

func nums(vals []any) []int {
	out := make([]int, 0, len(vals))
	for _, v := range vals {
		out = append(out, int(v.(float64)))
	}
	return out
}

func eqList[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func TestKnowledgeListContents(t *testing.T) {
	f := newKBFixture()
	s := kbServer(t, f, 0, nil, true)

	root := mustCall(t, s, "*", "list_contents", map[string]any{})
	eqList(t, "root", strs(field(root, "items", "name")), []string{"acme", "beta"})
	eqList(t, "root ids", strs(field(root, "items", "path_part_id")), []string{ids.Project("acme"), ids.Project("beta")})
	if root["path_part_id"] != nil || root["total"] != 2.0 || root["next_offset"] != nil || field(root, "items", "parent_path_part_id")[0] != nil {
		t.Fatalf("root listing %v", root)
	}
	root = mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": nil, "limit": 1})
	if len(root["items"].([]any)) != 1 || root["next_offset"] != 1.0 {
		t.Fatalf("root page %v", root)
	}
	root = mustCall(t, s, "acme", "list_contents", map[string]any{})
	eqList(t, "root of an acme key", strs(field(root, "items", "name")), []string{"acme"})

	acme := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": ids.Project("acme")})
	eqList(t, "acme", strs(field(acme, "items", "name")), []string{"archive", "docs", "README.md"})
	eqList(t, "acme types", strs(field(acme, "items", "type")), []string{"FOLDER", "FOLDER", "DOCUMENT"})
	if acme["path"] != "/acme" || acme["breadcrumb"] != "acme" || acme["total"] != 3.0 {
		t.Fatalf("acme listing %v", acme)
	}
	// The root folder's other id (ids.Folder with path "") is the same folder.
	alias := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": ids.Folder("acme", "", "")})
	if !reflect.DeepEqual(alias, acme) {
		t.Fatalf("root alias %v", alias)
	}

	docsID := ids.Folder("acme", "", "docs")
	docs := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": docsID})
	// Deleted old.md and the preview branch's files are not listed; the failed document is, with why.
	eqList(t, "docs", strs(field(docs, "items", "name")), []string{"api", "broken.docx", "guide.md"})
	items := docs["items"].([]any)
	broken, guide := items[1].(map[string]any), items[2].(map[string]any)
	if broken["status"] != "failed" || broken["error"] != "zip: not a valid zip file" || broken["chunk_count"] != nil {
		t.Fatalf("failed document %v", broken)
	}
	if guide["path_part_id"] != f.guide || guide["status"] != "indexed" || guide["chunk_count"] != 10.0 ||
		guide["path"] != "/acme/docs/guide.md" || guide["parent_path_part_id"] != docsID || guide["format"] != "markdown" {
		t.Fatalf("document %v", guide)
	}
	if docs["breadcrumb"] != "acme > docs" || docs["path_part_id"] != docsID || docs["name"] != "docs" {
		t.Fatalf("docs listing %v", docs)
	}
	// Folders first, then documents, across pages.
	page := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": docsID, "limit": 1, "offset": 1})
	eqList(t, "docs page 2", strs(field(page, "items", "name")), []string{"broken.docx"})
	if page["total"] != 3.0 || page["next_offset"] != 2.0 {
		t.Fatalf("docs page %v", page)
	}
	page = mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": docsID, "limit": 5, "offset": 2})
	eqList(t, "docs last page", strs(field(page, "items", "name")), []string{"guide.md"})
	if page["next_offset"] != nil {
		t.Fatalf("last page %v", page)
	}
	page = mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": docsID, "offset": 50})
	if len(page["items"].([]any)) != 0 || page["total"] != 3.0 {
		t.Fatalf("past the end %v", page)
	}
	// A folder that holds only a folder.
	archive := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": ids.Folder("acme", "", "archive")})
	eqList(t, "archive", strs(field(archive, "items", "name")), []string{"2024"})

	// Documents, sections and chunks are read, not listed.
	for _, id := range []string{f.guide, f.guideSecs[1], f.imageChunk} {
		mustFail(t, s, "*", "list_contents", map[string]any{"path_part_id": id}, "use read")
	}
	mustFail(t, s, "*", "list_contents", map[string]any{"path_part_id": ids.Project("nosuch")}, "path_part_id not found")
	mustFail(t, s, "*", "list_contents", map[string]any{"path_part_id": ids.Folder("acme", "preview", "preview-only")}, "not found")

	// The plain fake index of tools_test.go.
	plain := newServer(t)
	out := mustCall(t, plain, "*", "list_contents", map[string]any{"path_part_id": ids.Project("acme")})
	eqList(t, "plain acme", strs(field(out, "items", "name")), []string{"a.md"})
}

func TestKnowledgeFind(t *testing.T) {
	f := newKBFixture()
	s := kbServer(t, f, 0, nil, true)
	paths := func(out map[string]any) []string { return strs(field(out, "results", "path")) }

	out := mustCall(t, s, "*", "find", map[string]any{"name": "GUIDE"})
	eqList(t, "GUIDE", paths(out), []string{"/acme/docs/guide.md", "/beta/secret/guide-beta.md"})
	if out["total"] != 2.0 || out["kind"] != nil || field(out, "results", "path_part_id")[0] != f.guide {
		t.Fatalf("find %v", out)
	}
	out = mustCall(t, s, "acme", "find", map[string]any{"name": "guide"})
	eqList(t, "guide for acme", paths(out), []string{"/acme/docs/guide.md"})

	out = mustCall(t, s, "*", "find", map[string]any{"name": "doc"})
	eqList(t, "doc", paths(out), []string{"/acme/docs", "/acme/docs/broken.docx"})
	out = mustCall(t, s, "*", "find", map[string]any{"name": "DOC", "kind": "FOLDER"})
	eqList(t, "DOC folders", paths(out), []string{"/acme/docs"})
	if out["kind"] != "FOLDER" || field(out, "results", "type")[0] != "FOLDER" || field(out, "results", "path_part_id")[0] != ids.Folder("acme", "", "docs") {
		t.Fatalf("find folders %v", out)
	}
	out = mustCall(t, s, "*", "find", map[string]any{"name": "doc", "kind": "DOCUMENT"})
	eqList(t, "doc documents", paths(out), []string{"/acme/docs/broken.docx"})
	out = mustCall(t, s, "*", "find", map[string]any{"name": "q4 ANALYSIS"})
	eqList(t, "q4", paths(out), []string{"/acme/archive/2024/Q4 Analysis.md"})
	out = mustCall(t, s, "*", "find", map[string]any{"name": "2024", "kind": "FOLDER"})
	eqList(t, "2024", paths(out), []string{"/acme/archive/2024"})
	out = mustCall(t, s, "*", "find", map[string]any{"name": "acm", "kind": "FOLDER"})
	eqList(t, "a project root", paths(out), []string{"/acme"})
	// Neither deleted files nor other branches.
	for _, name := range []string{"old.md", "draft", "preview"} {
		if out := mustCall(t, s, "*", "find", map[string]any{"name": name}); out["total"] != 0.0 {
			t.Fatalf("find %q: %v", name, out)
		}
	}
	// Paging.
	all := mustCall(t, s, "*", "find", map[string]any{"name": "e"})
	first := mustCall(t, s, "*", "find", map[string]any{"name": "e", "limit": 2})
	second := mustCall(t, s, "*", "find", map[string]any{"name": "e", "limit": 2, "offset": 2})
	if first["next_offset"] != 2.0 || !slices.Equal(append(paths(first), paths(second)...), paths(all)[:4]) || all["total"] != first["total"] {
		t.Fatalf("find pages: %v + %v vs %v", paths(first), paths(second), paths(all))
	}
	mustFail(t, s, "*", "find", map[string]any{"name": "doc", "kind": "SECTION"}, "")
}

func TestKnowledgeGetInfo(t *testing.T) {
	f := newKBFixture()
	s := kbServer(t, f, 0, nil, true)
	docsID := ids.Folder("acme", "", "docs")

	sec := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": f.guideSecs[1]})
	if sec["type"] != "SECTION" || sec["name"] != "Install" || sec["breadcrumb"] != "acme > docs > guide.md > Install" ||
		sec["parent_path_part_id"] != f.guide || sec["token_count"] != 300.0 || sec["chunk_count"] != 3.0 ||
		sec["path"] != "/acme/docs/guide.md" || sec["document_id"] != f.guide || sec["project"] != "acme" {
		t.Fatalf("section info %v", sec)
	}
	wantCrumbs := []any{
		map[string]any{"path_part_id": ids.Project("acme"), "name": "acme", "type": "FOLDER"},
		map[string]any{"path_part_id": docsID, "name": "docs", "type": "FOLDER"},
		map[string]any{"path_part_id": f.guide, "name": "guide.md", "type": "DOCUMENT"},
		map[string]any{"path_part_id": f.guideSecs[1], "name": "Install", "type": "SECTION"},
	}
	if !reflect.DeepEqual(sec["breadcrumb_parts"], wantCrumbs) {
		t.Fatalf("breadcrumb parts %v", sec["breadcrumb_parts"])
	}

	doc := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": f.guide})
	if doc["type"] != "DOCUMENT" || doc["breadcrumb"] != "acme > docs > guide.md" || doc["parent_path_part_id"] != docsID ||
		doc["status"] != "indexed" || doc["format"] != "markdown" || doc["chunk_count"] != 10.0 || doc["section_count"] != 3.0 ||
		doc["token_count"] != 2200.0 || doc["file_version_id"] != f.guideFV {
		t.Fatalf("document info %v", doc)
	}
	broken := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": f.broken})
	if broken["status"] != "failed" || broken["error"] != "zip: not a valid zip file" {
		t.Fatalf("failed document info %v", broken)
	}

	ch := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": f.imageChunk})
	if ch["type"] != "CHUNK" || ch["name"] != "chunk 1" || ch["breadcrumb"] != "acme > docs > api > Reference.PDF > Figures > chunk 1" ||
		ch["parent_path_part_id"] != f.refSec || ch["index"] != 1.0 || ch["start_offset"] != 100.0 || ch["end_offset"] != 200.0 ||
		ch["kind"] != "image" || ch["has_image"] != true || ch["section_id"] != f.refSec || ch["section_title"] != "Figures" ||
		ch["page_start"] != 2.0 {
		t.Fatalf("chunk info %v", ch)
	}

	api := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": ids.Folder("acme", "", "docs/api")})
	if api["type"] != "FOLDER" || api["name"] != "api" || api["path"] != "/acme/docs/api" || api["parent_path_part_id"] != docsID ||
		api["breadcrumb"] != "acme > docs > api" {
		t.Fatalf("folder info %v", api)
	}
	root := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": ids.Project("acme")})
	if root["type"] != "FOLDER" || root["parent_path_part_id"] != nil || root["breadcrumb"] != "acme" || root["path"] != "/acme" {
		t.Fatalf("root info %v", root)
	}
	q4 := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": f.q4})
	if q4["breadcrumb"] != "acme > archive > 2024 > Q4 Analysis.md" || q4["parent_path_part_id"] != ids.Folder("acme", "", "archive/2024") {
		t.Fatalf("nested document info %v", q4)
	}

	// Deleted files, replaced versions and other branches are not there.
	for name, id := range map[string]string{
		"deleted document": f.oldDoc, "replaced chunk": f.oldChunk, "replaced section": f.oldSection,
		"branch document": ids.File("acme", "preview", "docs/guide.md"),
	} {
		if _, errText := callTool(t, s, "*", "get_info", map[string]any{"path_part_id": id}); errText != "path_part_id not found: "+id {
			t.Errorf("%s: %q", name, errText)
		}
	}
}

func TestKnowledgeRead(t *testing.T) {
	f := newKBFixture()
	s := kbServer(t, f, 0, nil, true)
	read := func(s *server.MCPServer, id string, more ...any) map[string]any {
		t.Helper()
		args := map[string]any{"path_part_id": id}
		for i := 0; i+1 < len(more); i += 2 {
			args[more[i].(string)] = more[i+1]
		}
		return mustCall(t, s, "*", "read", args)
	}
	mode := func(out map[string]any, mode, reason string) {
		t.Helper()
		if out["mode"] != mode || out["reason"] != reason {
			t.Fatalf("want %s (%s), got %v (%v): %v", mode, reason, out["mode"], out["reason"], out)
		}
	}

	// A small document: everything inline.
	out := read(s, f.readme)
	mode(out, "inline", "within_budget")
	eqList(t, "README chunks", nums(field(out, "chunks", "index")), []int{0, 1})
	if out["token_count"] != 40.0 || out["token_budget"] != 2000.0 || out["total"] != 2.0 || out["next_offset"] != nil || out["type"] != "DOCUMENT" {
		t.Fatalf("inline document %v", out)
	}

	// A document over the budget: its table of contents.
	out = read(s, f.guide)
	mode(out, "toc", "over_budget")
	eqList(t, "toc titles", strs(field(out, "sections", "title")), []string{"Guide", "Install", "Usage"})
	eqList(t, "toc ids", strs(field(out, "sections", "path_part_id")), f.guideSecs)
	eqList(t, "toc tokens", nums(field(out, "sections", "token_count")), []int{100, 300, 1800})
	eqList(t, "toc chunks", nums(field(out, "sections", "chunk_count")), []int{1, 3, 6})
	if out["chunks"] != nil || out["token_count"] != 2200.0 || out["total"] != 3.0 ||
		!reflect.DeepEqual(field(out, "sections", "heading_path")[1], []any{"Guide", "Install"}) ||
		!reflect.DeepEqual(field(out, "sections", "fits_budget"), []any{true, true, true}) {
		t.Fatalf("toc %v", out)
	}
	out = read(s, f.guide, "limit", 2)
	if len(out["sections"].([]any)) != 2 || out["next_offset"] != 2.0 {
		t.Fatalf("toc page %v", out)
	}

	// A section within the budget: inline.
	out = read(s, f.guideSecs[2])
	mode(out, "inline", "within_budget")
	eqList(t, "Usage", nums(field(out, "chunks", "index")), []int{4, 5, 6, 7, 8, 9})
	if out["breadcrumb"] != "acme > docs > guide.md > Usage" || out["type"] != "SECTION" {
		t.Fatalf("inline section %v", out)
	}

	// Missing statistics: paginated, for a document and for a section.
	out = read(s, f.ref)
	mode(out, "paginated", "missing_statistics")
	eqList(t, "Reference kinds", strs(field(out, "chunks", "kind")), []string{"text", "image", "table"})
	if out["token_count"] != nil || out["total"] != 3.0 || field(out, "chunks", "has_image")[1] != true {
		t.Fatalf("paginated fallback %v", out)
	}
	out = read(s, f.ref, "limit", 2)
	if len(out["chunks"].([]any)) != 2 || out["next_offset"] != 2.0 {
		t.Fatalf("paginated fallback page %v", out)
	}
	mode(read(s, f.refSec), "paginated", "missing_statistics")

	// A chunk: itself.
	out = read(s, f.imageChunk)
	mode(out, "inline", "chunk")
	eqList(t, "chunk", strs(field(out, "chunks", "path_part_id")), []string{f.imageChunk})

	mustFail(t, s, "*", "read", map[string]any{"path_part_id": f.broken}, "was not indexed (failed): zip: not a valid zip file")
	mustFail(t, s, "*", "read", map[string]any{"path_part_id": ids.Folder("acme", "", "docs")}, "use list_contents")
	mustFail(t, s, "*", "read", map[string]any{"path_part_id": f.oldChunk}, "path_part_id not found")
	mustFail(t, s, "*", "read", map[string]any{"path_part_id": f.oldSection}, "path_part_id not found")

	// A tiny budget: Usage no longer fits and pages.
	small := kbServer(t, f, 500, nil, true)
	out = read(small, f.guide)
	mode(out, "toc", "over_budget")
	if !reflect.DeepEqual(field(out, "sections", "fits_budget"), []any{true, true, false}) || out["token_budget"] != 500.0 {
		t.Fatalf("toc at 500 %v", out)
	}
	mode(read(small, f.guideSecs[1]), "inline", "within_budget")
	out = read(small, f.guideSecs[2], "limit", 2)
	mode(out, "paginated", "over_budget")
	eqList(t, "Usage page 1", nums(field(out, "chunks", "index")), []int{4, 5})
	if out["total"] != 6.0 || out["next_offset"] != 2.0 || out["token_count"] != 1800.0 {
		t.Fatalf("paginated section %v", out)
	}
	out = read(small, f.guideSecs[2], "limit", 2, "offset", 4)
	eqList(t, "Usage page 3", nums(field(out, "chunks", "index")), []int{8, 9})
	if out["next_offset"] != nil {
		t.Fatalf("last page %v", out)
	}

	// A large budget: the whole document inline, without the replaced version's chunk.
	large := kbServer(t, f, 10000, nil, true)
	out = read(large, f.guide)
	mode(out, "inline", "within_budget")
	eqList(t, "guide inline", nums(field(out, "chunks", "index")), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	if slices.Contains(strs(field(out, "chunks", "path_part_id")), f.oldChunk) {
		t.Fatal("inline read shows a replaced version")
	}

	// The plain fake index has no sections: paginated.
	out = read(newServer(t), index().docs["acme"][0].FileID)
	mode(out, "paginated", "missing_statistics")
	if out["total"] != 5.0 {
		t.Fatalf("plain read %v", out)
	}
}

func TestKnowledgeReadAround(t *testing.T) {
	f := newKBFixture()
	guideChunk := func(i int) string { return ids.Chunk(f.guideFV, i) }
	around := func(s *server.MCPServer, id string, window any) map[string]any {
		t.Helper()
		args := map[string]any{"chunk_id": id}
		if window != nil {
			args["window"] = window
		}
		return mustCall(t, s, "*", "read_around", args)
	}
	check := func(out map[string]any, indexes []int, pos int, whole bool) {
		t.Helper()
		eqList(t, "indexes", nums(field(out, "chunks", "index")), indexes)
		if out["anchor_position"] != float64(pos) || out["whole_section"] != whole {
			t.Fatalf("anchor_position %v whole_section %v, want %d %v", out["anchor_position"], out["whole_section"], pos, whole)
		}
		if anchor := out["chunks"].([]any)[pos].(map[string]any); anchor["is_anchor"] != true || anchor["path_part_id"] != out["anchor_chunk_id"] {
			t.Fatalf("anchor %v", anchor)
		}
	}

	// Usage (1,800 tokens) fits the default budget: the whole section.
	s := kbServer(t, f, 0, nil, true)
	out := around(s, guideChunk(5), nil)
	check(out, []int{4, 5, 6, 7, 8, 9}, 1, true)
	if out["window"] != 1.0 || out["section"].(map[string]any)["title"] != "Usage" || out["document_id"] != f.guide ||
		out["document_path"] != "/acme/docs/guide.md" {
		t.Fatalf("read_around %v", out)
	}
	// Within a budget it does not fit: the window only.
	check(around(kbServer(t, f, 500, nil, true), guideChunk(5), 1), []int{4, 5, 6}, 1, false)

	// Nothing fits: windows are clamped to the document; whole_section says
	// whether they happen to cover the anchor's section.
	tiny := kbServer(t, f, 50, nil, true)
	check(around(tiny, guideChunk(0), 3), []int{0, 1, 2, 3}, 0, true)
	check(around(tiny, guideChunk(9), 10), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 9, true)
	check(around(tiny, guideChunk(2), 1), []int{1, 2, 3}, 1, true)
	check(around(tiny, guideChunk(4), 2), []int{2, 3, 4, 5, 6}, 2, false)

	// A section without statistics: its size is counted.
	check(around(s, f.imageChunk, 1), []int{0, 1, 2}, 1, true)

	mustFail(t, s, "*", "read_around", map[string]any{"chunk_id": f.guideSecs[0]}, "not a chunk")
	mustFail(t, s, "*", "read_around", map[string]any{"chunk_id": f.oldChunk}, "chunk_id not found")

	// The plain fake index: chunks without sections.
	out = around(newServer(t), index().chunks["acme"][0].ID, 2)
	check(out, []int{0, 1, 2}, 0, false)
	if out["section"] != nil {
		t.Fatalf("no section %v", out)
	}
}

func TestKnowledgeViewChunkImage(t *testing.T) {
	f := newKBFixture()
	pic := pngBytes()
	images := &fakeImages{data: map[string][]byte{f.imageRef: pic}}
	s := kbServer(t, f, 0, images, true)

	resp := rpc(t, s, "*", "tools/call", map[string]any{"name": "view_chunk_image", "arguments": map[string]any{"chunk_id": f.imageChunk}})
	res := resp["result"].(map[string]any)
	if res["isError"] == true {
		t.Fatalf("view_chunk_image: %v", res)
	}
	content := res["content"].([]any)
	text, img := content[0].(map[string]any), content[1].(map[string]any)
	for _, want := range []string{"page 2", "/acme/docs/api/Reference.PDF", "Figure 1: architecture diagram", "image/png"} {
		if !strings.Contains(text["text"].(string), want) {
			t.Errorf("description %q lacks %q", text["text"], want)
		}
	}
	data, err := base64.StdEncoding.DecodeString(img["data"].(string))
	if img["type"] != "image" || img["mimeType"] != "image/png" || err != nil || !bytes.Equal(data, pic) {
		t.Fatalf("image content %v (%v)", img, err)
	}
	meta := res["structuredContent"].(map[string]any)
	if meta["chunk_id"] != f.imageChunk || meta["mime_type"] != "image/png" || meta["bytes"] != float64(len(pic)) || meta["page_start"] != 2.0 {
		t.Fatalf("structured content %v", meta)
	}
	if !slices.Equal(images.reads, []string{f.imageRef}) {
		t.Fatalf("image reads %v", images.reads)
	}

	mustFail(t, s, "*", "view_chunk_image", map[string]any{"chunk_id": f.tableChunk}, "table chunk without an image")
	mustFail(t, s, "*", "view_chunk_image", map[string]any{"chunk_id": ids.Chunk(f.guideFV, 0)}, "text chunk without an image")
	mustFail(t, s, "*", "view_chunk_image", map[string]any{"chunk_id": f.refSec}, "not a chunk")
	mustFail(t, kbServer(t, f, 0, nil, true), "*", "view_chunk_image", map[string]any{"chunk_id": f.imageChunk}, "images are not available on this server")
	big := &fakeImages{data: map[string][]byte{f.imageRef: make([]byte, MaxImageBytes+1)}}
	mustFail(t, kbServer(t, f, 0, big, true), "*", "view_chunk_image", map[string]any{"chunk_id": f.imageChunk}, "larger than 8 MiB")
	// A failing store is an internal error, not the store's message.
	gone := &fakeImages{data: map[string][]byte{}}
	mustFail(t, kbServer(t, f, 0, gone, true), "*", "view_chunk_image", map[string]any{"chunk_id": f.imageChunk}, "internal error")
}

// TestKnowledgeIsolation: a node of a project the key may not read answers
// exactly like a missing one, in every tool.
func TestKnowledgeIsolation(t *testing.T) {
	f := newKBFixture()
	s := kbServer(t, f, 0, &fakeImages{}, true)
	missing := ids.Chunk(ids.FileVersion(ids.File("nosuch", "", "x"), "1", "1"), 0)
	foreign := []string{ids.Project("beta"), ids.Folder("beta", "", "secret"), f.betaDoc, f.betaSection, f.betaChunk}
	for _, tc := range []struct{ tool, arg string }{
		{"list_contents", "path_part_id"}, {"get_info", "path_part_id"}, {"read", "path_part_id"},
		{"read_around", "chunk_id"}, {"view_chunk_image", "chunk_id"},
	} {
		_, want := callTool(t, s, "acme", tc.tool, map[string]any{tc.arg: missing})
		if want == "" {
			t.Fatalf("%s of a missing id succeeded", tc.tool)
		}
		for _, id := range foreign {
			// The beta key reaches every one of them (or is told it is the wrong kind of node).
			if _, errText := callTool(t, s, "beta", tc.tool, map[string]any{tc.arg: id}); strings.Contains(errText, "not found") {
				t.Fatalf("%s %s as beta: %q", tc.tool, id, errText)
			}
			_, got := callTool(t, s, "acme", tc.tool, map[string]any{tc.arg: id})
			if strings.ReplaceAll(got, id, "ID") != strings.ReplaceAll(want, missing, "ID") {
				t.Errorf("%s of a beta node as acme: %q, a missing node: %q", tc.tool, got, want)
			}
		}
	}
	out := mustCall(t, s, "acme", "find", map[string]any{"name": "e"})
	for _, p := range strs(field(out, "results", "project")) {
		if p != "acme" {
			t.Fatalf("find leaked %v", out)
		}
	}
	out = mustCall(t, s, "acme", "find", map[string]any{"name": "beta"})
	if out["total"] != 0.0 {
		t.Fatalf("find leaked %v", out)
	}
}

func TestKnowledgeArgumentValidation(t *testing.T) {
	f := newKBFixture()
	cases := map[string]struct {
		tool string
		args map[string]any
	}{
		"list_contents id not uuid":     {"list_contents", map[string]any{"path_part_id": "docs"}},
		"list_contents id wrong type":   {"list_contents", map[string]any{"path_part_id": 7}},
		"list_contents limit zero":      {"list_contents", map[string]any{"limit": 0}},
		"list_contents limit 101":       {"list_contents", map[string]any{"limit": 101}},
		"list_contents limit fraction":  {"list_contents", map[string]any{"limit": 2.5}},
		"list_contents offset negative": {"list_contents", map[string]any{"offset": -1}},
		"find without name":             {"find", map[string]any{}},
		"find blank name":               {"find", map[string]any{"name": "   "}},
		"find huge name":                {"find", map[string]any{"name": strings.Repeat("x", maxFindNameBytes+1)}},
		"find unknown kind":             {"find", map[string]any{"name": "x", "kind": "SECTION"}},
		"find limit 101":                {"find", map[string]any{"name": "x", "limit": 101}},
		"get_info without id":           {"get_info", map[string]any{}},
		"get_info id not uuid":          {"get_info", map[string]any{"path_part_id": "1 OR 1=1"}},
		"read without id":               {"read", map[string]any{}},
		"read id not uuid":              {"read", map[string]any{"path_part_id": "../etc/passwd"}},
		"read limit zero":               {"read", map[string]any{"path_part_id": f.guide, "limit": 0}},
		"read limit 101":                {"read", map[string]any{"path_part_id": f.guide, "limit": 101}},
		"read offset negative":          {"read", map[string]any{"path_part_id": f.guide, "offset": -3}},
		"read_around without id":        {"read_around", map[string]any{}},
		"read_around id not uuid":       {"read_around", map[string]any{"chunk_id": "chunk-1"}},
		"read_around window zero":       {"read_around", map[string]any{"chunk_id": f.imageChunk, "window": 0}},
		"read_around window 11":         {"read_around", map[string]any{"chunk_id": f.imageChunk, "window": 11}},
		"read_around window fraction":   {"read_around", map[string]any{"chunk_id": f.imageChunk, "window": 1.5}},
		"view_chunk_image without id":   {"view_chunk_image", map[string]any{}},
		"view_chunk_image not uuid":     {"view_chunk_image", map[string]any{"chunk_id": "x"}},
	}
	// Refused by the schema and, without schema validation, by the handlers themselves.
	for _, validate := range []bool{true, false} {
		s := kbServer(t, f, 0, &fakeImages{}, validate)
		for name, c := range cases {
			if out, errText := callTool(t, s, "*", c.tool, c.args); errText == "" {
				t.Errorf("%s (schema validation %v): accepted, got %v", name, validate, out)
			}
		}
	}
	s := kbServer(t, f, 0, nil, true)
	if _, errText := callTool(t, s, "*", "read", map[string]any{"path_part_id": f.guide, "verbose": true}); errText == "" {
		t.Error("unknown argument accepted")
	}
	// The last page Weaviate can answer; one further is refused.
	mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": ids.Folder("acme", "", "docs"), "offset": 9900, "limit": 100})
	mustCall(t, s, "*", "read", map[string]any{"path_part_id": f.ref, "offset": 9900, "limit": 100})
	mustFail(t, s, "*", "read", map[string]any{"path_part_id": f.ref, "offset": 9901, "limit": 100}, "offset + limit must be at most 10000")
	// Upper-case UUIDs are the same ids.
	if out := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": strings.ToUpper(f.guide)}); out["path_part_id"] != f.guide {
		t.Errorf("upper-case id: %v", out)
	}
}

// argSpec is one argument as the Knowledge Stack page's tables define it.
type argSpec struct {
	name     string
	required bool
	def      any // nil: null (or none when required)
	lo, hi   int // range; hi 0 = none
	nullable bool
	uuid     bool
	enum     []string
}

var ksArgs = map[string][]argSpec{
	"list_contents": {
		{name: "path_part_id", uuid: true, nullable: true},
		{name: "limit", def: 20.0, lo: 1, hi: 100},
		{name: "offset", def: 0.0},
	},
	"find": {
		{name: "name", required: true},
		{name: "kind", nullable: true, enum: []string{"FOLDER", "DOCUMENT"}},
		{name: "limit", def: 20.0, lo: 1, hi: 100},
		{name: "offset", def: 0.0},
	},
	"get_info":         {{name: "path_part_id", required: true, uuid: true}},
	"read":             {{name: "path_part_id", required: true, uuid: true}, {name: "limit", def: 20.0, lo: 1, hi: 100}, {name: "offset", def: 0.0}},
	"read_around":      {{name: "chunk_id", required: true, uuid: true}, {name: "window", def: 1.0, lo: 1, hi: 10}},
	"view_chunk_image": {{name: "chunk_id", required: true, uuid: true}},
}

// referenceArgs reads the argument tables of the Knowledge Stack page.
func referenceArgs(text string) map[string][]argSpec {
	heading := regexp.MustCompile(`^\d+\. ([a-z_]+) `)
	rng := regexp.MustCompile(`\((\d+)-(\d+)\)`)
	quoted := regexp.MustCompile(`"([A-Z]+)"`)
	ident := regexp.MustCompile(`^[a-z_]+$`)
	out := map[string][]argSpec{}
	tool := ""
	for _, line := range strings.Split(text, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			tool = m[1]
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if tool == "" || len(cells) != 4 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !ident.MatchString(cells[0]) {
			continue
		}
		a := argSpec{name: cells[0], required: cells[2] == "required", uuid: strings.Contains(cells[1], "UUID"),
			nullable: strings.HasSuffix(cells[1], "or null")}
		if n, err := strconv.Atoi(cells[2]); err == nil {
			a.def = float64(n)
		}
		if m := rng.FindStringSubmatch(cells[3]); m != nil {
			a.lo, _ = strconv.Atoi(m[1])
			a.hi, _ = strconv.Atoi(m[2])
		}
		for _, m := range quoted.FindAllStringSubmatch(cells[3], -1) {
			a.enum = append(a.enum, m[1])
		}
		out[tool] = append(out[tool], a)
	}
	return out
}

// TestKnowledgeSchemas: the served input schemas have the page's argument
// names, required ones, defaults and ranges.
func TestKnowledgeSchemas(t *testing.T) {
	out := rpc(t, newServer(t), "*", "tools/list", map[string]any{})
	served := map[string]map[string]any{}
	for _, tl := range out["result"].(map[string]any)["tools"].([]any) {
		m := tl.(map[string]any)
		served[m["name"].(string)] = m
	}
	specs := ksArgs
	page, err := os.ReadFile(filepath.Join("testdata", "reference", "knowledge-stack-agent-tools.txt"))
	if err != nil {
		t.Fatalf("reference page: %v", err)
	}
	ref := referenceArgs(string(page))
	for _, name := range ksTools {
		if !reflect.DeepEqual(ref[name], ksArgs[name]) {
			t.Errorf("%s: the page says %+v, the test %+v", name, ref[name], ksArgs[name])
		}
	}
	specs = ref
	for _, name := range ksTools {
		tl, ok := served[name]
		if !ok {
			t.Errorf("%s is not served", name)
			continue
		}
		if ann := tl["annotations"].(map[string]any); ann["readOnlyHint"] != true || ann["destructiveHint"] != false || ann["idempotentHint"] != true {
			t.Errorf("%s annotations %v", name, ann)
		}
		schema := tl["inputSchema"].(map[string]any)
		props := schema["properties"].(map[string]any)
		if schema["additionalProperties"] != false || len(props) != len(specs[name]) {
			t.Errorf("%s schema %v", name, schema)
		}
		var required []any
		for _, a := range specs[name] {
			if a.required {
				required = append(required, a.name)
			}
			p, ok := props[a.name].(map[string]any)
			if !ok {
				t.Errorf("%s lacks argument %s", name, a.name)
				continue
			}
			def, hasDef := p["default"]
			switch {
			case a.required && hasDef:
				t.Errorf("%s.%s is required but has a default", name, a.name)
			case !a.required && (!hasDef || def != a.def):
				t.Errorf("%s.%s default %v (present %v), want %v", name, a.name, def, hasDef, a.def)
			}
			if a.hi != 0 && (p["minimum"] != float64(a.lo) || p["maximum"] != float64(a.hi) || p["type"] != "integer") {
				t.Errorf("%s.%s range %v-%v, want %d-%d", name, a.name, p["minimum"], p["maximum"], a.lo, a.hi)
			}
			variants := []any{p}
			if anyOf, ok := p["anyOf"].([]any); ok {
				variants = anyOf
			}
			nullable, uuid, enum := false, false, []string(nil)
			for _, v := range variants {
				v := v.(map[string]any)
				nullable = nullable || v["type"] == "null"
				uuid = uuid || v["format"] == "uuid"
				if e, ok := v["enum"].([]any); ok {
					enum = strs(e)
				}
			}
			if nullable != a.nullable || uuid != a.uuid || !slices.Equal(enum, a.enum) {
				t.Errorf("%s.%s nullable %v uuid %v enum %v, want %v %v %v", name, a.name, nullable, uuid, enum, a.nullable, a.uuid, a.enum)
			}
		}
		if got, _ := schema["required"].([]any); !reflect.DeepEqual(got, required) {
			t.Errorf("%s required %v, want %v", name, got, required)
		}
	}
}
