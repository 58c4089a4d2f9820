package budget

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
)

// budgetServer is queryd's HTTP stack in small: API keys, mcp-go's
// streamable HTTP transport and the budget on one counted tool and one
// paging tool. The clock is the test's.
func budgetServer(t *testing.T, now func() time.Time) (url string) {
	t.Helper()
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false),
		server.WithToolHandlerMiddleware(Middleware(Config{Limit: 20, Warn: 4, Idle: 5 * time.Minute, Now: now,
			Applies: func(tool string) bool { return tool != "list_file_chunks" }}, &Memory{})))
	for _, name := range []string{"search_keyword", "list_file_chunks"} {
		s.AddTool(mcp.NewTool(name), answer)
	}
	keys, err := auth.ParseKeys("agent-key-0123456789=*")
	if err != nil {
		t.Fatal(err)
	}
	h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		if p, ok := auth.FromContext(r.Context()); ok {
			return auth.WithPrincipal(ctx, p)
		}
		return ctx
	}))
	srv := httptest.NewServer(keys.Middleware(h))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBudgetEveryProtocolVersion: a session-based client of each protocol
// version before 2026-07-28 and a sessionless 2026-07-28 client are each
// refused at call 21, and the paging tool is never counted.
func TestBudgetEveryProtocolVersion(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	url := budgetServer(t, clock)
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer agent-key-0123456789"}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = version
			init.Params.ClientInfo = mcp.Implementation{Name: "session-agent", Version: "1"}
			res, err := c.Initialize(ctx, init)
			if err != nil || res.ProtocolVersion != version {
				t.Fatalf("initialize %s: %v %+v", version, err, res)
			}
			for i := 1; i <= 21; i++ {
				r := toolCall(t, c, "search_keyword")
				if refused := r.IsError; refused != (i == 21) {
					t.Fatalf("%s call %d: refused=%v", version, i, refused)
				}
			}
			for i := range 30 {
				if r := toolCall(t, c, "list_file_chunks"); r.IsError {
					t.Fatalf("%s paging call %d refused", version, i)
				}
			}
		})
	}
	t.Run("2026-07-28", func(t *testing.T) {
		for i := 1; i <= 21; i++ {
			text, isErr := rawCall(t, url, "search_keyword", "raw-agent")
			if isErr != (i == 21) {
				t.Fatalf("call %d: refused=%v %q", i, isErr, text)
			}
		}
		for i := range 30 {
			if text, isErr := rawCall(t, url, "list_file_chunks", "raw-agent"); isErr {
				t.Fatalf("paging call %d refused: %q", i, text)
			}
		}
		if _, isErr := rawCall(t, url, "search_keyword", "another-agent"); isErr {
			t.Fatal("another client name under the same key is another run")
		}
		mu.Lock()
		now = now.Add(6 * time.Minute)
		mu.Unlock()
		if text, isErr := rawCall(t, url, "search_keyword", "raw-agent"); isErr {
			t.Fatalf("after the idle gap a new run starts: %q", text)
		}
	})
}

func toolCall(t *testing.T, c *client.Client, name string) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// rawCall is a protocol 2026-07-28 tools/call as plain HTTP: no initialize,
// no session; the version and client in _meta and the method and name in
// headers.
func rawCall(t *testing.T, url, tool, clientName string) (string, bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": map[string]any{},
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    "2026-07-28",
			mcp.MetaKeyClientInfo:         map[string]any{"name": clientName, "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		}}})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer agent-key-0123456789")
	req.Header.Set(mcp.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("a 2026-07-28 answer carries a session id")
	}
	var raw []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				raw = []byte(d)
			}
		}
	} else {
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		raw = buf.Bytes()
	}
	var out struct {
		Result *struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Result == nil {
		t.Fatalf("HTTP %d: %s (%v, error %v)", resp.StatusCode, raw, err, out.Error)
	}
	var text []string
	for _, c := range out.Result.Content {
		text = append(text, c.Text)
	}
	return fmt.Sprint(strings.Join(text, "\n")), out.Result.IsError
}
