package tick

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestEveryCallsUntilStopped(t *testing.T) {
	var n atomic.Int64
	stop := Every(time.Millisecond, func() bool { n.Add(1); return true })
	for n.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	stop()
	stop() // a second stop is harmless
	time.Sleep(5 * time.Millisecond)
	after := n.Load()
	time.Sleep(10 * time.Millisecond)
	if n.Load() != after {
		t.Fatalf("fn called after stop: %d, then %d", after, n.Load())
	}
}

func TestEveryEndsWhenFnSaysSo(t *testing.T) {
	var n atomic.Int64
	stop := Every(time.Millisecond, func() bool { return n.Add(1) < 2 })
	defer stop()
	time.Sleep(20 * time.Millisecond)
	if got := n.Load(); got != 2 {
		t.Fatalf("fn called %d times, want 2", got)
	}
}
