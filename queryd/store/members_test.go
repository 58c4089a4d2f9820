package store_test

// Members (issue 52): a file inside a container (an e-mail's attachment, a
// ZIP's file) is a document of its own at <container path>//<member path>.
// The tools and resources, over a real weaviate-server holding a member's
// objects as the indexer writes any file's (store.WriteMemberFixture),
// treat it like any other file.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/resources"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/queryd/tools"
	"github.com/strata-kb/strata/shared/ids"
)

const (
	memberProject = "members"
	notesPath     = "mail/launch.eml//notes.txt"
	q3Path        = "share/bundle.zip//reports/q3.docx"
)

// memberServer serves the tools (Strata's own too) and the resources over
// the member fixture; call runs a request as a key of memberProject.
func memberServer(t *testing.T) func(method string, params any) (json.RawMessage, *mcp.JSONRPCErrorDetails) {
	t.Helper()
	s := store.WriteMemberFixture(t, memberProject)
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	res := resources.New(s, signer, log)
	srv := server.NewMCPServer("strata", "test", append(res.Options(), server.WithToolCapabilities(false))...)
	res.Register(srv)
	tools.New(s, signer, log).SetStrata(s, s, nil, nil).Register(srv)
	keys, err := auth.ParseKeys("member-key-0123456789=" + memberProject)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := keys.Lookup("member-key-0123456789")
	ctx := auth.WithPrincipal(context.Background(), p)
	return func(method string, params any) (json.RawMessage, *mcp.JSONRPCErrorDetails) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		out, _ := json.Marshal(srv.HandleMessage(ctx, body))
		var resp struct {
			Result json.RawMessage          `json:"result"`
			Error  *mcp.JSONRPCErrorDetails `json:"error"`
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Result, resp.Error
	}
}

// toolCall calls a tool: its structured content, or the error it answered.
func toolCall(t *testing.T, call func(string, any) (json.RawMessage, *mcp.JSONRPCErrorDetails), name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	raw, rerr := call("tools/call", map[string]any{"name": name, "arguments": args})
	if rerr != nil {
		return nil, rerr.Message
	}
	var res struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		return nil, res.Content[0].Text
	}
	return res.StructuredContent, ""
}

func mustTool(t *testing.T, call func(string, any) (json.RawMessage, *mcp.JSONRPCErrorDetails), name string, args map[string]any) map[string]any {
	t.Helper()
	out, errText := toolCall(t, call, name, args)
	if errText != "" {
		t.Fatalf("%s %v: %s", name, args, errText)
	}
	return out
}

// listed is one string field of each object of out[list].
func listed(out map[string]any, list, key string) []string {
	var vals []string
	l, _ := out[list].([]any)
	for _, v := range l {
		vals = append(vals, fmt.Sprint(v.(map[string]any)[key]))
	}
	return vals
}

func memberFV(path string) string {
	return ids.FileVersion(ids.File(memberProject, "", path), "e", "s")
}

