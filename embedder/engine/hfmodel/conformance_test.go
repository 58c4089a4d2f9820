package hfmodel

import (
	"strings"
	"testing"

	"github.com/strata-kb/strata/embedder/engine/embedtest"
)

// conformanceTexts are texts of testVocab's words, which the test models
// tell apart.
var conformanceTexts = []string{
	"The quick brown fox jumps over the lazy dog.",
	"hello world",
	"embedding model search text files",
	"cafe naive resume, un affable!",
	"a b c",
}

func TestConformance(t *testing.T) {
	load := func(t *testing.T, write func(dir string)) *Model {
		dir := t.TempDir()
		write(dir)
		m, err := Load(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// slowTexts are many texts of the longest length the models read.
	slowTexts := func(n int) []string {
		text := strings.Repeat("the quick brown fox jumped over the lazy dog ", 8)
		out := make([]string, n)
		for i := range out {
			out[i] = text
		}
		return out
	}
	bert := func(mod func(*testBert)) func(dir string) {
		return func(dir string) {
			c := tinyBert()
			mod(&c)
			c.write(t, dir, testVocab)
		}
	}
	// A wider BERT, slow enough on thousands of texts to be cancelled midway.
	slowBert := func() (embedtest.Provider, []string) {
		return load(t, bert(func(c *testBert) { c.H, c.heads, c.I = 128, 4, 256 })), slowTexts(4000)
	}
	cases := []struct {
		name  string
		write func(dir string)
		h     embedtest.Harness
	}{
		{"bert-mean-normalize", bert(func(*testBert) {}), embedtest.Harness{Normalized: true, Slow: slowBert}},
		{"bert-cls-raw", bert(func(c *testBert) { c.pooling, c.normalize = "cls", false }), embedtest.Harness{}},
		{"bert-max-vocabtxt", bert(func(c *testBert) { c.pooling, c.vocabTxt = "max", true }), embedtest.Harness{Normalized: true}},
		{"static-normalize", func(dir string) { testStatic{dim: 16, dtype: "F32", normalize: true, seed: 1}.write(t, dir, testVocab) },
			embedtest.Harness{Normalized: true, ZeroVectors: true, Slow: func() (embedtest.Provider, []string) {
				return load(t, func(dir string) { testStatic{dim: 16, dtype: "F32", seed: 1}.write(t, dir, testVocab) }), slowTexts(1_000_000)
			}}},
		{"static-weights-mapping", func(dir string) {
			testStatic{dim: 8, dtype: "BF16", weights: true, mapping: 9, seed: 3}.write(t, dir, testVocab)
		}, embedtest.Harness{ZeroVectors: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.h
			h.Provider = load(t, c.write)
			h.Texts = conformanceTexts
			h.Exact = true // packing and threads change no bit (TestBertPackingIsExact)
			embedtest.RunConformance(t, h)
		})
	}
}
