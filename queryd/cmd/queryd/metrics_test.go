package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

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
