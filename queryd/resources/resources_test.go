package resources

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
)

// fake is an index of three projects; the key reads two of them.
type fake map[string][]string

func (f fake) Projects(context.Context) ([]string, error) {
	var out []string
	for p := range f {
		out = append(out, p)
	}
	return out, nil
}

func (f fake) ResourceDocuments(_ context.Context, project, after string, limit int) ([]store.Document, error) {
	paths := slices.Sorted(slices.Values(f[project]))
	var out []store.Document
	for _, p := range paths {
		if p > after && len(out) < limit {
			out = append(out, store.Document{FilePath: p, Status: "indexed"})
		}
	}
	return out, nil
}

func (f fake) FileText(_ context.Context, project, path string) (*store.Document, string, error) {
	if !slices.Contains(f[project], path) {
		return nil, "", nil
	}
	return &store.Document{FilePath: path, Status: "indexed"}, "text of " + project + "/" + path, nil
}

func setup(t *testing.T) (*server.MCPServer, context.Context) {
	t.Helper()
	signer, _ := cursor.NewSigner("0123456789abcdef")
	r := New(fake{"acme": {"docs/b.md", "a.md", "docs/my guide.md"}, "beta": {"x.txt", "y.txt"}, "zeta": {"secret.md"}}, signer, slog.Default()).SetPageSize(2)
	s := server.NewMCPServer("t", "1", r.Options()...)
	r.Register(s)
	keys, err := auth.ParseKeys("key-0123456789abcdef=acme,beta")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := keys.Lookup("key-0123456789abcdef")
	return s, auth.WithPrincipal(context.Background(), p)
}

func rpc(t *testing.T, s *server.MCPServer, ctx context.Context, method string, params any) (json.RawMessage, *mcp.JSONRPCErrorDetails) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	out, _ := json.Marshal(s.HandleMessage(ctx, body))
	var resp struct {
		Result json.RawMessage          `json:"result"`
		Error  *mcp.JSONRPCErrorDetails `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Result, resp.Error
}

func TestListPagesEveryReadableFile(t *testing.T) {
	s, ctx := setup(t)
	var uris []string
	cur := ""
	for pages := 1; ; pages++ {
		params := map[string]any{}
		if cur != "" {
			params["cursor"] = cur
		}
		res, rerr := rpc(t, s, ctx, "resources/list", params)
		if rerr != nil {
			t.Fatalf("page %d: %+v", pages, rerr)
		}
		var l mcp.ListResourcesResult
		if err := json.Unmarshal(res, &l); err != nil {
			t.Fatal(err)
		}
		if len(l.Resources) > 2 {
			t.Fatalf("page of %d", len(l.Resources))
		}
		for _, r := range l.Resources {
			uris = append(uris, r.URI)
		}
		if cur = string(l.NextCursor); cur == "" {
			break
		}
		if pages > 10 {
			t.Fatal("no end")
		}
	}
	want := []string{"strata://acme/a.md", "strata://acme/docs/b.md", "strata://acme/docs/my%20guide.md", "strata://beta/x.txt", "strata://beta/y.txt"}
	if !slices.Equal(uris, want) {
		t.Fatalf("listed %v, want %v", uris, want)
	}
	if _, rerr := rpc(t, s, ctx, "resources/list", map[string]any{"cursor": "forged.cursor"}); rerr == nil || rerr.Code != mcp.INVALID_PARAMS {
		t.Fatalf("a forged cursor: %+v", rerr)
	}
}

func TestReadAndTemplate(t *testing.T) {
	s, ctx := setup(t)
	res, rerr := rpc(t, s, ctx, "resources/read", map[string]any{"uri": "strata://acme/docs/my%20guide.md"})
	if rerr != nil || !strings.Contains(string(res), "text of acme/docs/my guide.md") {
		t.Fatalf("%s %+v", res, rerr)
	}
	for _, uri := range []string{"strata://zeta/secret.md", "strata://acme/nope.md"} {
		if _, rerr := rpc(t, s, ctx, "resources/read", map[string]any{"uri": uri}); rerr == nil || !strings.Contains(rerr.Message, "not found") {
			t.Fatalf("%s: %+v", uri, rerr)
		}
	}
	res, rerr = rpc(t, s, ctx, "resources/templates/list", map[string]any{})
	if rerr != nil || !strings.Contains(string(res), Template) {
		t.Fatalf("%s %+v", res, rerr)
	}
}

// TestMemberResources: a member (a file inside another,
// "mail/launch.eml//notes.txt") is the resource of its path with the "//"
// kept, listed and read; a URI whose path is no file's, such as an empty or
// relative member path, is refused before the index is asked.
func TestMemberResources(t *testing.T) {
	signer, _ := cursor.NewSigner("0123456789abcdef")
	r := New(fake{"acme": {"mail/launch.eml", "mail/launch.eml//notes.txt", "b.zip//reports/q3 plan.docx"}}, signer, slog.Default())
	s := server.NewMCPServer("t", "1", r.Options()...)
	r.Register(s)
	keys, err := auth.ParseKeys("key-0123456789abcdef=acme")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := keys.Lookup("key-0123456789abcdef")
	ctx := auth.WithPrincipal(context.Background(), p)

	if got := URI("acme", "mail/launch.eml//notes.txt"); got != "strata://acme/mail/launch.eml//notes.txt" {
		t.Fatalf("URI %q", got)
	}
	res, rerr := rpc(t, s, ctx, "resources/list", map[string]any{})
	if rerr != nil {
		t.Fatal(rerr.Message)
	}
	var l mcp.ListResourcesResult
	if err := json.Unmarshal(res, &l); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range l.Resources {
		uris = append(uris, r.URI)
	}
	want := []string{"strata://acme/b.zip//reports/q3%20plan.docx", "strata://acme/mail/launch.eml", "strata://acme/mail/launch.eml//notes.txt"}
	if !slices.Equal(uris, want) {
		t.Fatalf("listed %v, want %v", uris, want)
	}
	for _, uri := range want {
		project, path, err := parseURI(uri)
		if err != nil || project != "acme" || URI(project, path) != uri {
			t.Fatalf("%s parses as %q %q %v", uri, project, path, err)
		}
	}
	res, rerr = rpc(t, s, ctx, "resources/read", map[string]any{"uri": "strata://acme/mail/launch.eml//notes.txt"})
	if rerr != nil || !strings.Contains(string(res), "text of acme/mail/launch.eml//notes.txt") {
		t.Fatalf("%s %+v", res, rerr)
	}
	for _, uri := range []string{"strata://acme/mail/launch.eml//", "strata://acme/mail/launch.eml//..%2Fsecret.md",
		"strata://acme/mail/launch.eml///notes.txt", "strata://acme/mail/launch.eml//a%07b"} {
		if _, rerr := rpc(t, s, ctx, "resources/read", map[string]any{"uri": uri}); rerr == nil || !strings.Contains(rerr.Message, "not a file's path") {
			t.Errorf("%s: %+v", uri, rerr)
		}
	}
}
