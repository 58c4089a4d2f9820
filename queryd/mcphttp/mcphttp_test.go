package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// testServer is an MCP server with a no-op tool, a tool that warns the
// client (a log notification) before answering, a tool with an x-mcp-header
// parameter and a tool that fails.
func testServer() *server.MCPServer {
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false), server.WithLogging(), server.WithRecovery())
	s.AddTool(mcp.NewToolWithRawSchema("noop", "", []byte(`{"type":"object"}`)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok <&>"), nil
	})
	s.AddTool(mcp.NewToolWithRawSchema("warn", "", []byte(`{"type":"object"}`)), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, "test", map[string]any{"message": "careful"})
		if err := server.ServerFromContext(ctx).SendLogMessageToClient(ctx, n); err != nil {
			return nil, err
		}
		return mcp.NewToolResultText("warned"), nil
	})
	s.AddTool(mcp.NewToolWithRawSchema("regional", "", []byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("regional"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("fails", "", []byte(`{"type":"object"}`)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("broken")
	})
	return s
}

// handlers returns mcp-go's StreamableHTTPServer and a Handler, each on its
// own testServer, and a count of the calls the Handler's fast path served.
func handlers(t *testing.T) (plain http.Handler, fast *Handler, served *atomic.Int64) {
	t.Helper()
	fast = New(testServer(), nil)
	served = &atomic.Int64{}
	fast.onServe = func() { served.Add(1) }
	return server.NewStreamableHTTPServer(testServer()), fast, served
}

const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

func call2026(tool, extraMeta string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"region":"eu"},` +
		strings.Replace(meta2026, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{}`+extraMeta, 1) + `}}`
}

func headers2026(tool string) map[string]string {
	return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

type answer struct {
	status      int
	contentType string
	body        string
}

// sameAs reports whether a (the Handler's) is b (mcp-go's). mcp-go 1.2.1
// drops a notification its forwarder takes off the queue just as the call
// returns (see toolnotify.awaitForwarded); the Handler does not: an event
// stream may hold notifications mcp-go's lacks, the rest being the same.
func (a answer) sameAs(b answer) bool {
	if a == b {
		return true
	}
	if a.status != b.status || a.contentType != b.contentType || a.contentType != "text/event-stream" {
		return false
	}
	ours, theirs := strings.SplitAfter(a.body, "\n\n"), strings.SplitAfter(b.body, "\n\n")
	for _, e := range ours {
		if len(theirs) > 0 && e == theirs[0] {
			theirs = theirs[1:]
		} else if !strings.Contains(e, `"method":"notifications/`) {
			return false
		}
	}
	return len(theirs) == 0
}

// do sends one request straight to h, on a loopback connection.
func do(h http.Handler, method, body string, header map[string]string, host string) answer {
	req := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
	req.Host = host
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8090}))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()}
}

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range h {
		out[a] = b
	}
	out[k] = v
	return out
}

