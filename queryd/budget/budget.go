// Package budget limits tool calls per MCP session, as Knowledge Stack's
// agent tools do: every answer from the warning threshold on tells the agent
// to wrap up, and once the budget is spent the agent is told to answer now.
// Counters live in NATS KV when queryd has NATS, so every replica behind one
// URL counts the same session together.
package budget

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/nats-io/nats.go/jetstream"
)

// Counter counts calls per session.
type Counter interface {
	// Use records one call and returns how many calls the session has made, this one included.
	Use(ctx context.Context, session string) (int, error)
}

// Config sets the budget.
type Config struct {
	Limit int // calls per session (default 20); 0 disables the budget
	Warn  int // warn when this many calls or fewer remain (default 4)
}

// Middleware enforces the budget on every tool call of a session.
func Middleware(cfg Config, counter Counter) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if cfg.Limit <= 0 {
				return next(ctx, req)
			}
			session := ""
			if s := server.ClientSessionFromContext(ctx); s != nil {
				session = s.SessionID()
			}
			if session == "" { // a client without a session cannot be counted
				return next(ctx, req)
			}
			used, err := counter.Use(ctx, session)
			if err != nil {
				return mcp.NewToolResultError("tool budget unavailable: " + err.Error()), nil
			}
			remaining := cfg.Limit - used
			if remaining < 0 {
				return mcp.NewToolResultError(fmt.Sprintf("Tool budget exhausted: this session has used all %d tool calls. Do not call more tools; synthesize your answer now from what you have.", cfg.Limit)), nil
			}
			res, err := next(ctx, req)
			if err != nil || res == nil {
				return res, err
			}
			switch {
			case remaining == 0:
				res.Content = append(res.Content, mcp.NewTextContent(fmt.Sprintf("Tool budget: that was the last of %d tool calls for this session. Synthesize your answer now.", cfg.Limit)))
			case remaining <= cfg.Warn:
				res.Content = append(res.Content, mcp.NewTextContent(fmt.Sprintf("Tool budget: %d of %d tool calls left for this session. Wrap up soon.", remaining, cfg.Limit)))
			}
			return res, nil
		}
	}
}

// Memory counts in this process only (stdio, tests, a single replica).
type Memory struct {
	mu     sync.Mutex
	counts map[string]int
}

// Use implements Counter.
func (m *Memory) Use(_ context.Context, session string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[string]int{}
	}
	m.counts[session]++
	return m.counts[session], nil
}

// Bucket is the NATS KV bucket of the shared counters.
const Bucket = "strata_tool_budget"

// KV counts in NATS KV with compare-and-set, shared by every replica.
type KV struct{ kv jetstream.KeyValue }

// OpenKV creates or opens the counter bucket; entries expire after ttl (sessions end).
func OpenKV(ctx context.Context, js jetstream.JetStream, replicas int, ttl time.Duration) (*KV, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: Bucket, Description: "Strata: tool calls per MCP session",
		History: 1, TTL: ttl, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", Bucket, err)
	}
	return &KV{kv: kv}, nil
}

// Use implements Counter.
func (k *KV) Use(ctx context.Context, session string) (int, error) {
	key := keyOf(session)
	for range 20 {
		e, err := k.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			if _, err := k.kv.Create(ctx, key, encode(1)); err == nil {
				return 1, nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return 0, fmt.Errorf("count session: %w", err)
			}
		case err != nil:
			return 0, fmt.Errorf("count session: %w", err)
		default:
			n := decode(e.Value()) + 1
			if _, err := k.kv.Update(ctx, key, encode(n), e.Revision()); err == nil {
				return n, nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return 0, fmt.Errorf("count session: %w", err)
			}
		}
	}
	return 0, errors.New("count session: too much contention")
}

// keyOf keeps only KV-safe characters of a session id.
func keyOf(session string) string {
	b := make([]byte, 0, len(session))
	for i := 0; i < len(session) && len(b) < 128; i++ {
		c := session[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "empty"
	}
	return string(b)
}

func encode(n int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func decode(b []byte) int {
	if len(b) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(b))
}
