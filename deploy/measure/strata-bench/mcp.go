package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// The bench's MCP client speaks protocol 2026-07-28 over plain net/http: one
// POST a call, no session, the version and client in _meta and the method
// and tool in headers. It decodes each answer once (the text block; the
// structured content is kept as bytes), as the direct side's Weaviate client
// decodes its answer once. mcp-go's own client decodes a tool result three
// times over (BenchmarkListFileChunksLarge/over-HTTP in queryd/tools: about
// 65% of a large call's CPU is that client's), which would be charged to
// queryd here although an agent's client is not queryd's work.
const benchProtocol = "2026-07-28"

// rpcClient calls the tools of one MCP endpoint with its own connection
// pool, as a separate agent would.
type rpcClient struct {
	http *http.Client
	url  string
	key  string
	next atomic.Int64
}

// sessions are clients, as many as the highest concurrency: concurrent
// workers never share one.
type sessions []*rpcClient

// openSessions makes n clients with bearer auth and checks the endpoint
// answers tools/list.
func openSessions(ctx context.Context, url, key string, n int) (sessions, error) {
	var out sessions
	for range n {
		out = append(out, &rpcClient{http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}, url: url, key: key})
	}
	if _, err := out[0].rpc(ctx, "tools/list", "", `{}`); err != nil {
		out.close()
		return nil, fmt.Errorf("MCP endpoint %s: %w", url, err)
	}
	return out, nil
}

func (s sessions) close() {
	for _, c := range s {
		c.http.CloseIdleConnections()
	}
}

// toolError is an answer with isError set: the call reached the tool and
// the tool refused or failed.
type toolError struct{ text string }

func (e toolError) Error() string { return "tool error: " + clip(e.text, 200) }

// rpcResponse is a JSON-RPC answer with a tool result's fields.
type rpcResponse struct {
	Result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpc sends one request and decodes its answer.
func (c *rpcClient) rpc(ctx context.Context, method, name, params string) (*rpcResponse, error) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + benchProtocol +
		`","io.modelcontextprotocol/clientInfo":{"name":"strata-bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	params = strings.TrimSpace(params)
	if params == "{}" {
		params = "{" + meta + "}"
	} else {
		params = params[:len(params)-1] + "," + meta + "}"
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.next.Add(1), method, params)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", benchProtocol)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: read answer: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, clip(string(raw), 200))
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if raw, err = lastSSEData(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
	}
	var out rpcResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: answer is not JSON-RPC: %w", method, err)
	}
	if out.Error != nil {
		return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, out.Error.Code, out.Error.Message)
	}
	return &out, nil
}

// lastSSEData is the data of an event stream's last event: the response
// (notifications, if any, come before it).
func lastSSEData(stream []byte) ([]byte, error) {
	var data, event []byte
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			event = append(event, bytes.TrimSpace(line[5:])...)
		case len(line) == 0 && len(event) > 0:
			data, event = event, nil
		}
	}
	if len(event) > 0 {
		data = event
	}
	if err := sc.Err(); err != nil || len(data) == 0 {
		return nil, errors.Join(errors.New("event stream without a response"), err)
	}
	return data, nil
}

// call invokes a tool and returns its text answer.
func call(ctx context.Context, c *rpcClient, tool string, args map[string]any) (string, error) {
	_, text, err := callTool(ctx, c, tool, args)
	return text, err
}

// callTool invokes a tool and returns its response and its text (the text
// blocks joined); an error answer is a toolError.
func callTool(ctx context.Context, c *rpcClient, tool string, args map[string]any) (*rpcResponse, string, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return nil, "", fmt.Errorf("%s arguments: %w", tool, err)
	}
	res, err := c.rpc(ctx, "tools/call", tool, fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, a))
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	for _, content := range res.Result.Content {
		if content.Type == "text" {
			b.WriteString(content.Text)
		}
	}
	if res.Result.IsError {
		return nil, "", toolError{b.String()}
	}
	return res, b.String(), nil
}

// hitKeys are the fields that hold an answer's list of results, by tool.
var hitKeys = []string{"results", "data", "chunks", "items", "files", "sections", "projects"}

// countHits counts the results in a tool's JSON answer: the length of its
// first list field among hitKeys, or 1 for an answer about one thing (a
// chunk, a node).
func countHits(text string) (int, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return 0, fmt.Errorf("answer is not a JSON object: %w", err)
	}
	for _, k := range hitKeys {
		var list []json.RawMessage
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &list) == nil {
			return len(list), nil
		}
	}
	return 1, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
