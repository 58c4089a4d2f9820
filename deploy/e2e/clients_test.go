package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/testservers"
)

// idleGap is queryd's -tool-budget-idle in these tests: short, so a new run
// can be shown without waiting the default 5 minutes.
const idleGap = 3 * time.Second

const allowedOrigin = "http://inspector.example:6274"

// expectBudget checks one run of 21 counted calls: 1-15 plain, 16-20 warn
// (4 left after call 16 .. the last), 21 refused.
func expectBudget(t *testing.T, calls []tsCall) {
	t.Helper()
	if len(calls) != 21 {
		t.Fatalf("%d calls", len(calls))
	}
	for i, c := range calls {
		n := i + 1
		warned := strings.Contains(c.Text, "Wrap up soon") || strings.Contains(c.Text, "Synthesize your answer now")
		switch {
		case n <= 15 && (c.IsError || warned || !strings.Contains(c.Text, "clientword")):
			t.Fatalf("call %d: %+v", n, c)
		case n > 15 && n <= 20 && (c.IsError || !warned):
			t.Fatalf("call %d must warn: %+v", n, c)
		case n == 21 && (!c.IsError || !strings.Contains(c.Text, "exhausted")):
			t.Fatalf("call 21 must be refused: %+v", c)
		}
	}
}