// TestSameAnswersAsMCPGo: every request, served or refused, gets from the
// Handler what mcp-go's StreamableHTTPServer answers; the valid 2026-07-28
// tool calls are served on the fast path, everything else by mcp-go.
func TestSameAnswersAsMCPGo(t *testing.T) {
	plain, fast, served := handlers(t)
	ok := headers2026("noop")
	cases := []struct {
		name   string
		method string
		body   string
		header map[string]string
		host   string
		fast   bool
	}{
		{"call", "POST", call2026("noop", ""), ok, "", true},
		{"call with json charset", "POST", call2026("noop", ""), with(ok, "Content-Type", "application/json; charset=utf-8"), "", true},
		{"base64 Mcp-Name", "POST", call2026("noop", ""), with(ok, "Mcp-Name", "=?base64?bm9vcA==?="), "", true},
		{"failing tool", "POST", call2026("fails", ""), headers2026("fails"), "", true},
		{"warning not asked for", "POST", call2026("warn", ""), headers2026("warn"), "", true},
		{"warning asked for", "POST", call2026("warn", `,"io.modelcontextprotocol/logLevel":"info"`), headers2026("warn"), "", true},
		{"warning level too high", "POST", call2026("warn", `,"io.modelcontextprotocol/logLevel":"error"`), headers2026("warn"), "", true},
		{"no client capabilities", "POST", strings.Replace(call2026("noop", ""), `,"io.modelcontextprotocol/clientCapabilities":{}`, "", 1), ok, "", true},
		{"jsonrpc 1.0", "POST", strings.Replace(call2026("noop", ""), `"2.0"`, `"1.0"`, 1), ok, "", false},
		{"Mcp-Method missing", "POST", call2026("noop", ""), with(ok, "Mcp-Method", ""), "", false},
		{"Mcp-Method differs", "POST", call2026("noop", ""), with(ok, "Mcp-Method", "tools/list"), "", false},
		{"Mcp-Name missing", "POST", call2026("noop", ""), with(ok, "Mcp-Name", ""), "", false},
		{"Mcp-Name differs", "POST", call2026("noop", ""), with(ok, "Mcp-Name", "fails"), "", false},
		{"Mcp-Name bad base64", "POST", call2026("noop", ""), with(ok, "Mcp-Name", "=?base64?!!?="), "", false},
		{"version header missing", "POST", call2026("noop", ""), with(ok, "Mcp-Protocol-Version", ""), "", false},
		{"version header differs", "POST", call2026("noop", ""), with(ok, "Mcp-Protocol-Version", "2025-11-25"), "", false},
		{"version unknown", "POST", strings.Replace(call2026("noop", ""), "2026-07-28", "2099-01-01", 1), with(ok, "Mcp-Protocol-Version", "2099-01-01"), "", false},
		{"no version in _meta", "POST", strings.Replace(call2026("noop", ""), `"io.modelcontextprotocol/protocolVersion":"2026-07-28",`, "", 1), ok, "", false},
		{"Last-Event-ID", "POST", call2026("noop", ""), with(ok, "Last-Event-ID", "1"), "", false},
		{"unknown tool", "POST", call2026("nope", ""), headers2026("nope"), "", false},
		{"x-mcp-header tool, header right", "POST", call2026("regional", ""), with(headers2026("regional"), "Mcp-Param-Region", "eu"), "", false},
		{"x-mcp-header tool, header wrong", "POST", call2026("regional", ""), with(headers2026("regional"), "Mcp-Param-Region", "us"), "", false},
		{"x-mcp-header tool, header missing", "POST", call2026("regional", ""), headers2026("regional"), "", false},
		{"DNS rebinding", "POST", call2026("noop", ""), ok, "evil.example.com", false},
		{"DNS rebinding, localhost", "POST", call2026("noop", ""), ok, "localhost:8090", true},
		{"not JSON", "POST", `{"jsonrpc":`, ok, "", false},
		{"two values", "POST", call2026("noop", "") + `{}`, ok, "", false},
		{"duplicate member", "POST", strings.Replace(call2026("noop", ""), `"id":7,`, `"id":7,"id":8,`, 1), ok, "", false},
		{"member in other case", "POST", strings.Replace(call2026("noop", ""), `"method":"tools/call"`, `"method":"tools/call","Method":"ping"`, 1), ok, "", false},
		{"params name in other case", "POST", strings.Replace(call2026("noop", ""), `"name":"noop"`, `"name":"noop","NAME":"fails"`, 1), ok, "", false},
		{"notification", "POST", strings.Replace(call2026("noop", ""), `"id":7,`, "", 1), ok, "", false},
		{"null id", "POST", strings.Replace(call2026("noop", ""), `"id":7`, `"id":null`, 1), ok, "", false},
		{"string id", "POST", strings.Replace(call2026("noop", ""), `"id":7`, `"id":"x<y"`, 1), ok, "", true},
		{"params not an object", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`, ok, "", false},
		{"_meta not an object", "POST", strings.Replace(call2026("noop", ""), meta2026, `"_meta":"x"`, 1), with(ok, "Mcp-Protocol-Version", ""), "", false},
		{"version not a string", "POST", strings.Replace(call2026("noop", ""), `"2026-07-28"`, `20260728`, 1), ok, "", false},
		{"text/plain", "POST", call2026("noop", ""), with(ok, "Content-Type", "text/plain"), "", false},
		{"other method", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta2026 + `}}`, with(ok, "Mcp-Name", ""), "", false},
		{"GET", "GET", "", ok, "", false},
		{"DELETE", "DELETE", "", ok, "", false},
		{"no session, old protocol", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop"}}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, "", false},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop"}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "mcp-session-7b2d8f1e-2f1a-4e0b-9a57-0c5e6c1d2f3a"}, "", false},
		{"bad session id", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop"}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "nope"}, "", false},
		{"old protocol, unknown version header", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop"}}`,
			map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host := c.host
			if host == "" {
				host = "127.0.0.1:8090"
			}
			before := served.Load()
			want := do(plain, c.method, c.body, c.header, host)
			got := do(fast, c.method, c.body, c.header, host)
			if !got.sameAs(want) {
				t.Fatalf("Handler answered\n%d %s %q\nmcp-go answers\n%d %s %q", got.status, got.contentType, got.body, want.status, want.contentType, want.body)
			}
			if fastPath := served.Load() > before; fastPath != c.fast {
				t.Fatalf("fast path %v, want %v (answer %d %q)", fastPath, c.fast, got.status, got.body)
			}
		})
	}
}

