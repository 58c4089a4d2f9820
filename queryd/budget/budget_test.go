package budget

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

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
