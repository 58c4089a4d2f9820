package index

// Bounded fan-out for the requests of one commit or write that may overlap.

import "sync"

// inParallel calls fn(0..n-1) on up to limit goroutines and waits for all.
func inParallel(n, limit int, fn func(i int)) {
	if n <= 1 || limit <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			fn(i)
		})
	}
	wg.Wait()
}