// TestWarningReachesTheClient: a log notification a 2026-07-28 call asked
// for is in its answer's event stream, before the answer.
func TestWarningReachesTheClient(t *testing.T) {
	_, fast, _ := handlers(t)
	for range 20 {
		a := do(fast, "POST", call2026("warn", `,"io.modelcontextprotocol/logLevel":"info"`), headers2026("warn"), "127.0.0.1:8090")
		events := strings.Split(strings.TrimSpace(a.body), "\n\n")
		if a.contentType != "text/event-stream" || len(events) != 2 || !strings.Contains(events[0], `"careful"`) || !strings.Contains(events[1], `"warned"`) {
			t.Fatalf("%+v", a)
		}
	}
}

// initialize opens a session of protocol 2025-11-25 on h and returns its id.
func initialize(t *testing.T, h http.Handler) string {
	t.Helper()
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	id := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != 200 || id == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	return id
}

// TestSessionCallsAsMCPGo: calls in a session this process registered are
// served on the fast path with the session's state (its log level), and
// answered as mcp-go answers them; after the session is deleted mcp-go
// answers.
func TestSessionCallsAsMCPGo(t *testing.T) {
	plain, fast, served := handlers(t)
	sessions := map[http.Handler]string{plain: initialize(t, plain), fast: initialize(t, fast)}
	send := func(h http.Handler, method, body string) answer {
		return do(h, method, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": sessions[h]}, "127.0.0.1:8090")
	}
	same := func(name, method, body string, fastPath bool) {
		t.Helper()
		before := served.Load()
		want, got := send(plain, method, body), send(fast, method, body)
		if !got.sameAs(want) {
			t.Fatalf("%s: Handler answered\n%d %s %q\nmcp-go answers\n%d %s %q", name, got.status, got.contentType, got.body, want.status, want.contentType, want.body)
		}
		if (served.Load() > before) != fastPath {
			t.Fatalf("%s: fast path %v, want %v", name, !fastPath, fastPath)
		}
	}
	same("initialized", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	same("call", "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noop","arguments":{}}}`, true)
	same("warning at the default level", "POST", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"warn"}}`, true)
	same("set level", "POST", `{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"warning"}}`, false)
	same("warning", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"warn"}}`, true)
	if a := send(fast, "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"warn"}}`); !strings.HasPrefix(a.contentType, "text/event-stream") ||
		!strings.Contains(a.body, `"careful"`) {
		t.Fatalf("the warning is not in the answer's stream: %+v", a)
	}
	same("failing tool", "POST", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fails"}}`, true)
	same("unknown tool", "POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`, true)
	same("delete", "DELETE", "", false)
	same("call after delete", "POST", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"noop"}}`, false)
}

// TestNotificationStreamsBeforeTheAnswer: a notification sent during a call
// reaches the client while the call still runs, over a real connection.
func TestNotificationStreamsBeforeTheAnswer(t *testing.T) {
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false), server.WithLogging())
	release := make(chan struct{})
	s.AddTool(mcp.NewToolWithRawSchema("slow", "", []byte(`{"type":"object"}`)), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "test", map[string]any{"message": "working"})
		if err := server.ServerFromContext(ctx).SendLogMessageToClient(ctx, n); err != nil {
			return nil, err
		}
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		return mcp.NewToolResultText("done"), nil
	})
	srv := httptest.NewServer(New(s, nil))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(call2026("slow", `,"io.modelcontextprotocol/logLevel":"info"`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers2026("slow") {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var events []string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
			if len(events) == 1 {
				if !strings.Contains(d, `"notifications/message"`) || !strings.Contains(d, "working") {
					t.Fatalf("first event: %s", d)
				}
				close(release) // the call answers only now
			}
		}
	}
	if len(events) != 2 || !strings.Contains(events[1], `"done"`) {
		t.Fatalf("events: %q", events)
	}
}

// TestEncodeResponseAsMarshal: a tool call's answer is encoded byte for byte
// as json.Marshal encodes it.
func TestEncodeResponseAsMarshal(t *testing.T) {
	structured := mcp.NewToolResultStructured(map[string]any{"a": 1, "b": "<x>"}, `{"a":1}`)
	raw := mcp.NewToolResultStructured(nil, "raw")
	raw.RawStructuredContent = json.RawMessage(`{ "z": [1, 2], "a": "<&>" }`)
	failed := mcp.NewToolResultError("bad & worse")
	withMeta := mcp.NewToolResultText("meta")
	withMeta.Meta = mcp.NewMetaFromMap(map[string]any{"progressToken": 3, "io.modelcontextprotocol/serverInfo": mcp.Implementation{Name: "strata", Version: "1"}})
	withMeta.ResultType = mcp.ResultTypeComplete
	serverInfo := mcp.NewToolResultText("decorated")
	serverInfo.Meta = mcp.NewMetaFromMap(map[string]any{"io.modelcontextprotocol/serverInfo": mcp.Implementation{Name: "strata <&>", Version: "1"}})
	serverInfo.ResultType = mcp.ResultTypeComplete
	otherInfo := mcp.NewToolResultText("decorated")
	otherInfo.Meta = mcp.NewMetaFromMap(map[string]any{"io.modelcontextprotocol/serverInfo": mcp.Implementation{Name: "strata", Version: "2"}})
	icons := mcp.NewToolResultText("decorated")
	icons.Meta = mcp.NewMetaFromMap(map[string]any{"io.modelcontextprotocol/serverInfo": mcp.Implementation{Name: "strata", Version: "2", Icons: []mcp.Icon{{Src: "x"}}}})
	many := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewImageContent("aGk=", "image/png"), mcp.NewTextContent("\u2028"),
		mcp.NewTextContent("tab\there \"q\" \\ \x7f"), mcp.TextContent{Type: "text", Text: "annotated", Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(0.5)}}}}}
	empty := &mcp.CallToolResult{}
	var enc encoder // keeps the server's identity from one answer to the next
	for i, res := range []*mcp.CallToolResult{mcp.NewToolResultText("ok <&>"), structured, raw, failed, withMeta, serverInfo, serverInfo, otherInfo, icons, serverInfo, many, empty} {
		for _, id := range []any{7, float64(7), float64(-12), float64(0), math.Copysign(0, -1), 1.5, 1e20, "id<1>", "plain", "é", nil} {
			resp := mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Result: res}
			want, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := enc.encode(resp)
			if err != nil || string(got) != string(want) {
				t.Fatalf("result %d, id %v:\n got %s (%v)\nwant %s", i, id, got, err, want)
			}
		}
	}
	for _, other := range []mcp.JSONRPCMessage{
		mcp.NewJSONRPCError(mcp.NewRequestId(1), mcp.INVALID_PARAMS, "x", nil),
		mcp.JSONRPCResponse{JSONRPC: "2.0", ID: mcp.NewRequestId(1), Result: mcp.EmptyResult{}},
	} {
		want, _ := json.Marshal(other)
		if got, err := encodeResponse(other); err != nil || string(got) != string(want) {
			t.Fatalf("got %s (%v), want %s", got, err, want)
		}
	}
}

// FuzzParseCall: what parseCall reads is valid JSON that encoding/json (as
// mcp-go uses it) decodes to the same method, name and protocol version.
func FuzzParseCall(f *testing.F) {
	f.Add(call2026("noop", ""))
	f.Add(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noop","arguments":{}}}`)
	f.Add(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","_meta":null,"arguments":{"n":[1.5e3,"\u00e9"]}}}`)
	f.Fuzz(func(t *testing.T, body string) {
		c, ok := parseCall([]byte(body))
		if !ok {
			return
		}
		if !json.Valid([]byte(body)) {
			t.Fatalf("read invalid JSON %q", body)
		}
		var v struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      any             `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
			Params  struct {
				Name string    `json:"name"`
				Meta *mcp.Meta `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%q: encoding/json: %v", body, err)
		}
		if v.JSONRPC != "2.0" || v.ID == nil || v.Method != c.method || v.Params.Name != c.name || v.Params.Meta.ProtocolVersion() != c.metaVersion ||
			v.Result != nil || v.Error != nil {
			t.Fatalf("%q: read %+v, encoding/json reads %+v", body, c, v)
		}
	})
}

