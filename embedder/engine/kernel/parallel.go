package kernel

import (
	"context"
	"sync"
	"sync/atomic"
)

// Parallel runs fn(0..n-1) on up to workers goroutines (the caller's
// included), stopping at the first error or when ctx is done.
func Parallel(ctx context.Context, workers, n int, fn func(k int) error) error {
	workers = max(1, min(workers, n))
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		failed   atomic.Bool
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		failed.Store(true)
	}
	work := func() {
		defer wg.Done()
		for !failed.Load() {
			k := int(next.Add(1) - 1)
			if k >= n {
				return
			}
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			if err := fn(k); err != nil {
				fail(err)
				return
			}
		}
	}
	wg.Add(workers)
	for w := 1; w < workers; w++ {
		go work()
	}
	work()
	wg.Wait()
	return firstErr
}
