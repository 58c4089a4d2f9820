package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-kb/strata/shared/tokens"
)

func counter(t testing.TB) Counter {
	c, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkInvariants verifies what every caller relies on: each chunk is the exact
// rune slice [Start, End) of the text, inside its section, in order, within
// the token target unless it is a single rune.
func checkInvariants(t *testing.T, text string, secs []Section, c Counter, target int) {
	t.Helper()
	runes := []rune(text)
	next := 0
	prevEnd := 0
	for si, s := range secs {
		if s.Ordinal != si {
			t.Fatalf("section %d has ordinal %d", si, s.Ordinal)
		}
		if s.Start < prevEnd || s.End < s.Start || s.End > len(runes) {
			t.Fatalf("section %d span [%d,%d) out of order (prev end %d, len %d)", si, s.Start, s.End, prevEnd, len(runes))
		}
		prevEnd = s.End
		for _, ch := range s.Chunks {
			if ch.Index != next {
				t.Fatalf("chunk index %d, want %d", ch.Index, next)
			}
			next++
			if ch.Start < s.Start || ch.End > s.End || ch.Start >= ch.End {
				t.Fatalf("chunk %d [%d,%d) outside section %d [%d,%d)", ch.Index, ch.Start, ch.End, si, s.Start, s.End)
			}
			if got := string(runes[ch.Start:ch.End]); got != ch.Content {
				t.Fatalf("chunk %d content differs from text[%d:%d]:\n%q\n%q", ch.Index, ch.Start, ch.End, ch.Content, got)
			}
			if ch.Tokens != c.Count(ch.Content) {
				t.Fatalf("chunk %d token count %d, want %d", ch.Index, ch.Tokens, c.Count(ch.Content))
			}
			if ch.Tokens > target && utf8.RuneCountInString(ch.Content) > 1 {
				t.Fatalf("chunk %d has %d tokens, target %d", ch.Index, ch.Tokens, target)
			}
			if len(ch.Checksum) != 64 {
				t.Fatalf("chunk %d checksum %q", ch.Index, ch.Checksum)
			}
		}
	}
}

func TestMarkdownSections(t *testing.T) {
	text := "Intro line.\n\n# Guide\n\nWelcome to the guide.\n\n## Install\n\nRun `go install`.\n\n```sh\n# not a heading\n\necho hi\n```\n\n## Use ##\n\nCall it.\n\n# Appendix\nLast words — ünïcode.\n"
	c := counter(t)
	secs := Markdown(text, c, Options{TargetTokens: 512})
	checkInvariants(t, text, secs, c, 512)
	var got []string
	for _, s := range secs {
		got = append(got, strings.Join(s.HeadingPath, " > "))
	}
	want := []string{"", "Guide", "Guide > Install", "Guide > Use", "Appendix"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("heading paths %q, want %q", got, want)
	}
	install := secs[2]
	if len(install.Chunks) != 1 || !strings.Contains(install.Chunks[0].Content, "# not a heading\n\necho hi") {
		t.Fatalf("fenced code must stay in its section as one piece: %+v", install.Chunks)
	}
	if secs[0].Start != 0 || secs[1].Start != strings.Index(text, "# Guide") {
		t.Fatalf("section offsets %d %d", secs[0].Start, secs[1].Start)
	}
}

func TestTextPacksParagraphsUnderTarget(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(strings.Repeat("word ", 10+i%7))
		b.WriteString("end.\n\n")
	}
	text := b.String()
	c := counter(t)
	secs := Text(text, c, Options{TargetTokens: 100})
	checkInvariants(t, text, secs, c, 100)
	if len(secs) != 1 || len(secs[0].Chunks) < 20 {
		t.Fatalf("want one section with many chunks, got %d sections, %d chunks", len(secs), len(secs[0].Chunks))
	}
}

func TestOversizedBlockIsCut(t *testing.T) {
	text := strings.Repeat("é", 3000) + " " + strings.Repeat("longword ", 2000)
	c := counter(t)
	secs := Text(text, c, Options{TargetTokens: 64})
	checkInvariants(t, text, secs, c, 64)
}

func TestEmptyAndBlank(t *testing.T) {
	c := counter(t)
	for _, text := range []string{"", "\n\n  \n", "# Only heading"} {
		secs := Markdown(text, c, Options{})
		checkInvariants(t, text, secs, c, 512)
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"# a\nb\n## c\nd", "```\n# x\n```\n# y", "\xff\xfe# z", "a\n\n\n\nb", "#\n#\n#"} {
		f.Add(s, 16)
	}
	c := counter(f)
	f.Fuzz(func(t *testing.T, text string, target int) {
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		target = 1 + abs(target)%600
		checkInvariants(t, text, Markdown(text, c, Options{TargetTokens: target}), c, target)
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
