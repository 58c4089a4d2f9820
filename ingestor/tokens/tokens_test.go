package tokens

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	// Reference counts from OpenAI's tokenizer for cl100k_base.
	for s, want := range map[string]int{
		"":                             0,
		"hello world":                  2,
		"tiktoken is great!":           6,
		"antidisestablishmentarianism": 6,
	} {
		if got := c.Count(s); got != want {
			t.Errorf("Count(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestPrefix(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	s := "Strata turns a company's files into knowledge. 数据 and naïve café — with tabs\tand\nnewlines."
	total := c.Count(s)
	for n := 1; n <= total+1; n++ {
		p := c.Prefix(s, n)
		if n >= total {
			if p != len(s) {
				t.Fatalf("Prefix(%d) = %d, want all %d bytes", n, p, len(s))
			}
			continue
		}
		// The prefix is n tokens of the whole, and counted alone it holds n tokens
		// (a cut inside a multi-byte rune's token may hold one more, never fewer).
		if got := c.Count(s[:p]); got < n || got > n+1 {
			t.Fatalf("Prefix(%d) = %d bytes, which count %d tokens", n, p, got)
		}
		if p <= c.Prefix(s, n-1) {
			t.Fatalf("Prefix(%d) = %d does not grow", n, p)
		}
	}
	if c.Prefix("", 3) != 0 || c.Prefix("abc", 0) != 0 {
		t.Fatal("empty cases")
	}
}

// TestLongPieceCountedInParts: a piece far longer than any token (a data
// URI) is counted in parts, in bounded memory: about the count of its parts,
// never more than a token a part over them.
func TestLongPieceCountedInParts(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	part := strings.Repeat("A", maxPieceBytes)
	one := c.Count(part)
	if got := c.Count(strings.Repeat(part, 64)); got != 64*one {
		t.Fatalf("64 parts counted %d, want %d (64 x %d)", got, 64*one, one)
	}
	// Multi-byte runes are never cut apart.
	s := strings.Repeat("é", maxPieceBytes)
	if got, whole := c.Count(s), c.Count(s[:maxPieceBytes]); got < 2*whole-2 || got > 2*whole+2 {
		t.Fatalf("%d tokens for twice a text of %d", got, whole)
	}
}

// TestPrefixMatchesCodec: Prefix walking the pieces cuts where the
// tokenizer's own encoding does, for every n.
func TestPrefixMatchesCodec(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"A: 0, B: strata, C: turns, D: 1, E: files, F: 2.5%, G: 2024-03-15",
		"func (c *Counter) Prefix(s string, n int) int {\n\tif n <= 0 {\n\t\treturn 0\n\t}\n}",
		"Ünïcödé — 日本語のテキスト 🎉 and 'contractions' we're they'll\r\n\r\n   spaces\t\ttabs",
		strings.Repeat("0x9e3779b97f4a7c15, ", 40),
	} {
		total := c.Count(s)
		for n := 0; n <= total+1; n++ {
			if got, want := c.Prefix(s, n), c.codecPrefix(s, n); got != want {
				t.Fatalf("Prefix(%.30q, %d) = %d, the tokenizer cuts at %d", s, n, got, want)
			}
		}
	}
	// DEL is in no token: the tokenizer's byte sizes leave it out, so its
	// cut would fall short; Prefix counts its bytes.
	s := "del\x7fin the middle\x7f\x7f and the end\x7f"
	for n := range c.Count(s) + 1 {
		if p := c.Prefix(s, n); c.Count(s[:p]) != n {
			t.Fatalf("Prefix(%q, %d) = %d: %q has %d tokens", s, n, p, s[:p], c.Count(s[:p]))
		}
	}
}

// TestCountWithinStopsPastItsLimit: within the limit the count is Count's;
// past it, more than the limit and no more than Count's.
func TestCountWithinStopsPastItsLimit(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{"", "\xffbad utf-8\xfe", strings.Repeat("word, 12.5; ", 500)}, samples...) {
		total := c.Count(s)
		for _, limit := range []int{0, 1, total / 2, total - 1, total, total + 1} {
			n, within := c.CountWithin(s, limit)
			switch {
			case within != (total <= limit):
				t.Fatalf("CountWithin(%.30q, %d) within=%v, but the count is %d", s, limit, within, total)
			case within && n != total:
				t.Fatalf("CountWithin(%.30q, %d) = %d, Count %d", s, limit, n, total)
			case !within && (n <= limit || n > total):
				t.Fatalf("CountWithin(%.30q, %d) = %d past the limit: want more than the limit, at most %d", s, limit, n, total)
			}
		}
	}
}

// checkPrefixEach holds PrefixEach to what it tells: PrefixExact's cut, and
// increasing prefix ends whose counts are Count's, none past the cut.
func checkPrefixEach(t *testing.T, c *Counter, s string, n int) {
	t.Helper()
	prev := 0
	got, exact := c.PrefixEach(s, n, func(end, tokens int) {
		if end <= prev || end > len(s) {
			t.Fatalf("PrefixEach(%.30q, %d) told end %d after %d", s, n, end, prev)
		}
		prev = end
		if want := c.Count(s[:end]); tokens != want {
			t.Fatalf("PrefixEach(%.30q, %d): the first %d bytes have %d tokens, not %d", s, n, end, want, tokens)
		}
	})
	if want, wantExact := c.PrefixExact(s, n); got != want || exact != wantExact {
		t.Fatalf("PrefixEach(%.30q, %d) = %d, %v; PrefixExact %d, %v", s, n, got, exact, want, wantExact)
	}
	if prev > got {
		t.Fatalf("PrefixEach(%.30q, %d) told a prefix of %d bytes past its cut at %d", s, n, prev, got)
	}
}

func TestPrefixEachTellsTheCountOfEachPrefix(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{"del\x7fin the middle\x7f\x7f and the end\x7f", "a  b\n \n c's 'S"}, samples...) {
		for n := range c.Count(s) + 2 {
			checkPrefixEach(t, c, s, n)
		}
	}
}

// FuzzPrefixEach: on any text, every prefix count PrefixEach tells is Count's.
func FuzzPrefixEach(f *testing.F) {
	for _, s := range samples {
		f.Add(s, 7)
	}
	c, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		checkPrefixEach(t, c, s, max(n, -n)%4096)
	})
}

// TestCountsStayTheTokenizersWhenTheCacheIsFull: more distinct pieces than
// the cache has slots replace one another, and every count stays right.
func TestCountsStayTheTokenizersWhenTheCacheIsFull(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range cachedPieces + cachedPieces/2 {
		b.WriteString(" w") // " wbcd" is one piece: distinct pieces
		for ; i > 0; i /= 26 {
			b.WriteByte(byte('a' + i%26))
		}
	}
	text := b.String()
	for range 2 { // the second pass meets replaced slots
		if got, want := c.Count(text), codecCount(t, c, text); got != want {
			t.Fatalf("count %d, the tokenizer %d", got, want)
		}
	}
}

func codecCount(t *testing.T, c *Counter, s string) int {
	t.Helper()
	n, err := c.codec.Count(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
