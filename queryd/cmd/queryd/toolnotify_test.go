package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestFailedToolCallWarnsTheClient: queryd as wired by run accepts
// logging/setLevel and sends a warning log notification in the answer's SSE
// stream when a tool call fails.
func TestFailedToolCallWarnsTheClient(t *testing.T) {
	url := "http://" + startQueryd(t) + "/mcp"
	post := func(session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s: %s", body, resp.Status, b)
		}
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if _, body := post(session, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`); !strings.Contains(body, `"result":{}`) {
		t.Fatalf("logging/setLevel: %s", body)
	}
	resp, body := post(session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_file_chunks","arguments":{"project_reference":"nope","file_path":"x.md"}}}`)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("the answer to a failed call carries no notification stream: %s", body)
	}
	var warned bool
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Level string         `json:"level"`
				Data  map[string]any `json:"data"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(data), &msg) == nil && msg.Method == "notifications/message" {
			warned = msg.Params.Level == "warning" && msg.Params.Data["tool"] == "list_file_chunks" &&
				strings.Contains(msg.Params.Data["message"].(string), "tool list_file_chunks failed")
		}
	}
	if !warned {
		t.Fatalf("no warning for the failed call in:\n%s", body)
	}
}

// TestFailedToolCallWarnsA2026Client: a client of protocol 2026-07-28 that
// asks for warnings in _meta (io.modelcontextprotocol/logLevel) gets the
// warning of a failed call in the answer's event stream, before the answer;
// one that does not ask gets a plain JSON answer.
func TestFailedToolCallWarnsA2026Client(t *testing.T) {
	url := "http://" + startQueryd(t) + "/mcp"
	call := func(level string) (string, string) {
		t.Helper()
		meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
		if level != "" {
			meta += `,"io.modelcontextprotocol/logLevel":"` + level + `"`
		}
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_file_chunks","arguments":{"project_reference":"nope","file_path":"x.md"},"_meta":{` + meta + `}}}`
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "list_file_chunks")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", resp.Status, b)
		}
		return resp.Header.Get("Content-Type"), string(b)
	}
	ct, body := call("warning")
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	if !strings.HasPrefix(ct, "text/event-stream") || len(events) != 2 || !strings.Contains(events[0], `"notifications/message"`) ||
		!strings.Contains(events[0], "tool list_file_chunks failed") || !strings.Contains(events[1], `"isError":true`) {
		t.Fatalf("want the warning, then the answer: %s\n%s", ct, body)
	}
	if ct, body := call(""); ct != "application/json" || strings.Contains(body, "notifications/message") {
		t.Fatalf("a client that asks for no log messages gets none: %s\n%s", ct, body)
	}
}
