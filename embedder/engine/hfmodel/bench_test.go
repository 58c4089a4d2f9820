package hfmodel

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// miniLM is a random encoder of all-MiniLM-L6-v2's size: 6 layers, hidden
// 384, 12 heads, intermediate 1536, 512 positions (22M parameters with its
// 30,522-token vocabulary; the small test vocabulary does not change the
// work per token).
func miniLM(b *testing.B) *Model {
	b.Helper()
	c := tinyBert()
	c.H, c.L, c.heads, c.I, c.P, c.std = 384, 6, 12, 1536, 512, 0.05
	dir := b.TempDir()
	c.write(b, dir, testVocab)
	m, err := Load(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// textsOfTokens returns n texts that tokenise to exactly tokens ids,
// [CLS] and [SEP] included.
func textsOfTokens(b *testing.B, m *Model, n, tokens int) []string {
	words := strings.Fields("the quick brown fox over the lazy dog , model search text file .") // one token each
	out := make([]string, n)
	for k := range out {
		var sb strings.Builder
		for i := 0; ; i++ {
			w := words[(i+k)%len(words)]
			if len(m.Tokenize(sb.String()+" "+w)) > tokens {
				break
			}
			sb.WriteString(" " + w)
		}
		out[k] = sb.String()
		if got := len(m.Tokenize(out[k])); got != tokens {
			b.Fatalf("text of %d tokens, want %d", got, tokens)
		}
	}
	return out
}

func benchEmbed(b *testing.B, m *Model, texts []string) {
	ctx := context.Background()
	if _, err := m.Embed(ctx, texts); err != nil { // warm-up
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := m.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	// texts/s is wall time; texts/cpu-s divides by the CPU time the process
	// used, which other load on a shared machine does not inflate.
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
	b.ReportMetric(float64(b.N*len(texts))/(cpuTime()-cpu0).Seconds(), "texts/cpu-s")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMiniLM embeds batches of 8 texts of 128 and 256 tokens on one
// core (texts/s per core) and on all cores.
func BenchmarkMiniLM(b *testing.B) {
	m := miniLM(b)
	for _, tokens := range []int{128, 256} {
		texts := textsOfTokens(b, m, 8, tokens)
		b.Run(fmt.Sprintf("%dtokens/1core", tokens), func(b *testing.B) { benchEmbed(b, m.WithWorkers(1), texts) })
		b.Run(fmt.Sprintf("%dtokens/allcores-%d", tokens, runtime.GOMAXPROCS(0)), func(b *testing.B) { benchEmbed(b, m, texts) })
	}
}
