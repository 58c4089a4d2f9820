package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/markdown"
	"github.com/strata-kb/strata/ingestor/extract/plaintext"
	"github.com/strata-kb/strata/ingestor/tokens"
)

func counter(t testing.TB) Counter {
	c, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func md(text string) *extract.Document {
	return &extract.Document{Format: "markdown", Text: text, Blocks: markdown.Blocks(text)}
}

func txt(text string) *extract.Document {
	return &extract.Document{Format: "text", Text: text, Blocks: plaintext.Paragraphs(text)}
}

// checkInvariants verifies what every caller relies on: each chunk is the exact
// rune slice [Start, End) of the text, inside its section, in order, within
// the token target unless it is one oversized rune or a whole table/code block.
func checkInvariants(t *testing.T, doc *extract.Document, secs []Section, c Counter, o Options) {
	t.Helper()
	runes := []rune(doc.Text)
	next := 0
	prevSectionEnd := 0
	for si, s := range secs {
		if s.Ordinal != si {
			t.Fatalf("section %d has ordinal %d", si, s.Ordinal)
		}
		if s.Start < prevSectionEnd || s.End < s.Start || s.End > len(runes) {
			t.Fatalf("section %d span [%d,%d) out of order (prev end %d, len %d)", si, s.Start, s.End, prevSectionEnd, len(runes))
		}
		prevSectionEnd = s.End
		prevChunkStart := s.Start - 1
		for _, ch := range s.Chunks {
			if ch.Index != next {
				t.Fatalf("chunk index %d, want %d", ch.Index, next)
			}
			next++
			if ch.Start < s.Start || ch.End > s.End || ch.Start >= ch.End || ch.Start <= prevChunkStart {
				t.Fatalf("chunk %d [%d,%d) outside section %d [%d,%d) or not after the previous chunk", ch.Index, ch.Start, ch.End, si, s.Start, s.End)
			}
			prevChunkStart = ch.Start
			if got := string(runes[ch.Start:ch.End]); got != ch.Content {
				t.Fatalf("chunk %d content differs from text[%d:%d]:\n%q\n%q", ch.Index, ch.Start, ch.End, ch.Content, got)
			}
			if ch.Tokens != c.Count(ch.Content) || len(ch.Checksum) != 64 {
				t.Fatalf("chunk %d token count %d (want %d) or checksum %q", ch.Index, ch.Tokens, c.Count(ch.Content), ch.Checksum)
			}
			limit := o.TargetTokens
			if ch.Kind == KindTable || ch.Kind == KindCode {
				limit *= 2
			}
			if ch.Tokens > limit+1 && utf8.RuneCountInString(ch.Content) > 1 && ch.Kind != KindImage {
				t.Fatalf("chunk %d (%s) has %d tokens, target %d", ch.Index, ch.Kind, ch.Tokens, o.TargetTokens)
			}
		}
	}
}

func TestMarkdownSections(t *testing.T) {
	text := "Intro line.\n\n# Guide\n\nWelcome to the guide.\n\n## Install\n\nRun `go install`.\n\n```sh\n# not a heading\n\necho hi\n```\n\n## Use ##\n\nCall it.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n# Appendix\n## Empty heading joins the next\nLast words — ünïcode.\n"
	c := counter(t)
	o := Options{TargetTokens: 512}
	doc := md(text)
	secs := Split(doc, c, o)
	checkInvariants(t, doc, secs, c, o)
	var got []string
	for _, s := range secs {
		got = append(got, strings.Join(s.HeadingPath, " > "))
	}
	want := []string{"", "Guide", "Guide > Install", "Guide > Use", "Appendix > Empty heading joins the next"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("heading paths %q, want %q", got, want)
	}
	if c := secs[2].Chunks; len(c) != 1 || !strings.Contains(c[0].Content, "# not a heading\n\necho hi") {
		t.Fatalf("fenced code must stay in its section: %+v", c)
	}
	if secs[1].Start != strings.Index(text, "# Guide") || !strings.HasPrefix(secs[4].Chunks[0].Content, "# Appendix") {
		t.Fatalf("section offsets or merged heading wrong: %d %q", secs[1].Start, secs[4].Chunks[0].Content)
	}
}

func TestTablesCodeAndImagesKeepTheirKind(t *testing.T) {
	b := extract.NewBuilder("pdf")
	b.Add(extract.Heading, 1, 1, "Report")
	b.Add(extract.Paragraph, 0, 1, "Intro on page one.")
	b.Add(extract.Table, 0, 2, "a | b\n1 | 2")
	b.AddImage(extract.Image{Name: "x.png", Page: 2}, "Image 1 on page 2 (PNG, 64x64)")
	b.Add(extract.Paragraph, 0, 3, "After the image, page three.")
	doc := b.Doc()
	c := counter(t)
	o := Options{TargetTokens: 8}
	secs := Split(doc, c, o)
	checkInvariants(t, doc, secs, c, o)
	var kinds []string
	for _, ch := range secs[0].Chunks {
		kinds = append(kinds, ch.Kind)
		if ch.Kind == KindImage && (ch.Image != 0 || ch.PageStart != 2) {
			t.Fatalf("image chunk %+v", ch)
		}
		if ch.Kind != KindImage && ch.Image != -1 {
			t.Fatalf("text chunk with an image: %+v", ch)
		}
	}
	if strings.Join(kinds, ",") != "text,table,image,text" || secs[0].PageStart != 1 || secs[0].PageEnd != 3 {
		t.Fatalf("kinds %v pages %d-%d", kinds, secs[0].PageStart, secs[0].PageEnd)
	}
}

func TestTextPacksParagraphsUnderTargetWithOverlap(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(strings.Repeat("word ", 10+i%7))
		b.WriteString("end.\n\n")
	}
	doc := txt(b.String())
	c := counter(t)
	o := Options{TargetTokens: 100, OverlapTokens: 20}
	secs := Split(doc, c, o)
	checkInvariants(t, doc, secs, c, o)
	chunks := secs[0].Chunks
	if len(secs) != 1 || len(chunks) < 20 {
		t.Fatalf("want one section with many chunks, got %d sections, %d chunks", len(secs), len(chunks))
	}
	overlaps := 0
	for i := 1; i < len(chunks); i++ {
		if chunks[i].Start < chunks[i-1].End {
			overlaps++
		}
	}
	if overlaps < len(chunks)/2 {
		t.Fatalf("only %d of %d chunks overlap their predecessor", overlaps, len(chunks))
	}
	noOverlap := Split(doc, c, Options{TargetTokens: 100})
	for i := 1; i < len(noOverlap[0].Chunks); i++ {
		if noOverlap[0].Chunks[i].Start < noOverlap[0].Chunks[i-1].End {
			t.Fatal("chunks overlap without OverlapTokens")
		}
	}
}

