package toolnotify

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fakeClock advances by step on every reading, so a call "takes" step.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time { c.t = c.t.Add(c.step); return c.t }

func TestMiddlewareNotifiesFailuresAndSlowCalls(t *testing.T) {
	for _, c := range []struct {
		name    string
		took    time.Duration
		res     *mcp.CallToolResult
		err     error
		want    string // "" = no notification
		wantErr string
	}{
		{"fast success", 10 * time.Millisecond, mcp.NewToolResultText("ok"), nil, "", ""},
		{"slow success", 3 * time.Second, mcp.NewToolResultText("ok"), nil, "tool search took 3s, more than the 2s", ""},
		{"error result", 5 * time.Millisecond, mcp.NewToolResultError("project \"nope\" not found"), nil,
			"tool search failed after 5ms: project \"nope\" not found", "project \"nope\" not found"},
		{"handler error", 40 * time.Millisecond, nil, errors.New("weaviate: connection refused"), "tool search failed after 40ms: weaviate: connection refused", "weaviate: connection refused"},
		{"slow failure is one failure", 5 * time.Second, mcp.NewToolResultError("boom"), nil, "tool search failed after 5s: boom", "boom"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent []mcp.LoggingMessageNotification
			mw := Middleware(Config{Slow: 2 * time.Second, now: (&fakeClock{step: c.took}).now,
				Send: func(_ context.Context, n mcp.LoggingMessageNotification) error { sent = append(sent, n); return nil }})
			handler := mw(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return c.res, c.err })
			req := mcp.CallToolRequest{}
			req.Params.Name = "search"
			res, err := handler(context.Background(), req)
			if res != c.res || !errors.Is(err, c.err) {
				t.Fatalf("the answer must pass unchanged: %v %v", res, err)
			}
			if c.want == "" {
				if len(sent) != 0 {
					t.Fatalf("notified %v", sent)
				}
				return
			}
			if len(sent) != 1 {
				t.Fatalf("want one notification, got %v", sent)
			}
			n := sent[0]
			data := n.Params.Data.(map[string]any)
			if n.Method != "notifications/message" || n.Params.Level != mcp.LoggingLevelWarning || n.Params.Logger != Logger ||
				!strings.HasPrefix(data["message"].(string), c.want) || data["tool"] != "search" || data["duration_ms"] != c.took.Milliseconds() {
				t.Fatalf("notification %+v, want message %q", n, c.want)
			}
			if got, _ := data["error"].(string); got != c.wantErr {
				t.Fatalf("error field %q, want %q", got, c.wantErr)
			}
		})
	}
}

func TestZeroThresholdReportsOnlyFailures(t *testing.T) {
	sent := 0
	mw := Middleware(Config{now: (&fakeClock{step: time.Hour}).now,
		Send: func(context.Context, mcp.LoggingMessageNotification) error { sent++; return nil }})
	_, _ = mw(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})(context.Background(), mcp.CallToolRequest{})
	if sent != 0 {
		t.Fatalf("a slow call with no threshold was reported")
	}
}

func TestSendErrorsAreReportedUnlessTheClientDoesNotListen(t *testing.T) {
	for _, c := range []struct {
		err      error
		reported bool
	}{
		{server.ErrNotificationNotInitialized, false},
		{server.ErrSessionDoesNotSupportLogging, false},
		{server.ErrNotificationChannelBlocked, true},
	} {
		var reported error
		mw := Middleware(Config{OnSendError: func(_ string, err error) { reported = err },
			Send: func(context.Context, mcp.LoggingMessageNotification) error { return c.err }})
		_, _ = mw(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("boom"), nil
		})(context.Background(), mcp.CallToolRequest{})
		if (reported != nil) != c.reported {
			t.Errorf("%v: reported %v, want reported=%v", c.err, reported, c.reported)
		}
	}
}

func TestLongErrorTextIsShortened(t *testing.T) {
	res := mcp.NewToolResultError(strings.Repeat("é", 2000))
	if got := resultText(res); len([]rune(got)) != 503 || !strings.HasSuffix(got, "...") {
		t.Fatalf("shortened to %d runes", len([]rune(got)))
	}
}
