package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/strata-kb/strata/deploy/mcpclient"
)

// callTool opens an MCP session to queryd, calls one tool and returns its
// answer (the JSON text the tool returned). One call per session: the tool
// budget counts calls per session. A tool's own error answer is a
// mcpclient.ToolError.
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
	res, err := mcpclient.Call(ctx, client, tool, args)
	if err != nil {
		return nil, err
	}
	raw := json.RawMessage(mcpclient.JSON(res))
	if !json.Valid(raw) {
		return nil, errors.New(tool + ": the answer is not JSON: " + clip(string(raw), 200))
	}
	return raw, nil
}
