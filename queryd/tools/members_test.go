package tools

// Members (issue 52): a file inside a container is a document of its own
// at <container path>//<member path>. These tests run on the in-memory
// index; store/members_test.go runs the tools on a real weaviate-server.

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

const (
	notesPath  = "mail/launch.eml//notes.txt"
	brokenPath = "mail/launch.eml//broken.docx"
	q3Path     = "share/bundle.zip//reports/q3.docx"
)

// memberFixture is the Knowledge Stack fixture plus an e-mail with an
// attachment and a failed one, and a ZIP with a file in a folder.
func memberFixture() *kbFixture {
	f := newKBFixture()
	x := f.x
	for _, p := range []string{"mail/launch.eml", notesPath, "share/bundle.zip", q3Path} {
		fv := ids.FileVersion(ids.File("acme", "", p), "1", "1")
		x.addFile("acme", "", p, fv, []fixtureSection{{title: "Body", heading: []string{"Body"}, tokens: 10, chunks: 1}})
		x.addDoc("acme", "", p, fv, pipeline.StatusIndexed, "", false, 1, 1, 10)
	}
	x.addDoc("acme", "", brokenPath, ids.FileVersion(ids.File("acme", "", brokenPath), "1", "1"), pipeline.StatusFailed, "zip: not a valid zip file", false, 0, 0, 0)
	return f
}

// TestMemberNavigation: a member's folder is its container's path, its
// name the member's own; the container is a document and, holding
// members, a folder of the same path (folders first).
func TestMemberNavigation(t *testing.T) {
	f := memberFixture()
	s := kbServer(t, f, 0, nil, true)
	folder := func(p string) string { return ids.Folder("acme", "", p) }

	mail := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": folder("mail")})
	eqList(t, "mail", strs(field(mail, "items", "name")), []string{"launch.eml", "launch.eml"})
	eqList(t, "mail types", strs(field(mail, "items", "type")), []string{"FOLDER", "DOCUMENT"})
	eqList(t, "mail paths", strs(field(mail, "items", "path")), []string{"/acme/mail/launch.eml", "/acme/mail/launch.eml"})
	eml := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": folder("mail/launch.eml")})
	eqList(t, "mail/launch.eml", strs(field(eml, "items", "name")), []string{"broken.docx", "notes.txt"})
	eqList(t, "mail/launch.eml parents", strs(field(eml, "items", "parent_path_part_id")), []string{folder("mail/launch.eml"), folder("mail/launch.eml")})
	if eml["breadcrumb"] != "acme > mail > launch.eml" || eml["name"] != "launch.eml" || eml["path"] != "/acme/mail/launch.eml" {
		t.Fatalf("mail/launch.eml listing %v", eml)
	}
	zip := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": folder("share/bundle.zip")})
	eqList(t, "share/bundle.zip", strs(field(zip, "items", "name")), []string{"reports"})
	reports := mustCall(t, s, "*", "list_contents", map[string]any{"path_part_id": folder("share/bundle.zip//reports")})
	eqList(t, "reports", strs(field(reports, "items", "path")), []string{"/acme/" + q3Path})
	if reports["breadcrumb"] != "acme > share > bundle.zip > reports" {
		t.Fatalf("reports listing %v", reports)
	}

	doc := mustCall(t, s, "*", "read", map[string]any{"path_part_id": ids.File("acme", "", notesPath)})
	if doc["name"] != "notes.txt" || doc["path"] != "/acme/"+notesPath || doc["breadcrumb"] != "acme > mail > launch.eml > notes.txt" {
		t.Fatalf("read of a member %v", doc)
	}
	info := mustCall(t, s, "*", "get_info", map[string]any{"path_part_id": ids.File("acme", "", q3Path)})
	if info["parent_path_part_id"] != folder("share/bundle.zip//reports") || info["name"] != "q3.docx" {
		t.Fatalf("get_info of a member %v", info)
	}

	found := mustCall(t, s, "*", "find", map[string]any{"name": "notes"})
	eqList(t, "find notes", strs(field(found, "results", "path")), []string{"/acme/" + notesPath})
	found = mustCall(t, s, "*", "find", map[string]any{"name": "launch"})
	eqList(t, "find launch", strs(field(found, "results", "type")), []string{"FOLDER", "DOCUMENT"})
	found = mustCall(t, s, "*", "find", map[string]any{"name": "report", "kind": "FOLDER"})
	eqList(t, "find report folders", strs(field(found, "results", "path")), []string{"/acme/share/bundle.zip//reports"})

	hits := mustCall(t, s, "*", "search_keyword", map[string]any{"query": notesPath + " Body part"})
	eqList(t, "hit paths", strs(field(hits, "results", "document_path")), []string{notesPath})
	eqList(t, "hit location", strs(field(hits, "results", "location")), []string{"acme > mail > launch.eml > notes.txt > Body"})
	// Scoped to the container's folder: its members, not the container.
	hits = mustCall(t, s, "*", "search_keyword", map[string]any{"query": "Body part", "parent_path_part_ids": []string{folder("mail/launch.eml")}})
	if len(hits["results"].([]any)) == 0 {
		t.Fatal("nothing found in the container's folder")
	}
}

