package kernel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestParallel(t *testing.T) {
	var sum atomic.Int64
	if err := Parallel(context.Background(), 4, 100, func(k int) error { sum.Add(int64(k)); return nil }); err != nil || sum.Load() != 4950 {
		t.Fatalf("sum %d err %v", sum.Load(), err)
	}
	boom := errors.New("boom")
	var ran atomic.Int64
	if err := Parallel(context.Background(), 1, 100, func(k int) error {
		ran.Add(1)
		if k == 3 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) || ran.Load() != 4 {
		t.Fatalf("err %v after %d calls: want boom after 4", err, ran.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Parallel(ctx, 2, 10, func(int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
