package tokens

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountsMatchPreviousTokenizer: every file of testdata/corpus (the
// repository's text test files, its README, extracted text of hostile PDFs
// and a Unicode sampler), whole and line by line, counts exactly as the
// tokenizer this one replaced (pkoukk/tiktoken-go v0.1.8, cl100k_base)
// counted it: testdata/cl100k_counts.json, written with that tokenizer
// before it was removed.
func TestCountsMatchPreviousTokenizer(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "cl100k_counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]struct {
		Whole int   `json:"whole"`
		Lines []int `json:"lines"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(filepath.Join("testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(golden) || len(files) < 20 {
		t.Fatalf("%d corpus files, %d golden entries", len(files), len(golden))
	}
	lines := 0
	for _, f := range files {
		want, ok := golden[f.Name()]
		if !ok {
			t.Errorf("%s: no golden count", f.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", "corpus", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Count(string(b)); got != want.Whole {
			t.Errorf("%s: %d tokens, the previous tokenizer counted %d", f.Name(), got, want.Whole)
		}
		parts := strings.SplitAfter(string(b), "\n")
		if len(parts) != len(want.Lines) {
			t.Errorf("%s: %d lines, golden has %d", f.Name(), len(parts), len(want.Lines))
			continue
		}
		for i, l := range parts {
			if got := c.Count(l); got != want.Lines[i] {
				t.Errorf("%s line %d %q: %d tokens, the previous tokenizer counted %d", f.Name(), i+1, l, got, want.Lines[i])
			}
		}
		lines += len(parts)
	}
	t.Logf("%d files, %d lines compared", len(files), lines)
}
