package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/deploy/mcpclient"
)

// toolError is a tool's own error answer (isError), e.g. a bad argument.
type toolError struct{ tool, text string }

func (e toolError) Error() string { return e.tool + ": " + e.text }

// callTool opens an MCP session to queryd, calls one tool and returns its
// answer (the JSON text the tool returned). One call per session: the tool
// budget counts calls per session.
func callTool(ctx context.Context, c conn, tool string, args map[string]any) (json.RawMessage, error) {
	if err := c.require("mcp-url", "api-key"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	client, err := mcpclient.Connect(ctx, c.get("mcp-url"), c.get("api-key"), "strata-cli")
	if err != nil {
		return nil, fmt.Errorf("MCP endpoint %s: %w", c.get("mcp-url"), err)
	}
	defer client.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := client.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return nil, toolError{tool, mcpclient.Text(res)}
	}
	raw := json.RawMessage(mcpclient.JSON(res))
	if !json.Valid(raw) {
		return nil, errors.New(tool + ": the answer is not JSON: " + clip(string(raw), 200))
	}
	return raw, nil
}
