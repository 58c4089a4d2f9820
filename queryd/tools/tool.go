package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
)

// Tool is one MCP tool, defined in its own file, tool_<name>.go: its name,
// toolset, description, input schema (the reference system's JSON byte for
// byte, embedded from schemas/<name>.input.json) and handler. Register
// serves the tools of all; docs/tools.md is generated from them
// (TestToolsDoc).
type Tool struct {
	Name        string
	Toolset     string
	Description string
	// Input is the input schema; Output the output schema, "" for none.
	Input, Output string
	// Needs says when a server serves the tool ("": always); needs
	// reports whether it does (nil: always).
	Needs string
	needs func(*Tools) bool
	// handle is the tool's handler on a server's Tools.
	handle func(*Tools) server.ToolHandlerFunc
}

// all is every tool, in the order they are registered. A new tool is one
// line here, its file and its schema (docs/tools.md says how).
var all = []Tool{
	listFileChunksTool,
	getFileChunkTool,
	getFileChunkEmbeddingTool,
	searchKeywordTool,
	listContentsTool,
	findTool,
	getInfoTool,
	readTool,
	readAroundTool,
	viewChunkImageTool,
	listFilesTool,
	statusTool,
	readChunkNeighborsTool,
	searchKnowledgeTool,
	searchFilesTool,
	queryDocumentsTool,
	hybridSearchTool,
	objectStatusTool,
	listChangesTool,
	listDocumentsTool,
	listFailuresTool,
	listBranchesTool,
}

// Definitions returns every tool's definition, whether a server serves it
// or not, in registration order.
func Definitions() []Tool { return append([]Tool(nil), all...) }

// define is the Tool whose handler is fn, with handler's conventions:
// arguments decoded into A, the answer as structured content and its JSON,
// user errors as tool errors the agent reads.
func define[A any](toolset, name, description, input string, fn func(*Tools, context.Context, auth.Principal, A) (any, error)) Tool {
	return Tool{Name: name, Toolset: toolset, Description: description, Input: input,
		handle: func(t *Tools) server.ToolHandlerFunc {
			return handler(t, name, func(ctx context.Context, p auth.Principal, a A) (any, error) { return fn(t, ctx, p, a) })
		}}
}

// defineRaw is the Tool whose handler is h itself, for an answer handler
// cannot give (read_chunk_neighbors').
func defineRaw(toolset, name, description, input string, h func(*Tools, context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)) Tool {
	return Tool{Name: name, Toolset: toolset, Description: description, Input: input,
		handle: func(t *Tools) server.ToolHandlerFunc {
			return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) { return h(t, ctx, req) }
		}}
}

// withOutput is d with an output schema.
func (d Tool) withOutput(schema string) Tool {
	d.Output = schema
	return d
}

// when is d served only where needs holds, which condition says in words.
func (d Tool) when(condition string, needs func(*Tools) bool) Tool {
	d.Needs, d.needs = condition, needs
	return d
}

// Schema returns a tool's schema by its file name in schemas/
// ("get_file_chunk.input.json", "search_files.output.json").
func Schema(name string) json.RawMessage {
	tool, kind, _ := strings.Cut(name, ".")
	for _, d := range all {
		switch {
		case d.Name != tool:
		case kind == "input.json":
			return json.RawMessage(d.Input)
		case kind == "output.json" && d.Output != "":
			return json.RawMessage(d.Output)
		}
	}
	panic(fmt.Sprintf("missing embedded schema %s", name))
}
