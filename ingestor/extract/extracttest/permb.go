package extracttest

import (
	"runtime/metrics"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// BenchPerMB runs read b.N times and reports what a long file's benchmark
// compares with a short one's: the time per MB of extracted text, wall
// (ms/MB) and CPU of the process and its children, such as poppler's tools
// (cpu-ms/MB, less disturbed by other work on a shared machine), the text's
// size (MB-text) and the peak of the Go heap (peak-heap-MiB, sampled every
// 5 ms: Go keeps no peak of its own).
func BenchPerMB(b *testing.B, read func() (*extract.Document, error)) {
	b.Helper()
	var text int
	cpu := cpuSpent()
	peak := samplePeakHeap()
	for b.Loop() {
		doc, err := read()
		if err != nil {
			b.Fatal(err)
		}
		text = len(doc.Text)
	}
	mb := float64(text) / (1 << 20)
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/mb, "ms/MB")
	b.ReportMetric(float64((cpuSpent()-cpu).Milliseconds())/float64(b.N)/mb, "cpu-ms/MB")
	b.ReportMetric(mb, "MB-text")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
}

// cpuSpent is the CPU time of this process and of its children that ended.
func cpuSpent() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}

// samplePeakHeap samples the heap's live objects until the function it
// returns is called, which returns the most seen (bytes).
func samplePeakHeap() func() uint64 {
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
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
