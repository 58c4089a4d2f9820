package uselite

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"slices"
	"testing"
	"unicode/utf8"
)

// Token ids recorded from the TF.js reference tokenizer
// (@energetic-ai/embeddings 0.2.0); TestMatchesReferenceTFJS compares many
// more strings live.
func TestTokenizerKnownIDs(t *testing.T) {
	tok := testModel(t).Tokenizer()
	cases := map[string][]int32{
		"hello world": {2002, 102, 311},
		"":            nil,
		"   ":         {30, 30, 30, 30},
		"héllo 日本語 🙂": {1786, 1133, 120, 102, 30, 0, 30, 0},
	}
	for text, want := range cases {
		if got := tok.Encode(text); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want %v", text, got, want)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range append(referenceTexts()[:14], extraTokenizerCases...) {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid utf8 \xc3")
	tok := testModel(f).Tokenizer()
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("id %d out of vocabulary range for %q", id, s)
			}
		}
		if s != "" && utf8.ValidString(s) && len(ids) == 0 && len(prepare(s)) > 0 {
			t.Fatalf("non-empty input %q produced no tokens", s)
		}
	})
}

func tarGz(t *testing.T, name, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(content))
	tw.Close()
	gz.Close()
	return buf.Bytes()
}
