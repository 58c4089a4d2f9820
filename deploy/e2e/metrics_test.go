package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
)

// metric returns the value of one sample line of a service's /metrics.
func metric(t *testing.T, port int, sample string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no %s on port %d:\n%.2000s", sample, port, body)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestMetrics: every service exposes Prometheus metrics that move with work.
func TestMetrics(t *testing.T) {
	h := start(t)
	h.put("acme/m1.md", "# M\n\nmetricword\n")
	h.put("acme/m2.md", "# M\n\nmetricword two\n")
	h.settle()
	h.call("search_keyword", map[string]any{"query": "metricword"})
	p := h.stack.Ports()
	for _, c := range []struct {
		port   int
		sample string
		min    float64
	}{
		{p.Ingestor, `strata_ingestor_messages_total{outcome="acked"}`, 2},
		{p.Indexer, `strata_indexer_messages_total{outcome="acked"}`, 2},
		{p.Embedder, `strata_embedder_messages_total{outcome="acked"}`, 2},
		{p.Ingestor, `strata_ingestor_processing_seconds_count`, 2},
		{p.Queryd, `strata_queryd_tool_calls_total{outcome="ok",tool="search_keyword"}`, 1},
	} {
		if v := metric(t, c.port, c.sample); v < c.min {
			t.Errorf("%s = %v, want >= %v", c.sample, v, c.min)
		}
	}
	metric(t, p.Indexer, "strata_indexer_consumer_pending_messages") // present (0 once settled)
}
