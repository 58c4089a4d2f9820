package tokens

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkCount counts the whole test corpus (Go, Markdown, prose) with the
// tokenizer alone and with Strata's counter (hand-matched pieces, cached
// piece counts), side by side; the counts are equal (TestCountMatchesCodecOnCorpus).
func BenchmarkCount(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	var sb strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(data)
	}
	text := sb.String()
	b.Run("tokenizer", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			c.codec.Count(text)
		}
	})
	b.Run("strata", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			c.Count(text)
		}
	})
}
