package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/shared/testservers"
)

// TestStdioTransport runs queryd as a desktop agent would: a child process
// speaking MCP on stdin/stdout, reading the same index.
func TestStdioTransport(t *testing.T) {
	h := start(t)
	h.put("acme/stdio.md", "# Stdio\n\nthe stdiomarker paragraph\n")
	h.settle()
	bin := filepath.Join(h.stack.BinDir(), "queryd")
	env := []string{
		"STRATA_TRANSPORT=stdio", "STRATA_LOG_FORMAT=text",
		"STRATA_WEAVIATE_HOST=" + h.stack.Env.WeaviateHost, "STRATA_WEAVIATE_API_KEY=" + testservers.LocalWeaviateReader,
		"STRATA_API_KEYS=stdio-key-0123456789=acme", "STRATA_STDIO_API_KEY=stdio-key-0123456789",
		"STRATA_CURSOR_SECRET=stdio-cursor-secret-0123",
	}
	c, err := client.NewStdioMCPClient(bin, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "stdio-e2e", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize over stdio: %v", err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "search_keyword"
	req.Params.Arguments = map[string]any{"query": "stdiomarker"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("search over stdio: %v %v", err, res)
	}
	if text := res.Content[0].(mcp.TextContent).Text; !strings.Contains(text, "stdiomarker") {
		t.Fatalf("search over stdio: %s", text)
	}
}