func TestOversizedBlockIsCut(t *testing.T) {
	doc := txt(strings.Repeat("é", 3000) + " " + strings.Repeat("longword ", 2000))
	c := counter(t)
	o := Options{TargetTokens: 64}
	checkInvariants(t, doc, Split(doc, c, o), c, o)
}

func TestRuneIndex(t *testing.T) {
	text := strings.Repeat("aé€😀", 5000)
	r := newRuneIndex(text)
	for _, b := range []int{0, 1, 3, 4096, 4097, 9000, len(text)} {
		for b < len(text) && !utf8.RuneStart(text[b]) {
			b++
		}
		if got, want := r.at(b), utf8.RuneCountInString(text[:b]); got != want {
			t.Fatalf("at(%d) = %d, want %d", b, got, want)
		}
	}
}

func TestEmptyAndBlank(t *testing.T) {
	c := counter(t)
	for _, text := range []string{"", "\n\n  \n", "# Only heading"} {
		doc := md(text)
		checkInvariants(t, doc, Split(doc, c, Options{TargetTokens: 512}), c, Options{TargetTokens: 512})
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"# a\nb\n## c\nd", "```\n# x\n```\n# y", "\xff\xfe# z", "a\n\n\n\nb", "#\n#\n#", "| a |\n| b |\ntext"} {
		f.Add(s, 16, 4)
	}
	c := counter(f)
	f.Fuzz(func(t *testing.T, text string, target, overlap int) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		o := Options{TargetTokens: 1 + abs(target)%600, OverlapTokens: abs(overlap) % 100}
		if o.OverlapTokens >= o.TargetTokens {
			o.OverlapTokens = 0
		}
		for _, doc := range []*extract.Document{md(text), txt(text)} {
			checkInvariants(t, doc, Split(doc, c, o), c, o)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestOCRConfidence: a chunk's confidence is its OCR'd blocks' mean,
// weighted by length; text read by OCR and text the file held are chunked
// apart, so the confidence speaks for every word of its chunk.
func TestOCRConfidence(t *testing.T) {
	b := extract.NewBuilder("pdf")
	b.Add(extract.Paragraph, 0, 1, "Typed text of page one.")
	i := b.Add(extract.Paragraph, 0, 2, strings.Repeat("a", 30))
	j := b.Add(extract.Paragraph, 0, 2, strings.Repeat("b", 10))
	doc := b.Doc()
	doc.Pages = 2
	doc.Blocks[i].Confidence, doc.Blocks[j].Confidence = 90, 50
	secs := Split(doc, counter(t), Options{TargetTokens: 512})
	if len(secs) != 1 || len(secs[0].Chunks) != 2 {
		t.Fatalf("want the typed page and the OCR'd one apart, got %+v", secs)
	}
	typed, read := secs[0].Chunks[0], secs[0].Chunks[1]
	if typed.Confidence != 0 || typed.PageStart != 1 || read.Confidence != 80 || read.PageStart != 2 {
		t.Fatalf("typed %+v, OCR'd %+v: want 0 on page 1, and 80 (30 bytes at 90, 10 at 50) on page 2", typed, read)
	}
	_, chunks := Parts("6f1c3f52-8d9c-5b41-9a7e-0c7d2f4e9b10", secs)
	if chunks[1].OCRConfidence != 80 {
		t.Fatalf("message confidence %v", chunks[1].OCRConfidence)
	}
	doc.Blocks[i].Confidence, doc.Blocks[j].Confidence = 0, 0
	if got := Split(doc, counter(t), Options{TargetTokens: 512})[0].Chunks; len(got) != 1 || got[0].Confidence != 0 {
		t.Fatalf("text the file held: %+v", got)
	}
}
