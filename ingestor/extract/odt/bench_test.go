package odt

import (
	"archive/zip"
	"bytes"
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// BenchmarkExtract reads a document of 4 MB of content.xml: headings,
// paragraphs with spans, lists, tables and footnotes. MB/s are of
// uncompressed XML (every part); MB/cpu-s divides the same bytes by the
// CPU time the process used, which a machine shared with other work does
// not distort as it does wall time.
func BenchmarkExtract(b *testing.B) {
	data := newDoc(bigBody(4 << 20)).zip(b)
	size := xmlBytes(b, data)
	b.SetBytes(size)
	lim := extract.DefaultLimits()
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := (Extractor{}).Extract(context.Background(), data, "bench.odt", lim); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)*float64(b.N)/1e6/(cpuTime()-start).Seconds(), "MB/cpu-s")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// xmlBytes is the uncompressed size of the XML parts of an ODT.
func xmlBytes(tb testing.TB, data []byte) int64 {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, f := range zr.File {
		if f.Name != "mimetype" {
			n += int64(f.UncompressedSize64)
		}
	}
	return n
}
