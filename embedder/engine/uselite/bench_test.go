package uselite

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// shortTexts are typical query-sized inputs (5-15 tokens).
func shortTexts(n int) []string {
	base := []string{
		"How do I reset my password?",
		"The weather in Paris is sunny today.",
		"Install the CLI with apt-get and run the setup wizard.",
		"Quarterly revenue grew by 12 percent.",
		"Where can I find the API rate limits?",
		"Café opening hours on weekends",
		"Kubernetes pod keeps restarting with OOMKilled",
		"best way to index PDF documents",
	}
	out := make([]string, n)
	for k := range out {
		out[k] = base[k%len(base)]
	}
	return out
}

// longTexts returns n texts of 512 tokens each. The model graph only reads
// the first 128 tokens (ClipToMaxLength), so this measures tokenising 512
// tokens plus the full 128-position transformer.
func longTexts(t testing.TB, tok *Tokenizer, n int) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = textOfTokens(t, tok, 512, uint64(100+k))
	}
	return out
}

// withWorkers returns a copy of m whose Embed uses at most n goroutines.
func withWorkers(m *Model, n int) *Model {
	c := *m
	c.workers = n
	return &c
}

func benchEmbed(b *testing.B, m *Model, texts []string) {
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
}

func BenchmarkEmbedShort(b *testing.B) {
	m := testModel(b)
	texts := shortTexts(64)
	b.Run("1core", func(b *testing.B) { benchEmbed(b, withWorkers(m, 1), texts) })
	b.Run(fmt.Sprintf("allcores-%d", runtime.GOMAXPROCS(0)), func(b *testing.B) { benchEmbed(b, m, texts) })
}

func BenchmarkEmbed512Tokens(b *testing.B) {
	m := testModel(b)
	texts := longTexts(b, m.Tokenizer(), 16)
	b.Run("1core", func(b *testing.B) { benchEmbed(b, withWorkers(m, 1), texts) })
	b.Run(fmt.Sprintf("allcores-%d", runtime.GOMAXPROCS(0)), func(b *testing.B) { benchEmbed(b, m, texts) })
}

// goTextsPerSec embeds texts repeatedly for about d and returns the rate.
func goTextsPerSec(t testing.TB, m *Model, texts []string, d time.Duration) float64 {
	ctx := context.Background()
	if _, err := m.Embed(ctx, texts); err != nil { // warm-up
		t.Fatal(err)
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if _, err := m.Embed(ctx, texts); err != nil {
			t.Fatal(err)
		}
		n += len(texts)
	}
	return float64(n) / time.Since(start).Seconds()
}

// TestBenchmarkReferenceTFJS prints Go vs TF.js throughput on the same
// texts in the same run. It is a benchmark, not a check: it never fails on
// speed, and it only runs with STRATA_BENCH_REFERENCE=1.
func TestBenchmarkReferenceTFJS(t *testing.T) {
	if os.Getenv("STRATA_BENCH_REFERENCE") != "1" {
		t.Skip("set STRATA_BENCH_REFERENCE=1 to time Go against the TF.js reference")
	}
	m := testModel(t)
	sets := []struct {
		name   string
		texts  []string
		batch  int
		rounds int
	}{
		{"short", shortTexts(64), 64, 5},
		{"512-token", longTexts(t, m.Tokenizer(), 16), 16, 3},
	}
	for _, s := range sets {
		var ref struct {
			TextsPerSec float64 `json:"texts_per_sec"`
		}
		runReference(t, map[string]any{"mode": "bench", "texts": s.texts, "batch": s.batch, "rounds": s.rounds}, &ref)
		one := goTextsPerSec(t, withWorkers(m, 1), s.texts, 2*time.Second)
		all := goTextsPerSec(t, m, s.texts, 2*time.Second)
		t.Logf("%-9s  TF.js %8.1f texts/s | Go 1 core %8.1f texts/s (x%.2f) | Go %d cores %8.1f texts/s (x%.2f)",
			s.name, ref.TextsPerSec, one, one/ref.TextsPerSec, runtime.GOMAXPROCS(0), all, all/ref.TextsPerSec)
	}
}
