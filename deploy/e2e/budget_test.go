package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/servers"
)

// rawCall sends one JSON-RPC request to an MCP endpoint with a session id.
func rawCall(t *testing.T, url, key, session, body string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.Header.Get("Mcp-Session-Id")
}

// TestToolBudget: one MCP session spread over two queryd replicas shares one
// budget (NATS KV); answers warn near the end and the call after it is refused.
func TestToolBudget(t *testing.T) {
	st := up(t, t.TempDir(), nil, false, "STRATA_TOOL_BUDGET=6", "STRATA_TOOL_BUDGET_WARN=2")
	t.Cleanup(func() { st.Stop(15 * time.Second) })
	h := harnessFor(t, st)
	h.put("acme/b.md", "# B\n\nbudgetword\n")
	h.settle()

	// A second replica with the same configuration on another port.
	ports, err := servers.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	env := append([]string{}, st.ServiceEnv["queryd"]...)
	env = append(env, fmt.Sprintf("STRATA_ADDR=127.0.0.1:%d", ports[0]))
	replica, err := servers.Start(servers.Spec{Name: "queryd-2", Path: filepath.Join(st.BinDir(), "queryd"), Env: env,
		LogFile: filepath.Join(t.TempDir(), "queryd-2.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replica.Stop(5 * time.Second) })
	urlB := fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[0])
	if err := replica.WaitReady(t.Context(), servers.HTTPReady(fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0]))); err != nil {
		t.Fatal(err)
	}

	urls := []string{st.Env.MCPURL, urlB}
	_, session := rawCall(t, urls[0], st.Env.APIKey, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"budget","version":"1"}}}`)
	if session == "" {
		t.Fatal("no Mcp-Session-Id issued")
	}
	search := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_keyword","arguments":{"query":"budgetword"}}}`
	for i := 1; i <= 7; i++ {
		body, _ := rawCall(t, urls[i%2], st.Env.APIKey, session, search)
		warned := strings.Contains(body, "Wrap up soon") || strings.Contains(body, "Synthesize your answer now")
		refused := strings.Contains(body, "exhausted")
		switch {
		case i <= 3 && (warned || refused || !strings.Contains(body, "budgetword")):
			t.Fatalf("call %d: %s", i, body)
		case i >= 4 && i <= 6 && (!warned || refused):
			t.Fatalf("call %d must warn: %s", i, body)
		case i == 7 && !refused:
			t.Fatalf("call 7 through the other replica must be refused: %s", body)
		}
	}
	// A new session starts with a full budget.
	_, other := rawCall(t, urls[1], st.Env.APIKey, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"budget","version":"1"}}}`)
	if body, _ := rawCall(t, urls[1], st.Env.APIKey, other, search); !strings.Contains(body, "budgetword") || strings.Contains(body, "exhausted") {
		t.Fatalf("new session: %s", body)
	}
}
