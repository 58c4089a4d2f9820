package tick

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestEveryCallsUntilStopped(t *testing.T) {
	var n atomic.Int64
	stop := Every(time.Millisecond, func() bool { n.Add(1); return true })
	waitCalls(t, &n, 3)
	stop()
	stop() // a second stop is harmless
	// A call under way at the stop ends.
	time.Sleep(5 * time.Millisecond)
	after := n.Load()
	time.Sleep(10 * time.Millisecond) // deliberately: ten ticks in which fn must not be called
	if n.Load() != after {
		t.Fatalf("fn called after stop: %d, then %d", after, n.Load())
	}
}

func TestEveryEndsWhenFnSaysSo(t *testing.T) {
	var n atomic.Int64
	stop := Every(time.Millisecond, func() bool { return n.Add(1) < 2 })
	defer stop()
	waitCalls(t, &n, 2)
	time.Sleep(20 * time.Millisecond) // deliberately: twenty ticks in which fn must not be called again
	if got := n.Load(); got != 2 {
		t.Fatalf("fn called %d times, want 2", got)
	}
}

// waitCalls waits until fn was called at least want times.
func waitCalls(t *testing.T, n *atomic.Int64, want int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); n.Load() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after 30 s waiting for %d calls of fn: %d so far", want, n.Load())
		}
	}
}
