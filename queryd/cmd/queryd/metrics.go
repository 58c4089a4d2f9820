package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-kb/strata/shared/metrics"
)

// toolMetrics counts tool calls by tool and outcome and times them.
func toolMetrics(reg *metrics.Registry) server.ToolHandlerMiddleware {
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_queryd_tool_calls_total", Help: "MCP tool calls, by tool and outcome (ok or error).",
	}, []string{"tool", "outcome"})
	seconds := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "strata_queryd_tool_seconds", Help: "Time to answer one tool call.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14), // 1 ms .. 8 s
	}, []string{"tool"})
	reg.MustRegister(calls, seconds)
	// A tool's series, looked up once: WithLabelValues hashes the labels
	// and takes the vector's lock on every call.
	// (An outcome's series appears with the tool's first call of it.)
	type series struct {
		outcomes [2]atomic.Pointer[prometheus.Counter] // ok, error
		seconds  prometheus.Observer
	}
	var byTool sync.Map // tool name -> *series
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			start := time.Now()
			res, err := next(ctx, req)
			name := req.Params.Name
			v, ok := byTool.Load(name)
			if !ok {
				v, _ = byTool.LoadOrStore(name, &series{seconds: seconds.WithLabelValues(name)})
			}
			s := v.(*series)
			outcome := 0
			if err != nil || (res != nil && res.IsError) {
				outcome = 1
			}
			c := s.outcomes[outcome].Load()
			if c == nil {
				counter := calls.WithLabelValues(name, [2]string{"ok", "error"}[outcome])
				c = &counter
				s.outcomes[outcome].Store(c)
			}
			(*c).Inc()
			s.seconds.Observe(time.Since(start).Seconds())
			return res, err
		}
	}
}

// grpcFallbacks counts the Weaviate reads that gRPC failed and GraphQL
// answered (store.GRPCFailures): above zero, the node -weaviate-grpc names
// is unreachable or refuses, and reads cost a GraphQL query more.
func grpcFallbacks(reg *metrics.Registry, failures func() int64) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "strata_queryd_weaviate_grpc_fallbacks_total", Help: "Weaviate reads gRPC failed and GraphQL answered.",
	}, func() float64 { return float64(failures()) }))
}
