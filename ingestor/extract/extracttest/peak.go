package extracttest

import (
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// SamplePeakHeap samples the heap's live objects every 5 ms until the
// function it returns is called, which returns the most seen (bytes): the
// peak a reader's benchmark reports, as Go keeps no peak of its own.
func SamplePeakHeap() func() uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak.Load()
	}
}