// TestMemberIsReadLikeAFile: list_file_chunks lists a member's chunks by its
// path, get_file_chunk and read_chunk_neighbors read them, and read reads
// the member's document node, named notes.txt in folder mail/launch.eml.
func TestMemberIsReadLikeAFile(t *testing.T) {
	call := memberServer(t)
	fv := memberFV(notesPath)

	out := mustTool(t, call, "list_file_chunks", map[string]any{"project_reference": memberProject, "file_path": notesPath})
	if got := listed(out, "data", "id"); !slices.Equal(got, []string{ids.Chunk(fv, 0), ids.Chunk(fv, 1)}) {
		t.Fatalf("list_file_chunks of %s: chunks %v", notesPath, got)
	}
	if got := listed(out, "data", "file_path"); !slices.Equal(got, []string{notesPath, notesPath}) {
		t.Fatalf("list_file_chunks: file paths %v", got)
	}
	if got := listed(out, "data", "file_id"); got[0] != ids.File(memberProject, "", notesPath) {
		t.Fatalf("list_file_chunks: file id %v", got)
	}
	// The leading "/" list_files' paths have is taken too; the container is a file of its own.
	out = mustTool(t, call, "list_file_chunks", map[string]any{"project_reference": memberProject, "file_path": "/mail/launch.eml"})
	if got := listed(out, "data", "content"); len(got) != 1 || !strings.Contains(got[0], "launchlemur") {
		t.Fatalf("list_file_chunks of the container: %v", got)
	}

	chunk := mustTool(t, call, "get_file_chunk", map[string]any{"project_reference": memberProject, "chunk_id": ids.Chunk(fv, 1)})["chunk"].(map[string]any)
	if chunk["file_path"] != notesPath || !strings.Contains(chunk["content"].(string), "notesokapi text number 1") {
		t.Fatalf("get_file_chunk: %v", chunk)
	}

	out = mustTool(t, call, "read_chunk_neighbors", map[string]any{"filePath": "/" + memberProject + "/" + notesPath, "chunkIndex": 1, "before": 1, "after": 0})
	if got := listed(out, "chunks", "text"); len(got) != 2 || !strings.Contains(got[0], "notesokapi text number 0") {
		t.Fatalf("read_chunk_neighbors: %v", got)
	}

	doc := mustTool(t, call, "read", map[string]any{"path_part_id": ids.File(memberProject, "", notesPath)})
	if doc["type"] != "DOCUMENT" || doc["name"] != "notes.txt" || doc["path"] != "/members/mail/launch.eml//notes.txt" ||
		doc["breadcrumb"] != "members > mail > launch.eml > notes.txt" || doc["mode"] != "inline" {
		t.Fatalf("read of the member: %v", doc)
	}
	if got := listed(doc, "chunks", "content"); len(got) != 2 || !strings.Contains(got[1], "notesokapi") {
		t.Fatalf("read of the member: chunks %v", got)
	}
	info := mustTool(t, call, "get_info", map[string]any{"path_part_id": ids.File(memberProject, "", q3Path)})
	if info["name"] != "q3.docx" || info["parent_path_part_id"] != ids.Folder(memberProject, "", "share/bundle.zip//reports") ||
		info["breadcrumb"] != "members > share > bundle.zip > reports > q3.docx" {
		t.Fatalf("get_info of a member in a folder of its container: %v", info)
	}
}

// TestMemberFolders: a member is in the folder of its container's path;
// the container is listed as a document in its own folder and, holding
// members, as a folder too (folders first).
func TestMemberFolders(t *testing.T) {
	call := memberServer(t)
	folder := func(path string) string { return ids.Folder(memberProject, "", path) }

	mail := mustTool(t, call, "list_contents", map[string]any{"path_part_id": folder("mail")})
	if got := listed(mail, "items", "name"); !slices.Equal(got, []string{"launch.eml", "launch.eml"}) {
		t.Fatalf("mail: %v", got)
	}
	if got := listed(mail, "items", "type"); !slices.Equal(got, []string{"FOLDER", "DOCUMENT"}) {
		t.Fatalf("mail: types %v", got)
	}
	if got := listed(mail, "items", "path_part_id"); !slices.Equal(got, []string{folder("mail/launch.eml"), ids.File(memberProject, "", "mail/launch.eml")}) {
		t.Fatalf("mail: ids %v", got)
	}
	eml := mustTool(t, call, "list_contents", map[string]any{"path_part_id": folder("mail/launch.eml")})
	if got := listed(eml, "items", "name"); !slices.Equal(got, []string{"notes.txt"}) {
		t.Fatalf("mail/launch.eml: %v", got)
	}
	item := eml["items"].([]any)[0].(map[string]any)
	if item["path"] != "/members/"+notesPath || item["parent_path_part_id"] != folder("mail/launch.eml") ||
		eml["breadcrumb"] != "members > mail > launch.eml" || eml["name"] != "launch.eml" || eml["path"] != "/members/mail/launch.eml" {
		t.Fatalf("mail/launch.eml: %v", eml)
	}
	zip := mustTool(t, call, "list_contents", map[string]any{"path_part_id": folder("share/bundle.zip")})
	if got := listed(zip, "items", "path"); !slices.Equal(got, []string{"/members/share/bundle.zip//reports"}) {
		t.Fatalf("share/bundle.zip: %v", got)
	}
	reports := mustTool(t, call, "list_contents", map[string]any{"path_part_id": folder("share/bundle.zip//reports")})
	if got := listed(reports, "items", "name"); !slices.Equal(got, []string{"q3.docx"}) || reports["breadcrumb"] != "members > share > bundle.zip > reports" {
		t.Fatalf("share/bundle.zip//reports: %v", reports)
	}

	// Searching a container's folder finds its members, not the container's own text.
	hits := mustTool(t, call, "search_keyword", map[string]any{"query": "notesokapi launchlemur", "parent_path_part_ids": []string{folder("mail/launch.eml")}})
	if got := listed(hits, "results", "document_path"); len(got) == 0 || slices.ContainsFunc(got, func(p string) bool { return p != notesPath }) {
		t.Fatalf("search in folder mail/launch.eml: %v", got)
	}
	if got := listed(hits, "results", "location"); !strings.HasPrefix(got[0], "members > mail > launch.eml > notes.txt") {
		t.Fatalf("search hit location %v", got)
	}

	files := mustTool(t, call, "list_files", map[string]any{"scope": "/members/mail/launch.eml"})
	if got := listed(files, "files", "filePath"); !slices.Equal(got, []string{"/members/mail/launch.eml", "/members/" + notesPath}) {
		t.Fatalf("list_files in the container's scope: %v", got)
	}
	if got := listed(files, "files", "path"); got[1] != notesPath {
		t.Fatalf("list_files: paths %v", got)
	}
}

