package schema

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Why reads are hedged and retried (Weaviate v1.35.2, 3 nodes, replication
// factor 2): a read of a multi-tenant collection by REST first asks the Raft
// leader for the tenant's status (adapters/repos/db/multitenancy/validator.go
// ValidateTenants -> usecases/schema/manager.go TenantsShards ->
// cluster/raft_query_endpoints.go QueryTenantsShards -> Raft.Query), and so
// do schema and tenant listings. That query runs with context.Background()
// over a gRPC connection configured waitForReady (cluster/rpc/client.go
// serviceConfig). When the leader is SIGKILLed, every such read waits for a
// new leader on every node; the node that becomes leader never releases the
// reads already waiting on the dead leader's connection (only a later query
// to another leader closes it), and a follower answers them with 500
// "client connection is closing" once it learns the new leader. A read sent
// again, to any node, once a leader is elected answers at once.
const (
	// hedgeDelay is how long a read waits for its node before the same
	// read also goes to the next node (once per node).
	hedgeDelay = 750 * time.Millisecond
	// retryPause is the first pause before a read that failed (an
	// unreachable node or a 5xx answer) is sent again; it doubles up to
	// retryPauseMax, so a cluster electing a leader is not flooded.
	retryPause    = 50 * time.Millisecond
	retryPauseMax = 1500 * time.Millisecond
	// maxReadAttempts bounds how often one read is sent in all.
	maxReadAttempts = 24
)

// hedged sends a read to the preferred node and, each hedgeDelay without an
// answer, to the next node too (once per node, see hedges). A read that
// fails (the node is unreachable, answers 5xx or says it lost the leader)
// is sent again to the next node after a short pause, and once one failed,
// reads still held are sent again each retryPauseMax, until the request's
// context ends. The first other answer wins and the other attempts are
// cancelled; when none comes, the last retryable answer (or the errors) is
// returned. The whole read, every attempt of it, ends at readTimeout.
func (f *failover) hedged(req *http.Request, body []byte) (*http.Response, error) {
	ctx, cancelRead := context.WithTimeout(req.Context(), f.readTimeout)
	results := make(chan attemptResult, maxReadAttempts)
	var cancels []context.CancelFunc
	start := int(f.good.Load())
	launched, pending := 0, 0
	launch := func() {
		n := (start + launched) % len(f.hosts)
		actx, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		i := launched
		launched++
		pending++
		go func() {
			resp, err := f.attempt(actx, req, body, n, i > 0)
			results <- attemptResult{i: i, n: n, resp: resp, err: err}
		}()
	}
	cancelAll := func(except int) {
		for i, c := range cancels {
			if i != except {
				c()
			}
		}
	}

	launch()
	hedge := time.NewTimer(hedgeDelay)
	defer hedge.Stop()
	var retry <-chan time.Time
	pause, delay := retryPause, hedgeDelay
	failed := false
	var errs []error
	var last *http.Response // the last retryable answer, body buffered
	for {
		select {
		case r := <-results:
			pending--
			if r.err == nil && !retryable(r.resp) {
				f.good.Store(int64(r.n))
				cancelAll(r.i)
				go drainLosers(results, pending)
				win := cancels[r.i]
				r.resp.Body = &cancelOnClose{ReadCloser: r.resp.Body, cancel: func() { win(); cancelRead() }}
				return r.resp, nil
			}
			failed = true
			if r.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.hosts[r.n], r.err))
			} else {
				last = buffered(r.resp, last)
				cancels[r.i]()
			}
			if ctx.Err() == nil && launched < maxReadAttempts && retry == nil {
				retry = time.After(pause)
				pause = min(2*pause, retryPauseMax)
			}
		case <-retry:
			retry = nil
			if launched < maxReadAttempts {
				launch()
			}
		case <-hedge.C:
			// Past one attempt per node, a read is sent again only when
			// some attempt failed: the cluster is then in trouble, and the
			// attempts still out may be held for good. A read that is only
			// slow is not multiplied further.
			if launched < f.hedges() || (failed && launched < maxReadAttempts) {
				launch()
			}
			if launched >= f.hedges() {
				delay = min(2*delay, retryPauseMax)
			}
			hedge.Reset(delay)
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
			cancelAll(-1)
			cancelRead()
			go drainLosers(results, pending)
			return giveUp(last, errs)
		}
		if pending == 0 && retry == nil {
			cancelAll(-1)
			cancelRead()
			return giveUp(last, errs)
		}
	}
}

// leaderLost marks the answers Weaviate gives to a read that needed the
// Raft leader while there was none: object and schema reads wrap them in
// 500, tenant listings in 422 (adapters/handlers/rest/handlers_schema.go
// getTenants).
var leaderLost = []string{"failed to execute query", "leader not found", "connection is closing"}

// retryable reports answers worth asking again, maybe of another node: 5xx,
// and a 422 that says the leader was lost (its body is read, then kept).
func retryable(resp *http.Response) bool {
	if resp.StatusCode >= 500 {
		return true
	}
	if resp.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return LeaderLost(string(b))
}

// hedges is how many attempts a read gets before any failed: one per node,
// and two with a single node, since the read held may be one that node
// will never answer (the one it sent to a dead leader) while the same read
// sent again is answered at once.
func (f *failover) hedges() int { return max(len(f.hosts), 2) }

// giveUp returns the last retryable answer, or else the errors of every attempt.
func giveUp(last *http.Response, errs []error) (*http.Response, error) {
	if last != nil {
		return last, nil
	}
	return nil, errors.Join(errs...)
}

// buffered reads a retryable answer into memory (so its attempt can be
// cancelled) and closes the one it replaces.
func buffered(resp, previous *http.Response) *http.Response {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if previous != nil {
		previous.Body.Close()
	}
	return resp
}

type attemptResult struct {
	i    int // the attempt's index in launch order
	n    int // the host it went to
	resp *http.Response
	err  error
}

// drainLosers closes the bodies of answers that came too late.
func drainLosers(results <-chan attemptResult, pending int) {
	for range pending {
		if r := <-results; r.err == nil {
			r.resp.Body.Close()
		}
	}
}

// cancelOnClose releases a winning attempt's context with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
