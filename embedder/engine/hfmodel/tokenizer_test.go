package hfmodel

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func mustTokenizerJSON(t *testing.T, v map[string]any) *Tokenizer {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := parseTokenizerJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tokenizerCases are worked out by hand from what tokenizers' BertNormalizer,
// BertPreTokenizer and WordPiece do with testVocab (lowercase, accents
// stripped).
var tokenizerCases = []struct {
	text string
	want string // pieces joined by spaces
}{
	{"The quick brown fox jumps over the lazy dog.", "the quick brown fox jump ##s over the lazy dog ."},
	{"Unaffable!", "un ##aff ##able !"},
	{"UNAFFABLE", "un ##aff ##able"},
	// accents: NFD, then the combining marks dropped
	{"Café naïve RÉSUMÉ", "cafe naive resume"},
	// every punctuation character is a word, ASCII symbols such as $ too
	{"hello,world!?", "hello , world ! ?"},
	{"$a-b(c)", "$ a - b ( c )"},
	{"'quick'", "' quick '"},
	// longest match first: "jumped" is jump ##ed, not jump ##e...
	{"jumped jumping", "jump ##ed jump ##ing"},
	// a word with an unmatched remainder is one [UNK]
	{"xyz", "[UNK]"},
	{"jumpsx fox", "[UNK] fox"},
	// CJK ideographs are words of their own, other scripts are not split
	{"中文abc", "中 文 a ##b ##c"},
	// whitespace of every kind separates; NUL, U+FFFD and controls vanish
	{"  hello\tworld\n\r\u00a0\u3000fox\u2009dog ", "hello world fox dog"},
	{"hel\x00lo wor\ufffdld", "hello world"},
	// U+200B is a format character (Cf): removed, so "hello" stays whole
	{"hello\u200b", "hello"},
	// \v and \f are controls before they are whitespace: removed, not split
	{"hel\vlo", "hello"},
	// literal special tokens are cut out before normalisation
	{"[CLS] hello [MASK]world", "[CLS] hello [MASK] world"},
	{"[mask]", "[ [UNK] ]"}, // not the special token: normalised and split
	// a turkish dotted capital I: NFD gives I + U+0307, the mark is dropped
	{"\u0130s", "is"},
	{"", ""},
	{"   ", ""},
}

func TestTokenizerCases(t *testing.T) {
	dir := t.TempDir()
	writeVocabTxt(t, dir, testVocab, map[string]any{"do_lower_case": true})
	fromTxt, files, err := loadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"vocab.txt", "tokenizer_config.json"}) {
		t.Errorf("files %v", files)
	}
	for name, tok := range map[string]*Tokenizer{
		"tokenizer.json": mustTokenizerJSON(t, testTokenizerJSON(testVocab, true, nil, 0)),
		"vocab.txt":      fromTxt,
	} {
		for _, c := range tokenizerCases {
			got := strings.Join(tok.Tokens(c.text), " ")
			if got != c.want {
				t.Errorf("%s: %q: got %q, want %q", name, c.text, got, c.want)
			}
		}
	}
}

func TestTokenizerOptions(t *testing.T) {
	// Cased (lowercase false, strip_accents unset follows it: accents kept).
	cased := mustTokenizerJSON(t, testTokenizerJSON(testVocab, false, nil, 0))
	for text, want := range map[string]string{
		"Hello hello": "[UNK] hello",
		"café cafe":   "[UNK] cafe",
	} {
		if got := strings.Join(cased.Tokens(text), " "); got != want {
			t.Errorf("cased: %q: got %q, want %q", text, got, want)
		}
	}
	// Lowercase without stripping accents: İ lowercases to i + U+0307
	// (its full lowercase mapping), which the vocabulary has as ##̇.
	noStrip := mustTokenizerJSON(t, testTokenizerJSON(testVocab, true, false, 0))
	if got := strings.Join(noStrip.Tokens("\u0130"), " "); got != "i ##\u0307" {
		t.Errorf("İ without accent stripping: got %q, want %q", got, "i ##\u0307")
	}
	if got := strings.Join(noStrip.Tokens("café"), " "); got != "[UNK]" {
		t.Errorf("café without accent stripping: got %q", got)
	}
	// Accents stripped although cased.
	strip := mustTokenizerJSON(t, testTokenizerJSON(testVocab, false, true, 0))
	if got := strings.Join(strip.Tokens("café Café"), " "); got != "cafe [UNK]" {
		t.Errorf("cased with strip_accents: got %q", got)
	}
	// vocab.txt with do_lower_case false.
	dir := t.TempDir()
	writeVocabTxt(t, dir, testVocab, map[string]any{"do_lower_case": false, "model_max_length": 7})
	tok, _, err := loadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tok.Tokens("Hello hello"), " "); got != "[UNK] hello" {
		t.Errorf("vocab.txt cased: got %q", got)
	}
	if tok.MaxLength() != 7 {
		t.Errorf("model_max_length: got %d", tok.MaxLength())
	}
}

