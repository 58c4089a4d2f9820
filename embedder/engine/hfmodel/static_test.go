package hfmodel

import (
	"context"
	"strings"
	"testing"
)

func TestStaticMatchesReference(t *testing.T) {
	cases := map[string]testStatic{
		"f32-normalize":     {dim: 16, dtype: "F32", normalize: true, seed: 1},
		"f16-raw-mean":      {dim: 12, dtype: "F16", normalize: false, seed: 2},
		"weights-mapping":   {dim: 8, dtype: "BF16", normalize: true, weights: true, mapping: 9, seed: 3},
		"weights-no-normal": {dim: 8, dtype: "F32", weights: true, seed: 4},
	}
	texts := append(testTexts(),
		"xyzzy",                     // only [UNK]: no tokens left, zeros
		strings.Repeat("a b ", 600), // more than 512 tokens within the character cut
		strings.Repeat("the ", 300)+strings.Repeat("fox ", 300), // cut at 512 × median length characters
	)
	for _, name := range sortedKeys(cases) {
		t.Run(name, func(t *testing.T) {
			c := cases[name]
			dir := t.TempDir()
			emb, weights, mapping := c.write(t, dir, testVocab)
			m, err := Load(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind() != "static" || m.Dimensions() != c.dim {
				t.Fatalf("kind %s, %d dimensions", m.Kind(), m.Dimensions())
			}
			got, err := m.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				want := refStatic(m.Tokenizer(), testVocab, emb, weights, mapping, c.normalize, text)
				if cos := cosine(got[i], want); cos < 0.99999 {
					t.Errorf("text %d: cosine %.9f with the reference", i, cos)
				}
				if rel := relNormDiff(got[i], want); rel > 1e-5 {
					t.Errorf("text %d: norms differ by %.2g", i, rel)
				}
			}
			for _, v := range got[len(texts)-3] {
				if v != 0 {
					t.Fatalf("a text of unknown words embeds as %v, want zeros (as model2vec)", got[len(texts)-3])
				}
			}
			// The median token length of testVocab is 3: the text is cut at
			// 1,536 characters, 384 words, before tokenising.
			if n := medianTokenLength(m.Tokenizer()); n != 3 {
				t.Fatalf("median token length %d", n)
			}
			if n := len(m.Tokenize(texts[len(texts)-1])); n != 384 {
				t.Errorf("text cut by characters: %d tokens, want 384", n)
			}
			if n := len(m.Tokenize(texts[len(texts)-2])); n != 512 {
				t.Errorf("1200-word text: %d tokens, want 512", n)
			}
			if ids := m.Tokenize("[CLS] the"); len(ids) != 2 || m.Tokenizer().Token(ids[0]) != "[CLS]" {
				t.Errorf("no special tokens are added, literal ones kept: %v", ids)
			}
		})
	}
}

func TestStaticMedianTokenLength(t *testing.T) {
	// The median of an even count is the mean of the middle two, truncated.
	for _, c := range []struct {
		vocab []string
		want  int
	}{
		{[]string{"[UNK]", "a", "bb"}, 2},
		{[]string{"[UNK]", "a", "bb", "cccc"}, 3},
		{[]string{"[UNK]", "a", "bb", "ccc", "x"}, 2},
		{[]string{"[UNK]", "é", "中文", "x", "y"}, 1},
	} {
		tok, err := newTokenizer(vocabMap(c.vocab))
		if err != nil {
			t.Fatal(err)
		}
		if got := medianTokenLength(tok); got != c.want {
			t.Errorf("%v: median %d, want %d", c.vocab, got, c.want)
		}
	}
}

func vocabMap(v []string) map[string]int32 {
	m := map[string]int32{}
	for i, tok := range v {
		m[tok] = int32(i)
	}
	return m
}

func TestStaticErrors(t *testing.T) {
	dir := t.TempDir()
	testStatic{dim: 4, dtype: "F32", seed: 1}.write(t, dir, testVocab[:20])
	// The tokenizer has the whole vocabulary, the table 20 rows.
	writeJSON(t, dir+"/tokenizer.json", testTokenizerJSON(testVocab, true, nil, 0))
	if _, err := Load(dir, ""); err == nil || !strings.Contains(err.Error(), "20 rows for a vocabulary of") {
		t.Fatalf("error %v", err)
	}
}
