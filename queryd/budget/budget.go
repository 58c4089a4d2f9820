// Package budget limits the tool calls of one agent run, as Knowledge
// Stack's agent tools do: every answer from the warning threshold on tells
// the agent to wrap up, and once the budget is spent the agent is told to
// answer now.
//
// A run is what one agent task does. It is identified by the MCP session
// when the client has one (protocols up to 2025-11-25, and stdio); a client
// of protocol 2026-07-28 has no session, and its run is the API key plus the
// client name the request carries in _meta (self-reported: the budget helps
// an agent stop, it is not an access control). A run ends after an idle gap,
// so a desktop agent that keeps one session open across many conversations
// gets a fresh budget per task. With NATS, every replica behind one URL counts
// the same run together (KV): a run is counted in the memory of the replica
// that serves its calls, and handed over through NATS when a call of it
// reaches another replica.
package budget

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
)

// Counter counts calls per run.
type Counter interface {
	// Use records one call of run at now and returns how many calls the run
	// has made, this one included. A run whose last call is more than idle
	// ago starts over at 1.
	Use(ctx context.Context, run string, now time.Time, idle time.Duration) (int, error)
}

// DefaultIdle is how long a run may pause before the next call starts a new one.
const DefaultIdle = 5 * time.Minute

// Config sets the budget.
type Config struct {
	Limit int           // calls per run (default 20); 0 disables the budget
	Warn  int           // warn when this many calls or fewer remain (default 4)
	Idle  time.Duration // a run ends after this long without a call (0: DefaultIdle)
	// Applies reports whether a tool's calls count (nil: every tool's).
	Applies func(tool string) bool
	// Now is the clock (nil: time.Now); tests move it.
	Now func() time.Time
}

// Middleware enforces the budget on every counted tool call of a run.
func Middleware(cfg Config, counter Counter) server.ToolHandlerMiddleware {
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if cfg.Limit <= 0 || (cfg.Applies != nil && !cfg.Applies(req.Params.Name)) {
				return next(ctx, req)
			}
			used, err := counter.Use(ctx, RunOf(ctx, req), cfg.Now(), cfg.Idle)
			if err != nil {
				return mcp.NewToolResultError("tool budget unavailable: " + err.Error()), nil
			}
			remaining := cfg.Limit - used
			if remaining < 0 {
				return mcp.NewToolResultError(fmt.Sprintf("Tool budget exhausted: this task has used all %d tool calls. Do not call more tools; synthesize your answer now from what you have. (A new budget starts after %s without calls.)", cfg.Limit, cfg.Idle)), nil
			}
			res, err := next(ctx, req)
			if err != nil || res == nil {
				return res, err
			}
			switch {
			case remaining == 0:
				res.Content = append(res.Content, mcp.NewTextContent(fmt.Sprintf("Tool budget: that was the last of %d tool calls for this task. Synthesize your answer now.", cfg.Limit)))
			case remaining <= cfg.Warn:
				res.Content = append(res.Content, mcp.NewTextContent(fmt.Sprintf("Tool budget: %d of %d tool calls left for this task. Wrap up soon.", remaining, cfg.Limit)))
			}
			return res, nil
		}
	}
}

// RunOf names the run a call belongs to: its MCP session when it has one,
// else its API key and the client's name from the request's _meta (or from
// what the session recorded at initialize).
func RunOf(ctx context.Context, req mcp.CallToolRequest) string {
	s := server.ClientSessionFromContext(ctx)
	switch {
	case s != nil && s.SessionID() == stdioSessionID:
		// Every stdio server names its one session "stdio": with a shared
		// NATS KV, two desktop agents would count as one run. The process is
		// the connection, so its random id names the session.
		return "stdio:" + processID
	case s != nil && s.SessionID() != "":
		return "session:" + s.SessionID()
	}
	key := ""
	if p, ok := auth.FromContext(ctx); ok {
		key = p.KeyName
	}
	client := ""
	if req.Params.Meta != nil {
		if ci, ok := req.Params.Meta.AdditionalFields[mcp.MetaKeyClientInfo].(map[string]any); ok {
			client, _ = ci["name"].(string)
		}
	}
	if withInfo, ok := s.(server.SessionWithClientInfo); ok && client == "" {
		client = withInfo.GetClientInfo().Name
	}
	return "key:" + key + "\x00client:" + client
}

// stdioSessionID is the id mcp-go gives the one session of a stdio server.
const stdioSessionID = "stdio"

// processID tells this process's stdio session from other processes'.
var processID = func() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}()

// Memory counts in this process only (stdio, tests, a single replica).
type Memory struct {
	mu   sync.Mutex
	runs map[string]memoryRun
}

type memoryRun struct {
	calls int
	last  time.Time
}

// Use implements Counter.
func (m *Memory) Use(_ context.Context, run string, now time.Time, idle time.Duration) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[string]memoryRun{}
	}
	if len(m.runs) > 10000 { // forget ended runs
		for k, r := range m.runs {
			if now.Sub(r.last) > idle {
				delete(m.runs, k)
			}
		}
	}
	r := m.runs[run]
	if now.Sub(r.last) > idle {
		r.calls = 0
	}
	r.calls++
	r.last = now
	m.runs[run] = r
	return r.calls, nil
}
