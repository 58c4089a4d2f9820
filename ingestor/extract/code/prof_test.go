package code

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

func BenchmarkLines(b *testing.B) {
	data := []byte(strings.Repeat("x\n", 1_000_000))
	for b.Loop() {
		Extractor{}.Extract(context.Background(), data, "x.go", extract.DefaultLimits())
	}
}
func BenchmarkJava(b *testing.B) {
	data := []byte("class A {\n" + strings.Repeat("    void f() {\n", 1_000_000))
	for b.Loop() {
		Extractor{}.Extract(context.Background(), data, "x.java", extract.DefaultLimits())
	}
}
func BenchmarkFuncs(b *testing.B) {
	data := []byte(strings.Repeat("func f() {}\n", 1_000_000))
	for b.Loop() {
		Extractor{}.Extract(context.Background(), data, "x.go", extract.DefaultLimits())
	}
}
