package terms

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

func TestOf(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Running shoes were running", "run shoe were run"},
		{"The studies studied", "the studi studi"},
		{"asn1_der_coding failed", "asn1_der_coding asn1 der code fail"},
		{"GODEBUG panicnil=1", "godebug panicnil 1"},
		{"panicNil and HTTPServer", "panicnil panic nil and httpserver http server"},
		{"see net/http and x-request-id", "see net/http net http and x-request-id x request id"},
		{"guide.md, README", "guide.md guid md readm"},
		{"encoding/asn1/asn1.go", "encoding/asn1/asn1.go asn1.go encod asn1 asn1 go"},
		{"end. Next", "end next"},
		{"Ünïcode wörds 東京 stay", "ünïcode wörds 東京 stay"},
		{"a_ _b -- ..", "a b"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Of(tt.in); got != tt.want {
			t.Errorf("Of(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuery(t *testing.T) {
	for in, want := range map[string]string{
		"What is the effect of the running shoes?": "what effect run shoe",
		"the and of":                  "the and of",
		"asn1_der_coding in the code": "asn1_der_coding asn1 der code code",
	} {
		if got := Query(in); got != want {
			t.Errorf("Query(%q) = %q, want %q", in, got, want)
		}
	}
}

// A query is analysed like the text: the terms of an identifier in a query
// are among the terms of a chunk that holds it.
func TestQueryMatchesText(t *testing.T) {
	text := Of("The function asn1_der_coding calls panicNil when studies run.")
	for _, q := range []string{"asn1_der_coding", "panicNil", "study", "running", "coding"} {
		for _, term := range strings.Fields(Of(q)) {
			if !strings.Contains(" "+text+" ", " "+term+" ") {
				t.Errorf("query %q term %q not in %q", q, term, text)
			}
		}
	}
}

func FuzzOf(f *testing.F) {
	for _, s := range []string{"asn1_der_coding", "panicNil HTTPServer", "net/http", "\xff\xfe", "a__b..c", "東京_tokyo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Of(s)
		if strings.Contains(out, "  ") || strings.HasPrefix(out, " ") || strings.HasSuffix(out, " ") {
			t.Fatalf("Of(%q) = %q: empty terms", s, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("Of(%q) = %q: invalid UTF-8", s, out)
		}
		for _, term := range strings.Fields(out) {
			if strings.ContainsAny(term, " \t\n") {
				t.Fatalf("term %q has a space", term)
			}
		}
	})
}

// TestStemsRemembered: a remembered stem is the stemmer's, the first time
// and after; no word longer than maxStemmedWordKept is remembered, and no
// more than maxStemsKept words.
func TestStemsRemembered(t *testing.T) {
	for _, w := range []string{"running", "archives", "retention", "generously", "running"} {
		for range 2 {
			if got, want := stem(w), english.Stem(w, false); got != want {
				t.Errorf("stem(%q) = %q, want %q", w, got, want)
			}
		}
	}
	long := strings.Repeat("ab", maxStemmedWordKept) + "ing"
	if got := stem(long); got != english.Stem(long, false) {
		t.Errorf("a long word: %q", got)
	}
	if _, kept := stems.Load(long); kept {
		t.Errorf("a word of %d bytes was remembered, want none over %d", len(long), maxStemmedWordKept)
	}
	for i := range maxStemsKept + 100 {
		stem("zz" + strings.Map(func(r rune) rune { return 'a' + (r-'0')%26 }, strconv.Itoa(i)) + "ing")
	}
	if n := stemsKept.Load(); n > maxStemsKept {
		t.Errorf("%d stems remembered, want at most %d", n, maxStemsKept)
	}
	if got := stem("zzbbbbbbbbbbing"); got != english.Stem("zzbbbbbbbbbbing", false) {
		t.Errorf("a word past the bound: %q", got)
	}
}
