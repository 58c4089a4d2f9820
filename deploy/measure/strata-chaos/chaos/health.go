package chaos

import (
	"context"
	"strings"
	"sync/atomic"
	"time"
)

// HealthEvery is how often the readers check each queryd replica's
// readiness.
const HealthEvery = 250 * time.Millisecond

// healthChecks follows each replica's /readyz as the load balancer in front
// of queryd does (Kubernetes' readiness probe in deploy/k8s, an HTTP load
// balancer's health check): a replica that failed its last check gets no
// new reads until it passes one. A process restarted after a kill thus
// takes reads only once it says it can serve them, not as soon as it
// listens. Reads already sent are not moved: serveRead retries them.
type healthChecks struct {
	readyURLs []string
	ready     []atomic.Bool
	check     func(ctx context.Context, url string) error
}

// newHealthChecks checks the replicas whose MCP endpoints are mcpURLs
// (http://host:port/mcp); every replica counts as ready until checked.
func newHealthChecks(mcpURLs []string, check func(ctx context.Context, url string) error) *healthChecks {
	h := &healthChecks{ready: make([]atomic.Bool, len(mcpURLs)), check: check}
	for i, u := range mcpURLs {
		h.readyURLs = append(h.readyURLs, strings.TrimSuffix(u, "/mcp")+"/readyz")
		h.ready[i].Store(true)
	}
	return h
}

// run checks every replica each interval until ctx ends.
func (h *healthChecks) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		h.checkAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (h *healthChecks) checkAll(ctx context.Context) {
	done := make(chan struct{}, len(h.readyURLs))
	for i, u := range h.readyURLs {
		go func() {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			h.ready[i].Store(h.check(cctx, u) == nil)
			done <- struct{}{}
		}()
	}
	for range h.readyURLs {
		<-done
	}
}

// route is the replica a new read goes to: preferred if it is ready,
// else the next ready one, else preferred (with no replica ready, the
// read is tried anyway and serveRead moves it on).
func (h *healthChecks) route(preferred int) int {
	n := len(h.ready)
	for k := range n {
		if r := (preferred + k) % n; h.ready[r].Load() {
			return r
		}
	}
	return preferred
}
