package tokens

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// cl100kPattern is the tokenizer's own split expression, run by the engine
// it uses, as the reference for pieceLen.
var cl100kPattern = regexp2.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, regexp2.None)

func referencePieces(t testing.TB, s string) []string {
	var out []string
	m, err := cl100kPattern.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = cl100kPattern.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ourPieces(s string) []string {
	var out []string
	eachPiece(s, func(p string) { out = append(out, p) })
	return out
}

// samples exercise every alternative and the places they meet.
var samples = []string{
	"It's they'RE we'Ve I'm you'LL he'd 'sup 'ſ 'Ld ''s",
	"  leading, trailing  \n\n  indented\r\n\r\nwindows\ttab\t\tx   \n",
	"numbers 1 12 123 1234 12345 3.14159 1,000,000 ٣٤٥ Ⅻ ½",
	"punct!!! ?? ...\n\n(paren) [x] {y} <tag> \"q\" ' ' '",
	"unicode: naïve café 数据库 Ελληνικά עברית e\u0301 \u3000word\u00a0nbsp\u2028line \u200bzw",
	"camelCase snake_case kebab-case path/to/file.go x=y&z=1 @user #tag $var",
	"emoji 👍🏽 flags 🇫🇷 ZWJ 👨‍👩‍👧",
	"del\x7fin\x7f\x7f words!\x7f! \x7f 1\x7f2",
	"\n \n", "a \n \n", "x\n\n \n\ny", "  \r\n \n\t", "\n", " ", "  ", "a", "'", "'s", "1", "!", "\r\n", " \n ", "x \u3000", "\u3000\u3000y",
}

func TestPiecesMatchTheExpression(t *testing.T) {
	for _, s := range samples {
		if got, want := ourPieces(s), referencePieces(t, s); !slices.Equal(got, want) {
			t.Errorf("%q:\n got %q\nwant %q", s, got, want)
		}
	}
}

// TestCountMatchesCodecOnCorpus: every file of testdata/corpus, whole and
// line by line, counts as the tokenizer alone counts it.
func TestCountMatchesCodecOnCorpus(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append([]string{string(data)}, strings.Split(string(data), "\n")...) {
			want, _ := c.codec.Count(s)
			if got := c.Count(s); got != want {
				t.Fatalf("%s: %q counts %d, the tokenizer %d", f, s[:min(len(s), 80)], got, want)
			}
		}
	}
}

// FuzzCountMatchesCodec: on any text, the pieces are the expression's and the
// count is the tokenizer's.
func FuzzCountMatchesCodec(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	c, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if utf8.ValidString(s) {
			if got, want := ourPieces(s), referencePieces(t, s); !slices.Equal(got, want) {
				t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
			}
		}
		want, _ := c.codec.Count(s)
		if got := c.Count(s); got != want {
			t.Fatalf("%q counts %d, the tokenizer %d", s, got, want)
		}
	})
}

// TestCountIsSafeConcurrently: workers share one Counter and its cache.
func TestCountIsSafeConcurrently(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(samples, "\n")
	want, _ := c.codec.Count(text)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				if got := c.Count(text); got != want {
					errs <- fmt.Errorf("count %d, want %d", got, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
