package main

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/shared/metrics"
)

// TestGRPCFallbacksMetric: /metrics shows the store's count of reads gRPC
// failed, as it is when scraped.
func TestGRPCFallbacksMetric(t *testing.T) {
	reg := metrics.New()
	var n int64
	grpcFallbacks(reg, func() int64 { return n })
	scrape := func() string {
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	if !strings.Contains(scrape(), "strata_queryd_weaviate_grpc_fallbacks_total 0\n") {
		t.Fatal("no zero count before any fallback")
	}
	n = 3
	if out := scrape(); !strings.Contains(out, "strata_queryd_weaviate_grpc_fallbacks_total 3\n") {
		t.Fatalf("count not updated:\n%s", out)
	}
}

// TestToolMetrics: calls are counted by tool and outcome, an outcome's
// series appearing with its first call, and timed by tool.
func TestToolMetrics(t *testing.T) {
	reg := metrics.New()
	mw := toolMetrics(reg)
	ok := mw(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	failed := mw(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("no"), nil
	})
	broken := mw(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("broken")
	})
	req := func(name string) mcp.CallToolRequest {
		r := mcp.CallToolRequest{}
		r.Params.Name = name
		return r
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	for range 3 {
		_, _ = ok(context.Background(), req("read"))
	}
	if out := scrape(); !strings.Contains(out, `strata_queryd_tool_calls_total{outcome="ok",tool="read"} 3`) ||
		strings.Contains(out, `outcome="error",tool="read"`) || !strings.Contains(out, `strata_queryd_tool_seconds_count{tool="read"} 3`) {
		t.Fatalf("after 3 good calls:\n%s", out)
	}
	_, _ = failed(context.Background(), req("read"))
	_, _ = broken(context.Background(), req("read"))
	_, _ = ok(context.Background(), req("find"))
	out := scrape()
	for _, want := range []string{`strata_queryd_tool_calls_total{outcome="error",tool="read"} 2`, `strata_queryd_tool_calls_total{outcome="ok",tool="read"} 3`,
		`strata_queryd_tool_calls_total{outcome="ok",tool="find"} 1`, `strata_queryd_tool_seconds_count{tool="read"} 5`} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %s in:\n%s", want, out)
		}
	}
}