// TestParseCall reads what the transport needs and refuses anything mcp-go
// could read otherwise.
func TestParseCall(t *testing.T) {
	c, ok := parseCall([]byte(call2026("noop", "")))
	if !ok || c.method != "tools/call" || c.name != "noop" || c.metaVersion != "2026-07-28" {
		t.Fatalf("%+v %v", c, ok)
	}
	if c, ok := parseCall([]byte(` {"jsonrpc" : "2.0", "id":"a\"\u00e9", "method":"tools/call","params":{"name":"noop","arguments":{"a":[1,-2.5e3,true,false,null,{"b":"\n"}]},"_meta":null}} `)); !ok || c.name != "noop" || c.metaVersion != "" {
		t.Fatalf("%+v %v", c, ok)
	}
	for _, body := range []string{
		``, `[]`, `{}`, `{"jsonrpc":"2.0","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","jsonRPC":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","_id":2}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na-me":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{}}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"} x`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","ſ":1,"jſonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n\u006fop"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":"\ud800"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1e400}}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1234567890123456,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":01,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":[1,]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1,}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call",}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":tru}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":[]}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		if c, ok := parseCall([]byte(body)); ok {
			t.Errorf("%q read as %+v", body, c)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestLoopbackAddress: the address check without a string is the one mcp-go
// makes on the address's string.
func TestLoopbackAddress(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "10.0.0.1", "::", "0.0.0.0", "fe80::1"} {
		a := &net.TCPAddr{IP: net.ParseIP(ip), Port: 80}
		if a.IP.IsLoopback() != isLoopbackHost(a.String()) {
			t.Errorf("%s: %v, mcp-go %v", a, a.IP.IsLoopback(), isLoopbackHost(a.String()))
		}
	}
}

// TestCanonicalHeaders: the header names the transport reads directly are
// in the form net/http stores them in.
func TestCanonicalHeaders(t *testing.T) {
	for _, k := range []string{mcp.HeaderProtocolVersion, mcp.HeaderMethod, mcp.HeaderName, server.HeaderKeySessionID, "Content-Type"} {
		if http.CanonicalHeaderKey(k) != k {
			t.Errorf("%q is not canonical", k)
		}
	}
}