// TestMemberFilePaths: a member's path is taken by file_path and filePath;
// a path with an empty member, a relative or blank segment or a control
// character is refused, saying why.
func TestMemberFilePaths(t *testing.T) {
	s := kbServer(t, memberFixture(), 0, nil, true)
	out := mustCall(t, s, "*", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": notesPath})
	eqList(t, "member chunks", strs(field(out, "data", "file_path")), []string{notesPath})
	out = mustCall(t, s, "*", "read_chunk_neighbors", map[string]any{"filePath": "/acme/" + q3Path, "chunkIndex": 0})
	eqList(t, "member neighbours", strs(field(out, "chunks", "filePath")), []string{"/acme/" + q3Path})

	for p, why := range map[string]string{
		"mail/launch.eml//":      `nothing follows "//"`,
		"mail/launch.eml///x":    "empty path segment",
		"mail/launch.eml//x//":   "member path: empty path segment",
		"mail/launch.eml//./x":   `relative path segment "."`,
		"mail/launch.eml// /x":   "blank path segment",
		"mail/launch.eml//x\x1b": "control",
		"docs/../etc/passwd":     `relative path segment ".."`,
		"docs\\guide.md":         "backslash",
	} {
		msg := mustFail(t, s, "*", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": p}, "is not a valid file path")
		if !strings.Contains(msg, why) || !strings.Contains(msg, `"mail/a.eml//notes.txt"`) {
			t.Errorf("file_path %q: %q does not say %q and what a member's path is", p, msg, why)
		}
	}
	mustFail(t, s, "*", "read_chunk_neighbors", map[string]any{"filePath": "/acme/mail/launch.eml//../x", "chunkIndex": 0}, "<container path>//<member path>")
}

// memberStates is one object's state, for object_status.
type memberStates struct{}

func (memberStates) Get(_ context.Context, project, key string) (*pipeline.ObjectState, error) {
	if key != "acme/mail/launch.eml" {
		return nil, nil
	}
	return &pipeline.ObjectState{Key: key, Project: project, State: pipeline.StateIndexed, Sequence: 1, UpdatedAt: time.Now()}, nil
}

// TestMemberObjectStatus: a member is no uploaded object; object_status
// names its container to ask about instead, and list_failures shows a
// failed member under its container's object key.
func TestMemberObjectStatus(t *testing.T) {
	f := memberFixture()
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	New(newKBReader(f.x), signer, slog.New(slog.DiscardHandler)).SetStrata(nil, nil, memberStates{}, nil).Register(s)

	msg := mustFail(t, s, "*", "object_status", map[string]any{"key": "acme/" + notesPath}, "not an uploaded object")
	if !strings.Contains(msg, "member of mail/launch.eml") || !strings.Contains(msg, `key "acme/mail/launch.eml"`) {
		t.Fatalf("object_status of a member: %q", msg)
	}
	msg = mustFail(t, s, "*", "object_status", map[string]any{"key": "acme@preview/" + q3Path}, "not an uploaded object")
	if !strings.Contains(msg, `key "acme@preview/share/bundle.zip"`) {
		t.Fatalf("object_status of a branch's member: %q", msg)
	}
	mustFail(t, s, "acme", "object_status", map[string]any{"key": "beta/" + notesPath}, `project not found: "beta"`)
	mustFail(t, s, "*", "object_status", map[string]any{"key": "acme/mail/launch.eml//"}, "key must be an object key")
	out := mustCall(t, s, "*", "object_status", map[string]any{"key": "acme/mail/launch.eml"})
	if out["state"] != pipeline.StateIndexed {
		t.Fatalf("object_status of the container %v", out)
	}

	out = mustCall(t, s, "*", "list_failures", map[string]any{"project_reference": "acme", "path_prefix": "mail/"})
	eqList(t, "failure paths", strs(field(out, "failures", "path")), []string{brokenPath})
	eqList(t, "failure keys", strs(field(out, "failures", "key")), []string{"acme/mail/launch.eml"})
}

// TestMemberPathHelpers: names along a member's path, list_files' scope
// hint and hybrid_search's resource links.
func TestMemberPathHelpers(t *testing.T) {
	eqList(t, "pathNames", pathNames(q3Path), []string{"share", "bundle.zip", "reports", "q3.docx"})
	eqList(t, "folderChain", folderChain("share/bundle.zip//reports"), []string{"share", "share/bundle.zip", "share/bundle.zip//reports"})
	if got := folderScopeHint([]fileEntry{{FilePath: "/acme/" + notesPath}}); got != "/acme/mail/launch.eml" {
		t.Errorf("scope hint after a member: %q", got)
	}
	if got := folderScopeHint([]fileEntry{{FilePath: "/acme/a.md"}}); got != "/acme" {
		t.Errorf("scope hint after a root file: %q", got)
	}
	links := resourceLinks([]Hit{{Project: "acme", DocumentPath: notesPath}}, []string{""})
	raw, err := json.Marshal(links)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(raw); len(links) != 1 || !strings.Contains(s, `"name":"notes.txt"`) || !strings.Contains(s, `"uri":"strata://acme/mail/launch.eml//notes.txt"`) {
		t.Errorf("resource links %s", raw)
	}
}
