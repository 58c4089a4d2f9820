package chaos

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestHealthChecksRouteToReadyReplicas(t *testing.T) {
	var mu sync.Mutex
	down := map[string]bool{}
	h := newHealthChecks([]string{"http://a:1/mcp", "http://b:2/mcp", "http://c:3/mcp"}, func(_ context.Context, url string) error {
		mu.Lock()
		defer mu.Unlock()
		if down[url] {
			return errors.New("503 catalog of commits loading")
		}
		return nil
	})
	if got := h.route(1); got != 1 {
		t.Fatalf("unchecked replicas: route(1) = %d, want 1", got)
	}
	down["http://b:2/readyz"] = true
	h.checkAll(context.Background())
	if got := h.route(1); got != 2 {
		t.Errorf("b not ready: route(1) = %d, want 2 (the next ready)", got)
	}
	if got := h.route(0); got != 0 {
		t.Errorf("route(0) = %d, want 0", got)
	}
	down["http://a:1/readyz"], down["http://c:3/readyz"] = true, true
	h.checkAll(context.Background())
	if got := h.route(2); got != 2 {
		t.Errorf("none ready: route(2) = %d, want 2 (tried anyway)", got)
	}
	clear(down)
	h.checkAll(context.Background())
	if got := h.route(1); got != 1 {
		t.Errorf("b ready again: route(1) = %d, want 1", got)
	}
}
