package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The anchor: mcp-go's own floor. A streamable HTTP MCP server in this
// process with one tool that does nothing, called over loopback by the same
// client library the benchmark uses for queryd. Whatever a queryd tool
// costs beyond its direct query and this anchor is queryd's own work.
type anchor struct {
	srv      *http.Server
	sessions sessions
}

func startAnchor(ctx context.Context, n int) (*anchor, error) {
	s := server.NewMCPServer("anchor", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("noop", mcp.WithDescription("does nothing")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("anchor: %w", err)
	}
	a := &anchor{srv: &http.Server{Handler: server.NewStreamableHTTPServer(s)}}
	go func() {
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Println("anchor:", err)
		}
	}()
	if a.sessions, err = openSessions(ctx, "http://"+ln.Addr().String()+"/mcp", "anchor", n); err != nil {
		a.srv.Close()
		return nil, err
	}
	return a, nil
}

func (a *anchor) call(ctx context.Context, worker int, _ input, _ bool) (outcome, error) {
	_, err := call(ctx, a.sessions[worker], "noop", map[string]any{})
	return outcome{hits: 1}, err
}

func (a *anchor) close() {
	a.sessions.close()
	a.srv.Close()
}