// raw2026Method sends one request of protocol 2026-07-28 with its
// Mcp-Method and Mcp-Name headers (name "" when the method names nothing).
func raw2026Method(t *testing.T, url, key, method, name, params string) string {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw-2026-resources","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	params = strings.TrimSuffix(strings.TrimSpace(params), "}")
	if params != "{" {
		params += ","
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s%s}}`, method, params, meta)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestEveryMCPClient: what clients of today see, each through the official
// TypeScript SDK or raw HTTP: the 20-call budget for every protocol version
// and stdio, a new run after the idle gap, paging never counted, resources,
// CORS for browser clients, and OAuth discovery.
func TestEveryMCPClient(t *testing.T) {
	tsClient(t) // fail first, and clearly, without node/npm
	st := upWith(t, t.TempDir(), nil, false, map[string][]string{"queryd": {
		"STRATA_TOOL_BUDGET_IDLE=" + idleGap.String(), "STRATA_CORS_ORIGINS=" + allowedOrigin, "STRATA_RESOURCES_PAGE_SIZE=2"}})
	t.Cleanup(func() {
		st.Stop(15 * time.Second)
		dumpLogsOnFailure(t, st)
	})
	h := harnessFor(t, st)
	var long strings.Builder
	for i := range 120 {
		fmt.Fprintf(&long, "## Part %d\n\nclientword paragraph %d with enough words to fill a chunk of its own, repeated: %s\n\n", i, i, strings.Repeat("lorem ipsum ", 40))
	}
	h.put("acme/guide.md", "# Guide\n\nThe clientword guide: read me whole.\n")
	h.put("acme/docs/a.md", "# A\n\nclientword a\n")
	h.put("acme/docs/b.md", "# B\n\nclientword b\n")
	h.put("acme/long.md", long.String())
	h.settle()
	url, key := st.Env.MCPURL, st.Env.APIKey
	auth := map[string]string{"Authorization": "Bearer " + key}
	search := map[string]any{"op": "call", "name": "search_keyword", "arguments": map[string]any{"query": "clientword"}, "repeat": 21}
	page := map[string]any{"op": "call", "name": "list_file_chunks", "arguments": map[string]any{"project_reference": "acme", "file_path": "long.md", "limit": 1}, "repeat": 30}

	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run("typescript-sdk-http-"+version, func(t *testing.T) {
			t.Parallel()
			r := runTS(t, tsPlan{URL: url, Headers: auth, ProtocolVersion: version, Steps: []map[string]any{search, page,
				{"op": "sleep", "ms": (idleGap + time.Second).Milliseconds()},
				{"op": "call", "name": "search_keyword", "arguments": map[string]any{"query": "clientword"}}}})
			if r.ConnectError != "" || r.ProtocolVersion != version || r.SessionID == "" {
				t.Fatalf("connect: %+v", r)
			}
			expectBudget(t, r.calls(t, 0))
			for i, c := range r.calls(t, 1) {
				if c.IsError || strings.Contains(c.Text, "Tool budget") {
					t.Fatalf("paging call %d is counted: %+v", i+1, c)
				}
			}
			if c := r.calls(t, 3)[0]; c.IsError || strings.Contains(c.Text, "Tool budget") {
				t.Fatalf("after the idle gap the same session starts a new run: %+v", c)
			}
		})
	}

	t.Run("typescript-sdk-stdio", func(t *testing.T) {
		t.Parallel()
		r := runTS(t, tsPlan{Transport: "stdio", Command: filepath.Join(st.BinDir(), "queryd"), Env: map[string]string{
			"STRATA_TRANSPORT": "stdio", "STRATA_LOG_FORMAT": "text", "STRATA_NATS_URL": st.Env.NATSURL,
			"STRATA_WEAVIATE_HOST": st.Env.WeaviateHost, "STRATA_WEAVIATE_API_KEY": testservers.LocalWeaviateReader,
			"STRATA_API_KEYS": "stdio-key-0123456789=acme", "STRATA_STDIO_API_KEY": "stdio-key-0123456789",
			"STRATA_CURSOR_SECRET": "stdio-cursor-secret-0123", "STRATA_EMBEDDING_PROVIDER": "none",
		}, Steps: []map[string]any{search, page}})
		if r.ConnectError != "" {
			t.Fatalf("connect over stdio: %s", r.ConnectError)
		}
		expectBudget(t, r.calls(t, 0))
		for i, c := range r.calls(t, 1) {
			if c.IsError {
				t.Fatalf("stdio paging call %d: %+v", i+1, c)
			}
		}
	})

	t.Run("raw-2026-07-28", func(t *testing.T) {
		t.Parallel()
		var calls []tsCall
		for range 21 {
			body := raw2026(t, url, key, "search_keyword", `{"query":"clientword"}`, "raw-2026-agent")
			calls = append(calls, tsCall{IsError: strings.Contains(body, `"isError":true`), Text: body})
		}
		expectBudget(t, calls)
		for i := range 30 {
			body := raw2026(t, url, key, "list_file_chunks", `{"project_reference":"acme","file_path":"long.md","limit":1}`, "raw-2026-agent")
			if strings.Contains(body, `"isError":true`) || !strings.Contains(body, "clientword") {
				t.Fatalf("paging call %d past the budget: %s", i+1, body)
			}
		}
		if body := raw2026(t, url, key, "search_keyword", `{"query":"clientword"}`, "raw-2026-other"); strings.Contains(body, "exhausted") {
			t.Fatalf("another client name is another run: %s", body)
		}
		time.Sleep(idleGap + time.Second) // deliberately idle past the configured gap: the run ages out
		if body := raw2026(t, url, key, "search_keyword", `{"query":"clientword"}`, "raw-2026-agent"); strings.Contains(body, `"isError":true`) || strings.Contains(body, "Tool budget") {
			t.Fatalf("after the idle gap a new run starts: %s", body)
		}
		// Resources without a session too.
		list := raw2026Method(t, url, key, "resources/list", "", `{}`)
		if !strings.Contains(list, `"uri":"strata://acme/docs/a.md"`) || !strings.Contains(list, `"nextCursor"`) {
			t.Fatalf("resources/list on 2026-07-28: %s", list)
		}
		read := raw2026Method(t, url, key, "resources/read", "strata://acme/guide.md", `{"uri":"strata://acme/guide.md"}`)
		if !strings.Contains(read, "The clientword guide: read me whole.") {
			t.Fatalf("resources/read on 2026-07-28: %s", read)
		}
	})

	t.Run("resources", func(t *testing.T) {
		t.Parallel()
		r := runTS(t, tsPlan{URL: url, Headers: auth, Steps: []map[string]any{{"op": "listResources"}, {"op": "listTemplates"},
			{"op": "readResource", "uri": "strata://acme/guide.md"}, {"op": "readResource", "uri": "strata://acme/nope.md"},
			{"op": "readResource", "uri": "strata://acme/long.md"}}})
		var list struct {
			URIs  []string `json:"uris"`
			Pages int      `json:"pages"`
		}
		r.step(t, 0, &list)
		want := []string{"strata://acme/docs/a.md", "strata://acme/docs/b.md", "strata://acme/guide.md", "strata://acme/long.md"}
		if !slices.Equal(list.URIs, want) || list.Pages < 2 {
			t.Fatalf("resources %v in %d pages, want %v in pages of 2", list.URIs, list.Pages, want)
		}
		var tmpl struct{ Templates []string }
		r.step(t, 1, &tmpl)
		if !slices.Contains(tmpl.Templates, "strata://{project}/{+path}") {
			t.Fatalf("templates %v", tmpl.Templates)
		}
		var read struct{ Text, Error string }
		r.step(t, 2, &read)
		if !strings.Contains(read.Text, "The clientword guide: read me whole.") {
			t.Fatalf("read guide: %+v", read)
		}
		r.step(t, 3, &read)
		if !strings.Contains(read.Error, "not found") {
			t.Fatalf("read of a missing file: %+v", read)
		}
		read = struct{ Text, Error string }{}
		r.step(t, 4, &read)
		if !strings.Contains(read.Text, "## Part 0") || !strings.Contains(read.Text, "## Part 119") || strings.Count(read.Text, "clientword paragraph 57 ") != 1 {
			t.Fatalf("long file read back whole, each part once: %d bytes, error %q", len(read.Text), read.Error)
		}
	})

	t.Run("browser-cors", func(t *testing.T) {
		t.Parallel()
		ok := runTS(t, tsPlan{URL: url, Headers: map[string]string{"Authorization": "Bearer " + key, "Origin": allowedOrigin},
			Steps: []map[string]any{{"op": "listTools"}}})
		if ok.ConnectError != "" || ok.SessionID == "" {
			t.Fatalf("allowed origin: %+v", ok)
		}
		refused := runTS(t, tsPlan{URL: url, Headers: map[string]string{"Authorization": "Bearer " + key, "Origin": "https://evil.example"}})
		if !strings.Contains(refused.ConnectError, "Forbidden: origin https://evil.example is not allowed") {
			t.Fatalf("other origin must get 403: %+v", refused)
		}
		for _, c := range []struct {
			origin string
			code   int
		}{{allowedOrigin, http.StatusNoContent}, {"https://evil.example", http.StatusForbidden}} {
			req, _ := http.NewRequest(http.MethodOptions, url, nil)
			req.Header.Set("Origin", c.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version, mcp-session-id")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Fatalf("preflight from %s: %d, want %d", c.origin, resp.StatusCode, c.code)
			}
			if c.code == http.StatusNoContent && (resp.Header.Get("Access-Control-Allow-Origin") != c.origin ||
				!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") ||
				!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "authorization")) {
				t.Fatalf("preflight headers: %v", resp.Header)
			}
		}
	})

	t.Run("oauth-discovery", func(t *testing.T) {
		t.Parallel()
		r := runTS(t, tsPlan{URL: url, Steps: []map[string]any{{"op": "discover"}}})
		var d struct {
			Status              int
			WWWAuthenticate     string
			ResourceMetadataURL string
			Challenged          map[string]any
			WellKnown           map[string]any
		}
		r.step(t, 0, &d)
		base := strings.TrimSuffix(url, "/mcp")
		if d.Status != 401 || d.ResourceMetadataURL != base+"/.well-known/oauth-protected-resource/mcp" {
			t.Fatalf("401 challenge: %+v", d)
		}
		if d.Challenged["resource"] != url || d.WellKnown["resource"] != url {
			t.Fatalf("metadata names the endpoint: %+v", d)
		}
	})
}
