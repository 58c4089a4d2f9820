package toolnotify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestNotificationsOverStreamableHTTP: through mcp-go's streamable HTTP
// transport, a failing or slow call's answer carries the warning in its SSE
// stream once the client asked for warnings (logging/setLevel on a session,
// or the per-request level of protocol 2026-07-28), and not before.
func TestNotificationsOverStreamableHTTP(t *testing.T) {
	s := server.NewMCPServer("t", "1", server.WithLogging(), server.WithToolCapabilities(false),
		server.WithToolHandlerMiddleware(Middleware(Config{Slow: 50 * time.Millisecond, OnSendError: func(tool string, err error) { t.Errorf("send %s: %v", tool, err) }})))
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("project \"nope\" not found"), nil
	})
	s.AddTool(mcp.NewTool("slow"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		time.Sleep(120 * time.Millisecond)
		return mcp.NewToolResultText("late"), nil
	})
	s.AddTool(mcp.NewTool("fast"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	defer srv.Close()
	url := srv.URL + "/mcp"

	// Protocol 2025-11-25: a session, and the level it sets.
	_, hdr := post(t, url, "", nil, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	session := hdr.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	if got := warnings(post(t, url, session, nil, "tools/call", map[string]any{"name": "fail"})); len(got) != 0 {
		t.Fatalf("warnings before the client asked for them (default level error): %v", got)
	}
	if msgs, _ := post(t, url, session, nil, "logging/setLevel", map[string]any{"level": "warning"}); len(msgs) != 1 || msgs[0]["error"] != nil {
		t.Fatalf("logging/setLevel: %v", msgs)
	}
	for tool, want := range map[string]string{"fail": `tool fail failed after`, "slow": `tool slow took`} {
		msgs, h := post(t, url, session, nil, "tools/call", map[string]any{"name": tool})
		got := warnings(msgs, h)
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Fatalf("%s: warnings %v, want one with %q: %v", tool, got, want, msgs)
		}
	}
	if got := warnings(post(t, url, session, nil, "tools/call", map[string]any{"name": "fast"})); len(got) != 0 {
		t.Fatalf("a fast successful call notified: %v", got)
	}
	if msgs, _ := post(t, url, session, nil, "logging/setLevel", map[string]any{"level": "error"}); len(msgs) != 1 || msgs[0]["error"] != nil {
		t.Fatalf("logging/setLevel error: %v", msgs)
	}
	if got := warnings(post(t, url, session, nil, "tools/call", map[string]any{"name": "fail"})); len(got) != 0 {
		t.Fatalf("warnings after the client raised its level to error: %v", got)
	}

	// Protocol 2026-07-28: no session; the request declares its level.
	modern := func(level string) map[string]any {
		m := map[string]any{mcp.MetaKeyProtocolVersion: mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientInfo: map[string]any{"name": "t", "version": "1"}, mcp.MetaKeyClientCapabilities: map[string]any{}}
		if level != "" {
			m[mcp.MetaKeyLogLevel] = level
		}
		return m
	}
	if got := warnings(post(t, url, "", modern("warning"), "tools/call", map[string]any{"name": "fail"})); len(got) != 1 {
		t.Fatalf("2026-07-28 call asking for warnings: %v", got)
	}
	if got := warnings(post(t, url, "", modern(""), "tools/call", map[string]any{"name": "fail"})); len(got) != 0 {
		t.Fatalf("2026-07-28 call that asked for no log messages got %v", got)
	}
}

// post sends one JSON-RPC request and returns every message of the answer
// (the JSON body, or each event of an SSE stream).
func post(t *testing.T, url, session string, meta map[string]any, method string, params map[string]any) ([]map[string]any, http.Header) {
	t.Helper()
	if meta != nil {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if meta != nil {
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
		req.Header.Set(mcp.HeaderMethod, method)
		if name, ok := params["name"].(string); ok {
			req.Header.Set(mcp.HeaderName, name)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s: %s", method, resp.Status, raw)
	}
	var msgs []map[string]any
	chunks := [][]byte{raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		chunks = nil
		for _, line := range strings.Split(string(raw), "\n") {
			if data, ok := strings.CutPrefix(line, "data:"); ok {
				chunks = append(chunks, []byte(strings.TrimSpace(data)))
			}
		}
	}
	for _, c := range chunks {
		var m map[string]any
		if err := json.Unmarshal(c, &m); err != nil {
			t.Fatalf("%s: message %q: %v", method, c, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, resp.Header
}

// warnings is the text of every warning log notification among msgs.
func warnings(msgs []map[string]any, _ http.Header) []string {
	var out []string
	for _, m := range msgs {
		if m["method"] != "notifications/message" {
			continue
		}
		p := m["params"].(map[string]any)
		if p["level"] == "warning" && p["logger"] == Logger {
			out = append(out, p["data"].(map[string]any)["message"].(string))
		}
	}
	return out
}
