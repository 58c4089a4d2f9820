package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/deploy/mcpclient"
)

// sessions are MCP clients over streamable HTTP, one session each, as many
// as the highest concurrency: concurrent workers never share a session.
type sessions []*client.Client

// openSessions connects n clients with bearer auth. Each has its own HTTP
// connection pool, like separate agents would.
func openSessions(ctx context.Context, url, key string, n int) (sessions, error) {
	var out sessions
	for i := range n {
		c, err := mcpclient.Connect(ctx, url, key, "strata-bench")
		if err != nil {
			out.close()
			return nil, fmt.Errorf("MCP session %d: %w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func (s sessions) close() {
	for _, c := range s {
		c.Close()
	}
}

// toolError is an answer with isError set: the call reached the tool and
// the tool refused or failed.
type toolError struct{ text string }

func (e toolError) Error() string { return "tool error: " + clip(e.text, 200) }

// call invokes a tool and returns its text answer.
func call(ctx context.Context, c *client.Client, tool string, args map[string]any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", toolError{b.String()}
	}
	return b.String(), nil
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
