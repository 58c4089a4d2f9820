package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// HedgeShare is the share of reads that may be hedged over time, and
// HedgeBurst how many hedges may come at once after a quiet spell.
const (
	HedgeShare = 0.05
	HedgeBurst = 10
)

// hedgeBudget bounds hedged reads to a share of all reads, as gRPC's
// retry throttling does: every read earns share of a token, a hedge costs
// one, and at most burst tokens are saved. Without a bound, hedges add
// load exactly when the cluster is slow, and a slow cluster then stays
// slow.
type hedgeBudget struct {
	mu           sync.Mutex
	tokens       float64
	share, burst float64
}

func newHedgeBudget(share, burst float64) *hedgeBudget {
	return &hedgeBudget{tokens: burst, share: share, burst: burst}
}

// read earns a read's share.
func (b *hedgeBudget) read() {
	b.mu.Lock()
	b.tokens = min(b.burst, b.tokens+b.share)
	b.mu.Unlock()
}

// spend takes a hedge's token, if there is one.
func (b *hedgeBudget) spend() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// attemptFunc makes one attempt of a read on one replica.
type attemptFunc func(ctx context.Context, replica int) error

// readOutcome is what the attempts of one read came to.
type readOutcome struct {
	Served bool
	// ServedBy is the attempt that answered (0: the first).
	ServedBy int
	// Hedged is true when a second attempt was sent because the first had
	// not answered within the hedge delay.
	Hedged bool
	// Slow is true when an attempt was still running at the deadline.
	Slow   bool
	Errors []string
}

// serveRead makes one read as a client behind a load balancer would, with
// until deadline to get an answer: the first attempt goes to replica
// first; an attempt that fails (a killed replica resets or refuses the
// connection, a tool error) is sent again at once to a replica with no
// attempt running, with a pause once every replica has been tried; and
// when the first attempt has not answered within hedgeAfter (0: never),
// the read is also sent to the next replica while the first goes on, the
// first answer winning and the other attempt cancelled (reads are
// idempotent), if budget (nil: no bound) has a hedge left. A hedge rather than a cut-off: an attempt that is slow
// may still answer in time, and one started again from scratch on a
// loaded machine is not faster. It returns once every attempt has ended.
func serveRead(parent context.Context, deadline time.Time, replicas, first int, hedgeAfter time.Duration, budget *hedgeBudget, try attemptFunc) readOutcome {
	started := time.Now()
	ctx, cancel := context.WithDeadline(context.WithoutCancel(parent), deadline)
	defer cancel()
	type result struct {
		attempt, replica int
		err              error
	}
	results := make(chan result, replicas)
	busy := make([]bool, replicas)
	attempts, running := 0, 0
	launch := func() bool {
		if !time.Now().Before(deadline) { // ctx's own timer may not have fired yet
			return false
		}
		for k := range replicas {
			replica := (first + attempts + k) % replicas
			if busy[replica] {
				continue
			}
			busy[replica] = true
			n := attempts
			attempts++
			running++
			go func() { results <- result{n, replica, try(ctx, replica)} }()
			return true
		}
		return false
	}
	var out readOutcome
	if budget != nil {
		budget.read()
	}
	launch()
	var hedge, pause <-chan time.Time
	if hedgeAfter > 0 && replicas > 1 {
		t := time.NewTimer(hedgeAfter)
		defer t.Stop()
		hedge = t.C
	}
	for running > 0 || pause != nil {
		select {
		case res := <-results:
			running--
			busy[res.replica] = false
			switch {
			case out.Served: // the other attempt, cancelled by the answer
			case res.err == nil:
				out.Served, out.ServedBy = true, res.attempt
				cancel()
			default:
				out.Errors = append(out.Errors, fmt.Sprintf("queryd-%d after %s: %v", res.replica+1, time.Since(started).Round(time.Millisecond), res.err))
				// An attempt cut by the read's deadline was slow, whatever
				// its error says: a response body cut mid-read fails with
				// "use of closed network connection", not the deadline.
				if errors.Is(res.err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
					out.Slow = true
					continue
				}
				if running > 0 {
					continue // the hedge is still running: its answer may come
				}
				if attempts < replicas {
					launch()
					continue
				}
				// Every replica failed: do not spin.
				if left := time.Until(deadline); left > 0 {
					pause = time.After(min(100*time.Millisecond, left))
				}
			}
		case <-pause:
			pause = nil
			launch()
		case <-hedge:
			hedge = nil
			if !out.Served && attempts == 1 && running == 1 && (budget == nil || budget.spend()) {
				out.Hedged = launch()
			}
		}
	}
	return out
}
