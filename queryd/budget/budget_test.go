package budget

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/servers/serverstest"
)

type session struct{ id string }

func (s session) Initialize()                                         {}
func (s session) Initialized() bool                                   { return true }
func (s session) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (s session) SessionID() string                                   { return s.id }

var mcpServer = server.NewMCPServer("t", "1")

func call(t *testing.T, h server.ToolHandlerFunc, sessionID string) (string, bool) {
	t.Helper()
	ctx := mcpServer.WithContext(context.Background(), session{sessionID})
	res, err := h(ctx, mcp.CallToolRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.(mcp.TextContent).Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

var answer server.ToolHandlerFunc = func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("answer"), nil
}

func TestBudgetWarnsThenStops(t *testing.T) {
	h := Middleware(Config{Limit: 20, Warn: 4}, &Memory{})(answer)
	for i := 1; i <= 20; i++ {
		text, isErr := call(t, h, "s1")
		remaining := 20 - i
		switch {
		case isErr || !strings.HasPrefix(text, "answer"):
			t.Fatalf("call %d: %q", i, text)
		case remaining > 4 && strings.Contains(text, "Tool budget"):
			t.Fatalf("call %d warned early: %q", i, text)
		case remaining <= 4 && remaining > 0 && !strings.Contains(text, "Wrap up soon"):
			t.Fatalf("call %d with %d left did not warn: %q", i, remaining, text)
		case remaining == 0 && !strings.Contains(text, "Synthesize your answer now"):
			t.Fatalf("last call did not say so: %q", text)
		}
	}
	if text, isErr := call(t, h, "s1"); !isErr || !strings.Contains(text, "exhausted") || strings.Contains(text, "answer\n") {
		t.Fatalf("call 21 must be refused without running the tool: %q", text)
	}
	if text, _ := call(t, h, "s2"); text != "answer" {
		t.Fatalf("another session has its own budget: %q", text)
	}
}

// TestKVSharedAcrossReplicas counts one session through two "replicas",
// each with its own KV handle on one NATS server.
func TestKVSharedAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := serverstest.NATS(t)
	var handlers []server.ToolHandlerFunc
	for range 2 {
		nc, js, err := pipeline.Connect(url, "budget-test", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		kv, err := OpenKV(context.Background(), js, 1, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		handlers = append(handlers, Middleware(Config{Limit: 5, Warn: 2}, kv)(answer))
	}
	for i := 1; i <= 5; i++ {
		if _, isErr := call(t, handlers[i%2], "shared-session"); isErr {
			t.Fatalf("call %d refused", i)
		}
	}
	if text, isErr := call(t, handlers[0], "shared-session"); !isErr || !strings.Contains(text, "exhausted") {
		t.Fatalf("the 6th call through either replica must be refused: %q", text)
	}
}

// callAs calls h with no MCP session, as a 2026-07-28 client does: the
// principal's key and the client name in _meta identify the run.
func callAs(t *testing.T, h server.ToolHandlerFunc, key, client string) (string, bool) {
	t.Helper()
	keys, err := auth.ParseKeys(key + "-0123456789abcdef=*")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := keys.Lookup(key + "-0123456789abcdef")
	req := mcp.CallToolRequest{}
	if client != "" {
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{mcp.MetaKeyClientInfo: map[string]any{"name": client, "version": "1"}}}
	}
	res, err := h(auth.WithPrincipal(context.Background(), p), req)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.(mcp.TextContent).Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

// TestRunsWithoutSession: without a session, calls count by API key and
// client name; the 21st call of one run is refused, other runs go on.
func TestRunsWithoutSession(t *testing.T) {
	h := Middleware(Config{Limit: 20, Warn: 4}, &Memory{})(answer)
	for i := 1; i <= 20; i++ {
		if _, isErr := callAs(t, h, "k1", "agent-a"); isErr {
			t.Fatalf("call %d refused", i)
		}
	}
	if text, isErr := callAs(t, h, "k1", "agent-a"); !isErr || !strings.Contains(text, "exhausted") {
		t.Fatalf("call 21 of a sessionless run must be refused: %q", text)
	}
	if _, isErr := callAs(t, h, "k1", "agent-b"); isErr {
		t.Fatal("another client under the same key is another run")
	}
	if _, isErr := callAs(t, h, "k2", "agent-a"); isErr {
		t.Fatal("another key is another run")
	}
	for i := 1; i <= 20; i++ {
		callAs(t, h, "k3", "")
	}
	if _, isErr := callAs(t, h, "k3", ""); !isErr {
		t.Fatal("a client that names itself not at all is still counted, by its key")
	}
}

// TestIdleGapStartsNewRun: a session (or key) that pauses longer than the
// idle gap gets a fresh budget; shorter pauses stay in the run.
func TestIdleGapStartsNewRun(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	h := Middleware(Config{Limit: 3, Warn: 1, Idle: 5 * time.Minute, Now: func() time.Time { return now }}, &Memory{})(answer)
	for i := 1; i <= 3; i++ {
		now = now.Add(4 * time.Minute) // pauses under the gap keep the run
		if _, isErr := call(t, h, "long-lived"); isErr {
			t.Fatalf("call %d refused", i)
		}
	}
	if _, isErr := call(t, h, "long-lived"); !isErr {
		t.Fatal("the 4th call of the run must be refused")
	}
	now = now.Add(5*time.Minute + time.Second)
	if text, isErr := call(t, h, "long-lived"); isErr || text != "answer" {
		t.Fatalf("after the idle gap a new run starts: %q", text)
	}
}

// TestBudgetAppliesToChosenTools: tools outside the budgeted toolsets
// (Veryfront's paging tools by default) are never counted nor refused.
func TestBudgetAppliesToChosenTools(t *testing.T) {
	counted := func(tool string) bool { return tool != "list_file_chunks" }
	h := Middleware(Config{Limit: 2, Warn: 0, Applies: counted}, &Memory{})(answer)
	page := func() (string, bool) {
		req := mcp.CallToolRequest{}
		req.Params.Name = "list_file_chunks"
		res, err := h(mcpServer.WithContext(context.Background(), session{"s"}), req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}
	for i := 1; i <= 30; i++ {
		if text, isErr := page(); isErr || text != "answer" {
			t.Fatalf("paging call %d: %q", i, text)
		}
	}
	call(t, h, "s")
	call(t, h, "s")
	if _, isErr := call(t, h, "s"); !isErr {
		t.Fatal("counted tools still stop at the budget")
	}
	if _, isErr := page(); isErr {
		t.Fatal("paging goes on after the budget is spent")
	}
}

// TestKVIdleGap: the shared counter starts a new run after the gap too.
func TestKVIdleGap(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "budget-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	kv, err := OpenKV(context.Background(), js, 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 1; i <= 3; i++ {
		if n, err := kv.Use(context.Background(), "run", now, time.Minute); err != nil || n != i {
			t.Fatalf("call %d counted %d, %v", i, n, err)
		}
	}
	if n, err := kv.Use(context.Background(), "run", now.Add(2*time.Minute), time.Minute); err != nil || n != 1 {
		t.Fatalf("after the gap: %d, %v", n, err)
	}
}

// TestStdioRunIsTheProcess: mcp-go names every stdio session "stdio"; two
// queryd processes sharing a NATS KV must not share one run, so the run of a
// stdio session is this process's.
func TestStdioRunIsTheProcess(t *testing.T) {
	ctx := mcpServer.WithContext(context.Background(), session{"stdio"})
	run := RunOf(ctx, mcp.CallToolRequest{})
	if run == "session:stdio" || !strings.HasPrefix(run, "stdio:") || len(run) < len("stdio:")+16 {
		t.Fatalf("stdio run %q must name this process", run)
	}
	if again := RunOf(ctx, mcp.CallToolRequest{}); again != run {
		t.Fatalf("one process is one run: %q then %q", run, again)
	}
}
