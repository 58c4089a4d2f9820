package hfmodel

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testTexts covers short, empty, accented, CJK, literal special tokens,
// words that become [UNK] and a text longer than any maximum length.
func testTexts() []string {
	long := strings.Repeat("the quick brown fox jumped over the lazy dog. ", 30)
	return []string{
		"The quick brown fox jumps over the lazy dog.",
		"",
		"hello",
		"Unaffable! Café naïve 中文 résumé",
		"[MASK] embedding models search text files",
		"xyzzy plugh (unknown words) $ ? !",
		long,
		"a b c ab ba cab",
	}
}

func TestBertMatchesReference(t *testing.T) {
	cases := map[string]func(*testBert){
		"f32-mean-normalize":      func(c *testBert) {},
		"f16-cls-prefix":          func(c *testBert) { c.dtype, c.pooling, c.normalize, c.prefix = "F16", "cls", false, "bert." },
		"bf16-max-vocabtxt":       func(c *testBert) { c.dtype, c.pooling, c.vocabTxt = "BF16", "max", true },
		"gelu-new-no-modules":     func(c *testBert) { c.act, c.pooling, c.normalize = "gelu_new", "", false },
		"relu-max-seq-12":         func(c *testBert) { c.act, c.maxSeq, c.eps = "relu", 12, 1e-5 },
		"3-layers-8-heads-odd-ff": func(c *testBert) { c.L, c.heads, c.I, c.seed = 3, 8, 37, 5 },
	}
	for _, name := range sortedKeys(cases) {
		t.Run(name, func(t *testing.T) {
			c := tinyBert()
			cases[name](&c)
			dir := t.TempDir()
			w := c.write(t, dir, testVocab)
			m, err := Load(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind() != "bert" || m.Dimensions() != c.H {
				t.Fatalf("kind %s, %d dimensions", m.Kind(), m.Dimensions())
			}
			texts := testTexts()
			got, err := m.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			batch := make([][]int32, len(texts))
			for i, text := range texts {
				batch[i] = m.Tokenize(text)
			}
			want := refBertBatch(c, w, batch)
			limit := c.P
			if c.maxSeq > 0 {
				limit = c.maxSeq
			}
			lowest := 1.0
			for i := range texts {
				ids := batch[i]
				if len(ids) < 2 || ids[0] != 2 || ids[len(ids)-1] != 3 || len(ids) > limit {
					t.Errorf("text %d: tokens %v: want [CLS] ... [SEP], at most %d", i, ids, limit)
				}
				cos := cosine(got[i], want[i])
				lowest = min(lowest, cos)
				if cos < 0.99999 {
					t.Errorf("text %d (%d tokens): cosine %.9f with the reference", i, len(ids), cos)
				}
				if rel := relNormDiff(got[i], want[i]); rel > 1e-4 {
					t.Errorf("text %d: norms differ by %.2g", i, rel)
				}
			}
			t.Logf("lowest cosine with the reference: 1 - %.2g", 1-lowest)
			// The model is not degenerate: different texts differ.
			for i := 1; i < len(texts); i++ {
				if cos := cosine(got[i], want[0]); cos > 0.99 && len(batch[i]) != len(batch[0]) {
					t.Errorf("texts 0 and %d have cosine %.4f: the test model does not tell texts apart", i, cos)
				}
			}
			if len(batch[6]) != limit {
				t.Errorf("the long text has %d tokens, want the limit %d", len(batch[6]), limit)
			}
		})
	}
}

func relNormDiff(a []float32, b []float64) float64 {
	var na, nb float64
	for i := range a {
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	na, nb = math.Sqrt(na), math.Sqrt(nb)
	return math.Abs(na-nb) / math.Max(nb, 1e-12)
}

// TestBertPackingIsExact: texts packed together, split across goroutines,
// give bit-identical vectors to each text embedded alone on one goroutine.
func TestBertPackingIsExact(t *testing.T) {
	c := tinyBert()
	c.H, c.heads, c.I = 48, 6, 96 // enough columns for linear to split across goroutines
	dir := t.TempDir()
	c.write(t, dir, testVocab)
	m, err := Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	words := testVocab[5:]
	for i := range 150 {
		var b strings.Builder
		for j := range i % 37 {
			b.WriteString(words[(i*7+j*3)%len(words)])
			b.WriteByte(' ')
		}
		texts = append(texts, b.String())
	}
	all, err := m.WithWorkers(4).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	one := m.WithWorkers(1)
	for i, text := range texts {
		v, err := one.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v[0], all[i]) {
			t.Fatalf("text %d: packed vector differs from the text alone", i)
		}
	}
}

func TestBertErrors(t *testing.T) {
	base := func(t *testing.T) string {
		dir := t.TempDir()
		tinyBert().write(t, dir, testVocab)
		return dir
	}
	cases := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   string
	}{
		{"missing tensor", func(t *testing.T, dir string) {
			c := tinyBert()
			c.L = 3 // config says 3 layers, write only 2
			c.write(t, dir, testVocab)
			cfg := readJSONMap(t, filepath.Join(dir, "config.json"))
			cfg["num_hidden_layers"] = 4
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
		}, `no such tensor "encoder.layer.3.`},
		{"wrong shape", func(t *testing.T, dir string) {
			cfg := readJSONMap(t, filepath.Join(dir, "config.json"))
			cfg["intermediate_size"] = 65
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
		}, "shape [64 32], want [65 32]"},
		{"unsupported model type", func(t *testing.T, dir string) {
			cfg := readJSONMap(t, filepath.Join(dir, "config.json"))
			cfg["model_type"] = "roberta"
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
		}, `model_type "roberta"`},
		{"unsupported module", func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "modules.json"), []map[string]any{
				{"path": "", "type": "sentence_transformers.models.Transformer"},
				{"path": "2_Dense", "type": "sentence_transformers.models.Dense"}})
		}, "module sentence_transformers.models.Dense is not supported"},
		{"two pooling modes", func(t *testing.T, dir string) {
			writeJSON(t, filepath.Join(dir, "1_Pooling", "config.json"), map[string]any{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true})
		}, "exactly one of"},
		{"no tokenizer", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "tokenizer.json"))
		}, "neither tokenizer.json nor vocab.txt"},
		{"truncated weights", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.safetensors")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-100)
		}, "truncated file?"},
		{"unsupported tokenizer model", func(t *testing.T, dir string) {
			tj := testTokenizerJSON(testVocab, true, nil, 0)
			tj["model"] = map[string]any{"type": "Unigram", "vocab": [][]any{{"a", -1.0}}}
			writeJSON(t, filepath.Join(dir, "tokenizer.json"), tj)
		}, `tokenizer model "Unigram" is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := base(t)
			tc.break_(t, dir)
			_, err := Load(dir, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func readJSONMap(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestModelName: the name carries the directory name and a fingerprint of
// the files, which changes when any weight changes.
func TestModelName(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "tiny"), filepath.Join(t.TempDir(), "tiny")
	c1, c2 := tinyBert(), tinyBert()
	c2.seed = 2
	c1.write(t, a, testVocab)
	c2.write(t, b, testVocab)
	ma, err := Load(a, "")
	if err != nil {
		t.Fatal(err)
	}
	mb, err := Load(b, "")
	if err != nil {
		t.Fatal(err)
	}
	ma2, err := Load(a, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ma.Model(), "tiny-") || len(ma.Model()) != len("tiny-")+12 {
		t.Errorf("name %q, want tiny-<12 hex>", ma.Model())
	}
	if ma.Model() == mb.Model() || ma.Model() != ma2.Model() {
		t.Errorf("names %q, %q, %q: same files must give the same name, other weights another", ma.Model(), mb.Model(), ma2.Model())
	}
}

// TestBertWithoutSpecialTokens: a tokenizer.json without a post-processor
// adds no [CLS]/[SEP]; an empty text then has no tokens and embeds as zeros.
func TestBertWithoutSpecialTokens(t *testing.T) {
	for _, pooling := range []string{"mean", "cls", "max"} {
		c := tinyBert()
		c.pooling, c.normalize = pooling, false
		dir := t.TempDir()
		w := c.write(t, dir, testVocab)
		tj := testTokenizerJSON(testVocab, true, nil, 0)
		tj["post_processor"] = nil
		writeJSON(t, filepath.Join(dir, "tokenizer.json"), tj)
		m, err := Load(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Embed(context.Background(), []string{"", "hello world"})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range got[0] {
			if v != 0 {
				t.Fatalf("%s: empty text: %v, want zeros", pooling, got[0])
			}
		}
		ids := m.Tokenize("hello world")
		if len(ids) != 2 {
			t.Fatalf("tokens %v", ids)
		}
		if cos := cosine(got[1], refBertBatch(c, w, [][]int32{ids})[0]); cos < 0.99999 {
			t.Errorf("%s: cosine %.9f", pooling, cos)
		}
	}
}
