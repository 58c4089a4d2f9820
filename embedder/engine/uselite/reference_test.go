package uselite

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// referenceTexts cover the input classes the brief names. The empty string
// sits in the middle of the joint batch: the reference drops trailing empty
// texts from its output and fails on a batch with no tokens at all.
func referenceTexts() []string {
	return []string{
		"The quick brown fox jumps over the lazy dog.",
		"How do I reset my password?",
		"Hello, world! What's up? (Not much...) -- ok; fine: yes/no.",
		"In 2023, revenue grew 12.5% to $4,200,000 — up from 3.7M in 2022.",
		"ThIs Is MiXeD CaSe TEXT with ACRONYMS like NASA and iPhone.",
		"Café naïve résumé façade Ångström Straße",
		"",
		"東京は日本の首都です。北京是中国的首都。",
		"I love pizza 🍕🍕 and 🙂 emoji 👩‍👩‍👧 families",
		"   ",
		"مرحبا بالعالم — שלום עולם",
		"\t\n  \r\n",
		"ﬁ ligature, full-width ＡＢＣ１２３ and ① (NFKC)",
		"line one\nline two\r\nline three\ttabbed",
		longText(5000, 1),
		strings.Repeat("x", 20000),
		"a",
	}
}

type referenceResponse struct {
	Batches [][][]float32 `json:"batches"`
	Tokens  [][]int32     `json:"tokens"`
}

var extraTokenizerCases = []string{
	"hello world", "  leading and trailing  ", "multiple   spaces", "ÀÉÎÕÜ àéîõü",
	"𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters", "👍🏽👨‍💻", "unknown ☃☃☃ runs ☃ here", "ab\u0000cd",
	"tokenization-of_hyphen/slash\\back", "1234567890 3.14159 1e-10",
	"日本語のテキスト", "Ελληνικά κείμενα", "Русский текст", "ㄱㄴㄷ 한국어",
}

func TestMatchesReferenceTFJS(t *testing.T) {
	m := testModel(t)
	texts := referenceTexts()
	// Batches for the reference: every text together (several sentences in
	// one batch, as the indexer sends them) and every non-empty text alone.
	batches := [][]string{texts}
	var singles []int
	for k, s := range texts {
		if len(m.Tokenizer().Encode(s)) > 0 {
			batches = append(batches, []string{s})
			singles = append(singles, k)
		}
	}
	var ref referenceResponse
	runReference(t, map[string]any{"mode": "embed", "batches": batches, "tokenize": append(slices.Clone(texts), extraTokenizerCases...)}, &ref)
	if len(ref.Batches) != len(batches) || len(ref.Batches[0]) != len(texts) {
		t.Fatalf("reference returned %d batches (first has %d vectors), want %d batches of which the first has %d", len(ref.Batches), len(ref.Batches[0]), len(batches), len(texts))
	}

	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	minCos := 2.0
	check := func(what string, k int, want []float32) {
		t.Helper()
		c := cosine(got[k], want)
		minCos = min(minCos, c)
		if c < 0.9999 {
			t.Errorf("%s text %d (%.40q): cosine %.6f < 0.9999", what, k, texts[k], c)
		}
	}
	for k := range texts {
		check("joint batch", k, ref.Batches[0][k])
	}
	for b, k := range singles {
		check("single", k, ref.Batches[b+1][0])
	}
	t.Logf("min cosine vs TF.js over %d comparisons: %.12f", len(texts)+len(singles), minCos)

	// Token ids must match exactly, including the extra tricky strings.
	all := append(slices.Clone(texts), extraTokenizerCases...)
	if len(ref.Tokens) != len(all) {
		t.Fatalf("reference tokenized %d texts, want %d", len(ref.Tokens), len(all))
	}
	for k, s := range all {
		ids := m.Tokenizer().Encode(s)
		if !slices.Equal(ids, ref.Tokens[k]) && !(len(ids) == 0 && len(ref.Tokens[k]) == 0) {
			t.Errorf("tokens of %.40q:\n got  %v\n want %v", s, head(ids, 30), head(ref.Tokens[k], 30))
		}
	}
}

func head(ids []int32, n int) []int32 {
	if len(ids) > n {
		return ids[:n]
	}
	return ids
}
