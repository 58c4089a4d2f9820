package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

// waitUntil polls cond every 100 ms until it holds. If it does not within
// deadline, the test fails naming what it waited for and the last state
// cond described. Size deadlines for a loaded 2-core machine (60-90 s for
// anything that goes through the pipeline).
func waitUntil(t testing.TB, what string, deadline time.Duration, cond func() (ok bool, state string)) {
	t.Helper()
	waitEvery(t, what, 100*time.Millisecond, deadline, cond)
}

// waitEvery is waitUntil polling every interval: a short one catches a
// state that does not last (work queued in a stage).
func waitEvery(t testing.TB, what string, interval, deadline time.Duration, cond func() (ok bool, state string)) {
	t.Helper()
	start := time.Now()
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Since(start) > deadline {
			t.Fatalf("gave up after %s waiting for %s; last seen: %s", deadline.Round(time.Millisecond), what, state)
		}
		time.Sleep(interval) // the poll interval
	}
}

// awaitIngested waits until the ingestor has acknowledged every message of
// the objects stream up to seq (a reindex request is handled: whatever it
// re-emits is in the stream), then until the pipeline settles.
func (h *harness) awaitIngested(seq uint64) {
	h.t.Helper()
	ctx := context.Background()
	waitUntil(h.t, fmt.Sprintf("the ingestor to acknowledge %s up to sequence %d", pipeline.ObjectsStream, seq), 90*time.Second, func() (bool, string) {
		c, err := h.js.Consumer(ctx, pipeline.ObjectsStream, pipeline.IngestorConsumer)
		if err != nil {
			return false, err.Error()
		}
		ci, err := c.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return ci.AckFloor.Stream >= seq, fmt.Sprintf("ack floor %d, %d pending, %d in flight", ci.AckFloor.Stream, ci.NumPending, ci.NumAckPending)
	})
	h.settle()
}
