package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) Observe(outcome string, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[outcome]++
}

func (c *counts) get(outcome string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[outcome]
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

type recorder struct {
	mu      sync.Mutex
	seen    []string
	entered chan struct{} // a "block" event started
	release chan struct{}
}

func (r *recorder) handle(ctx context.Context, data []byte) error {
	switch string(data) {
	case "block":
		r.entered <- struct{}{}
		select {
		case <-r.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	case "bad":
		return errors.New("malformed bucket event")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, string(data))
	return nil
}

func connect(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(serverstest.NATS(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func publish(t *testing.T, nc *nats.Conn, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		if err := nc.Publish("test.live", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// On a real nats-server: two replicas in one queue group process each live
// event once; a failure is counted, not retried; wait returns once ctx ends.
func TestListenerQueueGroup(t *testing.T) {
	nc := connect(t)
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &counts{n: map[string]int{}}
	var waits []func()
	for range 2 {
		w, err := New(Config{Subject: "test.live", Queue: "ingestor", Concurrency: 2, Backlog: 8, Timeout: 5 * time.Second},
			rec.handle, obs, slog.New(slog.DiscardHandler)).Start(ctx, nc)
		if err != nil {
			t.Fatal(err)
		}
		waits = append(waits, w)
	}
	publish(t, nc, "a", "b", "bad", "c")
	waitFor(t, "three processed and one failed", func() bool { return obs.get("processed") == 3 && obs.get("failed") == 1 })
	time.Sleep(50 * time.Millisecond) // a second delivery would show by now
	rec.mu.Lock()
	if len(rec.seen) != 3 || obs.get("processed") != 3 {
		t.Fatalf("processed %v: want each event once across the queue group", rec.seen)
	}
	rec.mu.Unlock()
	cancel()
	done := make(chan struct{})
	go func() {
		for _, w := range waits {
			w()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return after ctx ended")
	}
}

// With its worker busy and its backlog full, a listener drops events rather
// than hold them: their durable copies arrive from JetStream.
func TestListenerDropsWhenFull(t *testing.T) {
	nc := connect(t)
	rec := &recorder{entered: make(chan struct{}, 1), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &counts{n: map[string]int{}}
	wait, err := New(Config{Subject: "test.live", Queue: "ingestor", Concurrency: 1, Backlog: 2, Timeout: 5 * time.Second},
		rec.handle, obs, slog.New(slog.DiscardHandler)).Start(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, nc, "block")
	<-rec.entered
	publish(t, nc, "1", "2", "3", "4", "5")
	waitFor(t, "three dropped", func() bool { return obs.get("dropped") == 3 })
	close(rec.release)
	waitFor(t, "the block and the two queued processed", func() bool { return obs.get("processed") == 3 })
	cancel()
	wait()
	if obs.get("dropped") != 3 {
		t.Fatalf("dropped %d, want 3", obs.get("dropped"))
	}
}