// TestMemberChanges: list_changes lists a member like a file, committed at
// its container's sequence.
func TestMemberChanges(t *testing.T) {
	call := memberServer(t)
	out := mustTool(t, call, "list_changes", map[string]any{"project_reference": memberProject, "since_sequence": 1})
	want := []string{"mail/launch.eml", notesPath, "share/bundle.zip", q3Path}
	if got := listed(out, "changes", "path"); !slices.Equal(got, want) {
		t.Fatalf("changes since 1: %v, want %v", got, want)
	}
	for _, c := range out["changes"].([]any) {
		c := c.(map[string]any)
		if c["change"] != "added" || c["sequence"] != 2.0 || c["file_id"] != ids.File(memberProject, "", c["path"].(string)) {
			t.Fatalf("change %v", c)
		}
	}
}

// TestMemberResource: a member is a resource, strata://<project>/<member
// path> with its "//", listed and read.
func TestMemberResource(t *testing.T) {
	call := memberServer(t)
	uri := "strata://members/mail/launch.eml//notes.txt"
	raw, rerr := call("resources/list", map[string]any{})
	if rerr != nil {
		t.Fatal(rerr.Message)
	}
	var l mcp.ListResourcesResult
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range l.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, uri) || !slices.Contains(uris, "strata://members/share/bundle.zip//reports/q3.docx") {
		t.Fatalf("resources %v", uris)
	}
	raw, rerr = call("resources/read", map[string]any{"uri": uri})
	if rerr != nil {
		t.Fatal(rerr.Message)
	}
	var r struct {
		Contents []struct{ URI, Text string }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Contents) != 1 || r.Contents[0].URI != uri || r.Contents[0].Text != "notesokapi text number 0.\n\nnotesokapi text number 1." {
		t.Fatalf("resources/read %s: %s", uri, raw)
	}
}

// TestMemberPathArguments: a file_path naming a member is taken; one with
// an empty member, a relative segment or a control character is refused,
// saying why and what a member's path looks like.
func TestMemberPathArguments(t *testing.T) {
	call := memberServer(t)
	args := func(p string) map[string]any {
		return map[string]any{"project_reference": memberProject, "file_path": p}
	}
	mustTool(t, call, "list_file_chunks", args(q3Path))
	if _, errText := toolCall(t, call, "list_file_chunks", args("mail/launch.eml//nope.txt")); !strings.Contains(errText, "file not found") {
		t.Fatalf("a missing member: %q", errText)
	}
	for p, why := range map[string]string{
		"mail/launch.eml//":        `nothing follows "//"`,
		"mail/launch.eml///x":      "empty path segment",
		"mail/launch.eml//../etc":  `relative path segment ".."`,
		"mail/launch.eml//a\x07.b": "control",
		"mail/launch.eml// /x":     "blank path segment",
		"../launch.eml//x":         `relative path segment ".."`,
	} {
		_, errText := toolCall(t, call, "list_file_chunks", args(p))
		if !strings.Contains(errText, "is not a valid file path") || !strings.Contains(errText, why) || !strings.Contains(errText, "<container path>//<member path>") {
			t.Errorf("file_path %q: %q", p, errText)
		}
	}
	if _, errText := toolCall(t, call, "read_chunk_neighbors", map[string]any{"filePath": "/members/mail/launch.eml//", "chunkIndex": 0}); !strings.Contains(errText, "<member path>") {
		t.Errorf("read_chunk_neighbors with an empty member: %q", errText)
	}
	if _, rerr := call("resources/read", map[string]any{"uri": "strata://members/mail/launch.eml//..%2Fintro.md"}); rerr == nil || !strings.Contains(rerr.Message, "not a file's path") {
		t.Errorf("resources/read of a relative member path: %+v", rerr)
	}
}
