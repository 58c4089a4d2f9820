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

	"github.com/strata-kb/strata/shared/testservers"
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

// raw2026 sends one tools/call of protocol 2026-07-28: no session, the
// version and client in _meta, the method and tool in headers.
func raw2026(t *testing.T, url, key, tool, args, client string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`, tool, args, client)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestToolBudget: one MCP session spread over two queryd replicas shares one
// budget (NATS KV); answers warn near the end and the call after it is refused.
func TestToolBudget(t *testing.T) {
	st := up(t, t.TempDir(), nil, false, "STRATA_TOOL_BUDGET=6", "STRATA_TOOL_BUDGET_WARN=2")
	t.Cleanup(func() {
		st.Stop(15 * time.Second) // the replica too: it is one of st.Services
		dumpLogsOnFailure(t, st)
	})
	h := harnessFor(t, st)
	h.put("acme/b.md", "# B\n\nbudgetword\n")
	h.settle()

	// A second replica with the same configuration on another port.
	ports, err := testservers.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	env := append([]string{}, st.ServiceEnv["queryd"]...)
	env = append(env, fmt.Sprintf("STRATA_ADDR=127.0.0.1:%d", ports[0]))
	replica, err := testservers.Start(testservers.Spec{Name: "queryd-2", Path: filepath.Join(st.BinDir(), "queryd"), Env: env,
		LogFile: filepath.Join(filepath.Dir(st.Services["queryd"].LogFile), "queryd-2.log")})
	if err != nil {
		t.Fatal(err)
	}
	st.Services["queryd-2"] = replica // stopped with the stack; its log kept with the others on failure
	urlB := fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[0])
	if err := replica.WaitReady(t.Context(), testservers.HTTPReady(fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0]))); err != nil {
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
	// A client of protocol 2026-07-28 has no session: its run is the key and
	// its client name, counted across both replicas; paging is not counted.
	for i := 1; i <= 7; i++ {
		body := raw2026(t, urls[i%2], st.Env.APIKey, "search_keyword", `{"query":"budgetword"}`, "stateless-agent")
		if refused := strings.Contains(body, "exhausted"); refused != (i == 7) {
			t.Fatalf("2026-07-28 call %d through replica %d: %s", i, i%2, body)
		}
	}
	for i := range 10 {
		body := raw2026(t, urls[i%2], st.Env.APIKey, "list_file_chunks", `{"project_reference":"acme","file_path":"b.md","limit":1}`, "stateless-agent")
		if strings.Contains(body, "exhausted") || !strings.Contains(body, "budgetword") {
			t.Fatalf("paging call %d is counted: %s", i, body)
		}
	}
	// A new session starts with a full budget.
	_, other := rawCall(t, urls[1], st.Env.APIKey, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"budget","version":"1"}}}`)
	if body, _ := rawCall(t, urls[1], st.Env.APIKey, other, search); !strings.Contains(body, "budgetword") || strings.Contains(body, "exhausted") {
		t.Fatalf("new session: %s", body)
	}
}
