package progress

import (
	"sync"
	"time"
)

// Every calls show every d in its own goroutine until the returned stop is
// called, for a long job that reports how far it is on a clock rather
// than on each piece of work. stop waits until show is no longer running.
func Every(d time.Duration, show func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				show()
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
