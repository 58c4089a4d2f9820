// Package mcpclient opens MCP sessions to queryd for Strata's own tools
// (benchmark, evaluation, end-to-end tests).
package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/shared/ids"
)

// Connect opens and initializes an MCP session over streamable HTTP with a
// bearer API key; name identifies the client to the server.
func Connect(ctx context.Context, url, key, name string) (*client.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPBasicClient(&http.Client{Transport: tr}),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

// ToolError is a tool's own error answer (isError), e.g. a bad argument:
// the tool and what it said.
type ToolError struct{ Tool, Text string }

func (e ToolError) Error() string { return e.Tool + ": " + e.Text }

// Call calls one tool and returns its answer; an error answer is a
// ToolError (returned with the answer), any other error names the tool.
func Call(ctx context.Context, c *client.Client, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return res, ToolError{tool, Text(res)}
	}
	return res, nil
}

// CallJSON is Call that decodes the answer's JSON (JSON) into out.
func CallJSON(ctx context.Context, c *client.Client, tool string, args map[string]any, out any) (*mcp.CallToolResult, error) {
	res, err := Call(ctx, c, tool, args)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(JSON(res), out); err != nil {
		return res, fmt.Errorf("%s: the answer is not the expected JSON: %w", tool, err)
	}
	return res, nil
}

// Text is the text of a tool answer: its text blocks, joined.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// JSON is a tool answer's JSON: its structured content when it has one
// (the text may lead with a note for a human or a model, such as
// hybrid_search's "No strong match"), else its text.
func JSON(res *mcp.CallToolResult) []byte {
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return b
		}
	}
	return []byte(Text(res))
}

// ReadCall is one read tool's call and a word its complete answer holds.
type ReadCall struct {
	Tool string
	Args map[string]any
	Want string
}

// EveryRead lists a call of every read tool about one file of project: its
// path in the project, a word its text holds, the id of one of its chunks
// and its path_part_id. Each call's complete answer holds Want.
func EveryRead(project, path, word, chunk, fileID string) []ReadCall {
	name := path[strings.LastIndexByte(path, '/')+1:]
	return []ReadCall{
		{"status", map[string]any{}, project},
		{"search_keyword", map[string]any{"query": word}, word},
		{"search_knowledge", map[string]any{"query": word}, project},
		{"hybrid_search", map[string]any{"query": word}, word},
		{"query_documents", map[string]any{"query": word}, word},
		{"list_file_chunks", map[string]any{"project_reference": project, "file_path": path}, word},
		{"get_file_chunk", map[string]any{"project_reference": project, "chunk_id": chunk}, word},
		{"get_file_chunk_embedding", map[string]any{"project_reference": project, "chunk_id": chunk}, "ready"},
		{"read", map[string]any{"path_part_id": fileID}, word},
		{"read_around", map[string]any{"chunk_id": chunk}, word},
		{"get_info", map[string]any{"path_part_id": fileID}, name},
		{"find", map[string]any{"name": name}, fileID},
		{"list_files", map[string]any{}, path},
		{"list_contents", map[string]any{"path_part_id": ids.Project(project)}, path[:strings.IndexByte(path, '/')]},
		{"read_chunk_neighbors", map[string]any{"filePath": "/" + project + "/" + path, "chunkIndex": 0}, word},
	}
}