func TestTokenizerWordLength(t *testing.T) {
	tok := mustTokenizerJSON(t, testTokenizerJSON(testVocab, true, nil, 0))
	// 100 characters is the most WordPiece splits; one more is [UNK].
	if got := tok.Tokens(strings.Repeat("a", 100)); len(got) != 100 || got[0] != "a" || got[99] != "##a" {
		t.Errorf("100 a: got %d pieces %v...", len(got), got[:min(3, len(got))])
	}
	if got := tok.Tokens(strings.Repeat("a", 101)); !slices.Equal(got, []string{"[UNK]"}) {
		t.Errorf("101 a: got %d pieces", len(got))
	}
	// Characters, not bytes: 100 two-byte letters are one word of 100.
	if got := tok.Tokens(strings.Repeat("á", 100)); len(got) != 100 {
		t.Errorf("100 á: got %d pieces", len(got))
	}
}

func TestTokenizerTruncation(t *testing.T) {
	tok := mustTokenizerJSON(t, testTokenizerJSON(testVocab, true, nil, 6))
	ids := tok.Encode("the quick brown fox jumps over the lazy dog")
	var got []string
	for _, id := range ids {
		got = append(got, tok.Token(id))
	}
	// max_length counts [CLS] and [SEP]: four pieces fit.
	if want := "[CLS] the quick brown fox [SEP]"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	if ids := tok.Encode(""); len(ids) != 2 || tok.Token(ids[0]) != "[CLS]" || tok.Token(ids[1]) != "[SEP]" {
		t.Errorf("empty text: %v", ids)
	}
	// Truncation at a word boundary inside a word keeps the first pieces.
	tok2 := mustTokenizerJSON(t, testTokenizerJSON(testVocab, true, nil, 4))
	var got2 []string
	for _, id := range tok2.Encode("unaffable") {
		got2 = append(got2, tok2.Token(id))
	}
	if want := "[CLS] un ##aff [SEP]"; strings.Join(got2, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got2, " "), want)
	}
}

// TestTokenizerJSONVariants: BertProcessing, a Sequence normaliser and
// pre-tokenizer, normalised added tokens, and errors for what is not
// supported.
func TestTokenizerJSONVariants(t *testing.T) {
	tj := testTokenizerJSON(testVocab, true, nil, 0)
	tj["post_processor"] = map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 3}, "cls": []any{"[CLS]", 2}}
	tj["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
		map[string]any{"type": "NFD"}, map[string]any{"type": "Lowercase"}, map[string]any{"type": "StripAccents"}}}
	tj["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "WhitespaceSplit"}}}
	tj["added_tokens"] = append(tj["added_tokens"].([]map[string]any),
		map[string]any{"id": len(testVocab), "content": "Strata", "normalized": true, "special": false})
	tok := mustTokenizerJSON(t, tj)
	var got []string
	for _, id := range tok.Encode("Café, STRATA!") {
		got = append(got, tok.Token(id))
	}
	// WhitespaceSplit keeps punctuation attached: "cafe," is one word.
	if want := "[CLS] [UNK] strata ! [SEP]"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	if tok.VocabSize() != len(testVocab)+1 {
		t.Errorf("vocab size %d", tok.VocabSize())
	}
	for name, mutate := range map[string]func(map[string]any){
		`normalizer "Replace" is not supported`:       func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Replace"} },
		`pre_tokenizer "Metaspace" is not supported`:  func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Metaspace"} },
		`post_processor "ByteLevel" is not supported`: func(m map[string]any) { m["post_processor"] = map[string]any{"type": "ByteLevel"} },
		`unk_token "<unk>" is not in the vocabulary`:  func(m map[string]any) { m["model"].(map[string]any)["unk_token"] = "<unk>" },
		`special token "[BOS]" has no ids`: func(m map[string]any) {
			pp := m["post_processor"].(map[string]any)
			pp["single"] = []any{map[string]any{"SpecialToken": map[string]any{"id": "[BOS]"}}}
		},
	} {
		tj := testTokenizerJSON(testVocab, true, nil, 0)
		mutate(tj)
		data, _ := json.Marshal(tj)
		if _, err := parseTokenizerJSON(data); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v, want %q", err, name)
		}
	}
}

func TestLoadTokenizerPrefersTokenizerJSON(t *testing.T) {
	dir := t.TempDir()
	writeVocabTxt(t, dir, []string{"[UNK]", "[CLS]", "[SEP]", "x"}, nil)
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), testTokenizerJSON(testVocab, true, nil, 0))
	tok, files, err := loadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"tokenizer.json"}) || tok.VocabSize() != len(testVocab) {
		t.Errorf("files %v, vocab %d", files, tok.VocabSize())
	}
}
