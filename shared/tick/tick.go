// Package tick calls a function on a clock in the background while other
// work goes on: a message kept in progress, a lease renewed, a progress
// line redrawn.
package tick

import (
	"sync"
	"time"
)

// Every calls fn every d in its own goroutine until the returned stop is
// called or fn returns false. stop may be called more than once; it does
// not wait for a call of fn under way (state fn shares is the caller's to
// guard).
func Every(d time.Duration, fn func() bool) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if !fn() {
					return
				}
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}
