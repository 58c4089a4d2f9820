package pdf

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// contender is one way of reading a file, timed beside the others.
type contender struct {
	name string
	run  func(data []byte, file string) error
}

// contenders are pdftotext alone (the floor) and Strata's extractor in
// each configuration of scratchVariants.
func contenders(tb testing.TB, limit time.Duration, maxMemory int64) []contender {
	lim := testLimits()
	lim.Timeout, lim.MaxMemoryBytes = limit, maxMemory
	cs := []contender{{"pdftotext", func(_ []byte, file string) error {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		_, err := exec.CommandContext(ctx, "prlimit", "--as="+strconv.FormatInt(maxMemory, 10), "--", "pdftotext", "-enc", "UTF-8", "-q", file, "-").Output()
		return err
	}}}
	for _, v := range scratchVariants(tb) {
		p := v.p
		cs = append(cs, contender{v.name, func(data []byte, file string) error {
			_, err := p.Extract(context.Background(), data, file, lim)
			return err
		}})
	}
	return cs
}

// sideBySide times every contender on the same files within each
// iteration, rotating who goes first, so that a noisy machine weighs on
// all alike; it reports each one's mean time per pass and its speed as a
// fraction of pdftotext's (the goal: >= 0.9x on a file, and the
// corpus in <= 1.2x the time, i.e. >= 0.83x).
func sideBySide(b *testing.B, cs []contender, files map[string][]byte) {
	took := make([]time.Duration, len(cs))
	round := 0
	for b.Loop() {
		for k := range cs {
			i := (k + round) % len(cs)
			start := time.Now()
			for file, data := range files {
				_ = cs[i].run(data, file) // hostile files fail; both sides alike
			}
			took[i] += time.Since(start)
		}
		round++
	}
	for i, c := range cs {
		b.ReportMetric(float64(took[i].Milliseconds())/float64(round), c.name+"-ms")
		if i > 0 {
			b.ReportMetric(float64(took[0])/float64(took[i]), c.name+"-speed-x")
		}
	}
}

// BenchmarkPDFSideBySide: each benchmark file (benchFiles) through every
// contender, interleaved.
func BenchmarkPDFSideBySide(b *testing.B) {
	for name, data := range benchFiles(b) {
		file := filepath.Join(b.TempDir(), name+".pdf")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			sideBySide(b, contenders(b, 20*time.Second, 1<<30), map[string][]byte{file: data})
		})
	}
}

// BenchmarkHostileSideBySide: the 46 hostile files through every
// contender, interleaved, each bounded as in production (8 s, 768 MiB).
func BenchmarkHostileSideBySide(b *testing.B) {
	names, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.pdf"))
	files := map[string][]byte{}
	for _, f := range names {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		files[f] = data
	}
	if len(files) == 0 {
		b.Fatal("hostile PDF corpus missing from testdata/hostile")
	}
	sideBySide(b, contenders(b, 8*time.Second, 768<<20), files)
}
