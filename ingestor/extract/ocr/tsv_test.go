package ocr

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
)

// page.tsv is what tesseract 5.3 printed for page.png (testdata/README.md):
// two paragraphs, the first of two lines.
func TestParseTSVSample(t *testing.T) {
	out, err := os.ReadFile("testdata/page.tsv")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := ParseTSV(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"The zebracorn ledger lists every invoice we sent this spring. Each entry names the customer, the amount and the date it was paid.",
		"A second paragraph follows after a blank line to test grouping.",
	}
	if len(blocks) != len(want) {
		t.Fatalf("%d blocks, want %d: %+v", len(blocks), len(want), blocks)
	}
	for i, w := range want {
		if blocks[i].Text != w {
			t.Errorf("block %d: %q, want %q", i, blocks[i].Text, w)
		}
	}
	// The means of the words' conf column (awk over page.tsv).
	for i, c := range []float64{96.3239, 96.0964} {
		if math.Abs(blocks[i].Confidence-c) > 0.001 {
			t.Errorf("block %d: confidence %v, want %v", i, blocks[i].Confidence, c)
		}
	}
}

func tsv(rows ...string) []byte {
	return []byte(tsvHeader + "\n" + strings.Join(rows, "\n") + "\n")
}

func TestParseTSVGrouping(t *testing.T) {
	blocks, err := ParseTSV(tsv(
		"1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t",
		"2\t1\t1\t0\t0\t0\t0\t0\t100\t100\t-1\t",
		"5\t1\t1\t1\t1\t1\t0\t0\t10\t10\t90\tHello",
		"5\t1\t1\t1\t1\t2\t0\t0\t10\t10\t-1\t   ",          // a word of spaces: no text
		"5\t1\t1\t1\t2\t1\t0\t0\t10\t10\t70\twor\x07ld",    // a control character is dropped
		"5\t1\t1\t2\t1\t1\t0\t0\t10\t10\t-1\tunscored",     // no word scored: the least confidence
		"5\t1\t2\t1\t1\t1\t0\t0\t10\t10\t50\t",             // an empty paragraph is left out
		"5\t2\t1\t1\t1\t1\t0\t0\t10\t10\t100\tpage\xfftwo", // another page of a multi-page TIFF; invalid UTF-8
	))
	if err != nil {
		t.Fatal(err)
	}
	got := []extract.OCRBlock{{Text: "Hello world", Confidence: 80}, {Text: "unscored", Confidence: minConfidence}, {Text: "page\uFFFDtwo", Confidence: 100}}
	if len(blocks) != len(got) {
		t.Fatalf("blocks %+v, want %+v", blocks, got)
	}
	for i := range got {
		if blocks[i] != got[i] {
			t.Errorf("block %d: %+v, want %+v", i, blocks[i], got[i])
		}
	}
}

func TestParseTSVNothing(t *testing.T) {
	blocks, err := ParseTSV(tsv("1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t"))
	if err != nil || len(blocks) != 0 {
		t.Fatalf("a page without words: %+v, %v", blocks, err)
	}
}

func TestParseTSVBroken(t *testing.T) {
	for name, out := range map[string][]byte{
		"no header":       []byte("Hello world\n"),
		"empty":           nil,
		"short row":       tsv("5\t1\t1\t1\t1\t1\t0\t0\t10\t10\t90"),
		"bad number":      tsv("5\t1\tx\t1\t1\t1\t0\t0\t10\t10\t90\tword"),
		"bad confidence":  tsv("5\t1\t1\t1\t1\t1\t0\t0\t10\t10\tsure\tword"),
		"plain text mode": []byte("The zebracorn ledger\n"),
	} {
		if _, err := ParseTSV(out); !errors.Is(err, extract.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzParseTSV: any output gives paragraphs of clean one-line text with a
// confidence in (0, 100], or ErrCorrupt.
func FuzzParseTSV(f *testing.F) {
	out, err := os.ReadFile("testdata/page.tsv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(out)
	f.Add(tsv("5\t1\t1\t1\t1\t1\t0\t0\t10\t10\t-1\tx"))
	f.Fuzz(func(t *testing.T, out []byte) {
		blocks, err := ParseTSV(out)
		if err != nil {
			if !errors.Is(err, extract.ErrCorrupt) {
				t.Fatal(err)
			}
			return
		}
		for _, b := range blocks {
			if b.Text == "" || strings.TrimSpace(b.Text) != b.Text || strings.ContainsAny(b.Text, "\n\r\t") || !utf8.ValidString(b.Text) ||
				!(b.Confidence > 0 && b.Confidence <= 100) {
				t.Fatalf("block %+v", b)
			}
		}
	})
}
