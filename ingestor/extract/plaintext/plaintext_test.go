package plaintext

import (
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

var profile = extracttest.Profile{
	Format:        "text",
	TextIsInput:   true,
	Kinds:         []extract.Kind{extract.Paragraph},
	TrimmedBlocks: true,
}

func TestConformance(t *testing.T) {
	var big strings.Builder
	for i := 0; big.Len() < 64<<10; i++ {
		big.WriteString("Line of a long log file, entry ")
		big.WriteString(strings.Repeat("x", i%50))
		if i%7 == 0 {
			big.WriteString("\n")
		}
		big.WriteString("\n")
	}
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples: []extracttest.Sample{
			{Name: "notes.txt", Data: []byte("First paragraph,\ntwo lines.\n\n  Second, indented.  \n\n\n\tThird\twith tabs.\n")},
			{Name: "crlf.txt", Data: []byte("Windows\r\nline ends\r\n\r\nÜnïcödé — 日本語 🎉\r\n")},
			{Name: "data.csv", Data: []byte("a,b,c\n1,2,3\n")},
			{Name: "one-line.txt", Data: []byte("no newline at the end")},
		},
		Big: &extracttest.Sample{Name: "big.log", Data: []byte(big.String())},
		Hostile: []extracttest.Sample{
			{Name: "blank.txt", Data: []byte(" \n\t\n\r\n\u00a0\n")},
			{Name: "one-long-line.txt", Data: []byte(strings.Repeat("word ", 200000))},
			{Name: "many-blank-lines.txt", Data: []byte(strings.Repeat("\n", 1<<20) + "x")},
			{Name: "binary.txt", Data: []byte("text\x00more"), Want: extract.ErrCorrupt},
			{Name: "bom.txt", Data: []byte("\xef\xbb\xbfHello")},
		},
		Known: map[string]string{
			"cancelled": "Extract returns the document and the bare context error, not ErrTimeout",
			"deadline":  "Extract returns the document and the bare context error, not ErrTimeout",
		},
	})
}

func TestParagraphs(t *testing.T) {
	text := "  a\n b \n\n\nc\r\n \nd"
	var got []string
	for _, b := range Paragraphs(text) {
		got = append(got, text[b.Start:b.End])
	}
	if want := []string{"a\n b", "c", "d"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("paragraphs %q, want %q", got, want)
	}
	extracttest.Verify(t, &extract.Document{Format: "text", Text: text, Blocks: Paragraphs(text)}, []byte(text), profile)
}
