// Package toolnotify tells the MCP client why a tool call went wrong: when a
// call fails or runs slower than a threshold, a notifications/message log
// notification at level warning goes to the client that made the call, so an
// agent (and the person watching it) sees the cause, not only a late or
// failed answer.
//
// The client's level is respected: mcp-go sends the notification only when
// the session's level (logging/setLevel; mcp-go's default is error) or, on
// protocol 2026-07-28, the level the request declares is warning or lower. On
// streamable HTTP the notification travels in the SSE stream of the call's own
// response, which is why it must be sent with the call's context.
package toolnotify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Logger names the notifications' source in their "logger" field.
const Logger = "strata"

// SendFunc delivers one log notification to the client of the call in ctx.
type SendFunc func(ctx context.Context, n mcp.LoggingMessageNotification) error

// Config says when to notify.
type Config struct {
	// Slow is the duration above which a successful call is reported as slow;
	// 0 reports only failures.
	Slow time.Duration
	// Send delivers a notification; nil sends it through the MCP server
	// that handles the call (server.ServerFromContext).
	Send SendFunc
	// OnSendError is told when a notification could not be delivered for a
	// reason other than the client not wanting it; nil ignores it.
	OnSendError func(tool string, err error)
	now         func() time.Time // for tests
}

// Middleware wraps every tool handler: it times the call and notifies the
// client of a failure or a slow answer, then returns the answer unchanged.
func Middleware(cfg Config) server.ToolHandlerMiddleware {
	send := cfg.Send
	if send == nil {
		send = sendThroughServer
	}
	now := cfg.now
	if now == nil {
		now = time.Now
	}
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			start := now()
			res, err := next(ctx, req)
			took := now().Sub(start)
			if n, ok := notification(req.Params.Name, took, cfg.Slow, res, err); ok {
				if serr := send(ctx, n); serr != nil && !unwanted(serr) && cfg.OnSendError != nil {
					cfg.OnSendError(req.Params.Name, serr)
				}
			}
			return res, err
		}
	}
}

// notification is what to tell the client about one call, if anything.
func notification(tool string, took, slow time.Duration, res *mcp.CallToolResult, err error) (mcp.LoggingMessageNotification, bool) {
	if err == nil && (res == nil || !res.IsError) && (slow <= 0 || took <= slow) {
		return mcp.LoggingMessageNotification{}, false // most calls: nothing to tell
	}
	data := map[string]any{"tool": tool, "duration_ms": took.Milliseconds()}
	switch {
	case err != nil:
		data["error"] = err.Error()
		data["message"] = fmt.Sprintf("tool %s failed after %s: %v", tool, round(took), err)
	case res != nil && res.IsError:
		text := resultText(res)
		data["error"] = text
		data["message"] = fmt.Sprintf("tool %s failed after %s: %s", tool, round(took), text)
	case slow > 0 && took > slow:
		data["slow_threshold_ms"] = slow.Milliseconds()
		data["message"] = fmt.Sprintf("tool %s took %s, more than the %s the server expects (a busy index or a slow embedding provider)", tool, round(took), slow)
	default:
		return mcp.LoggingMessageNotification{}, false
	}
	return mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, Logger, data), true
}

func sendThroughServer(ctx context.Context, n mcp.LoggingMessageNotification) error {
	s := server.ServerFromContext(ctx)
	if s == nil {
		return errors.New("no MCP server in the call's context")
	}
	if err := s.SendLogMessageToClient(ctx, n); err != nil {
		return err
	}
	awaitForwarded(ctx)
	return nil
}

// awaitForwarded waits (briefly, boundedly) until the transport has taken the
// notification off the session's queue. mcp-go 1.2.1's streamable HTTP
// transport drops a notification its forwarder dequeued just as the handler
// returned: the response path wins the stream's lock, ends the request, and
// the forwarder then discards what it holds. Waiting until the queue is empty
// plus a moment for the forwarder to take that lock makes the notification
// reach the SSE stream before the answer does; only failed or slow calls pay
// the millisecond. A transport whose sessions deliver what is queued when
// the call returns (queryd/mcphttp: DeliversQueued) needs no wait.
func awaitForwarded(ctx context.Context) {
	session := server.ClientSessionFromContext(ctx)
	if session == nil {
		return
	}
	if d, ok := session.(interface{ DeliversQueued() bool }); ok && d.DeliversQueued() {
		return
	}
	queue := session.NotificationChannel()
	for deadline := time.Now().Add(100 * time.Millisecond); len(queue) > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Millisecond)
}

// unwanted reports errors that only mean the client cannot or did not ask to
// receive log notifications (no initialized session, a transport without
// logging): not worth reporting.
func unwanted(err error) bool {
	return errors.Is(err, server.ErrNotificationNotInitialized) || errors.Is(err, server.ErrSessionDoesNotSupportLogging)
}

// resultText is an error result's text, shortened to what fits in a log line.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	s := b.String()
	if r := []rune(s); len(r) > 500 {
		s = string(r[:500]) + "..."
	}
	return s
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}
