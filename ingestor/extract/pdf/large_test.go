package pdf

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// manual makes a PDF of pages pages of about 2 KB of text each, its last
// page holding last.
func manual(pages int, last string) []byte {
	var ps []pdfwrite.Page
	for p := 1; p <= pages; p++ {
		var lines []string
		for l := 1; l <= 28; l++ {
			lines = append(lines, fmt.Sprintf("Page %d line %d: torque the flange bolts of unit %d in a star pattern.", p, l, p*100+l))
		}
		if p == pages {
			lines = append(lines, last)
		}
		ps = append(ps, pdfwrite.Page{Lines: lines})
	}
	return pdfwrite.MakeTitled("Plant manual", ps, nil)
}

// TestAThreeThousandPageManualIsReadToItsLastPage (issue 52 item 4): a
// 3,000-page text PDF (about 6 MB of text) is read whole under the default
// limits, its last page's words on page 3,000, within its file budget.
func TestAThreeThousandPageManualIsReadToItsLastPage(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 3,000-page PDF; skipped with -short")
	}
	const pages = 3000
	data := manual(pages, "The last page closes with the marrowfeld valve.")
	lim := extract.DefaultLimits()
	lim.Timeout = 5 * time.Minute // a loaded machine: the default 2 minutes hold the limits, not the test
	doc, err := Poppler{}.Extract(context.Background(), data, "manual.pdf", lim)
	if err != nil {
		t.Fatalf("a %d-byte PDF of %d pages: %v", len(data), pages, err)
	}
	at := strings.Index(doc.Text, "marrowfeld")
	if at < 0 || doc.Pages != pages {
		t.Fatalf("pages %d, last page's word at %d of %d bytes; warnings %v", doc.Pages, at, len(doc.Text), doc.Warnings)
	}
	for _, b := range doc.Blocks {
		if b.Start <= at && at < b.End && b.Page != pages {
			t.Errorf("the last page's word is on page %d", b.Page)
		}
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings reading the whole manual: %v", doc.Warnings)
	}
	if held := extract.Held(doc); held > lim.MaxFileBytes {
		t.Errorf("the manual holds %d bytes, over the budget of %d", held, lim.MaxFileBytes)
	}
	t.Logf("%d pages: %d bytes of PDF, %d bytes of text, %d blocks, %d bytes held", pages, len(data), len(doc.Text), len(doc.Blocks), extract.Held(doc))
}

// BenchmarkManualSize reads a text PDF of about 1 MB of text and the
// 3,000-page manual (about 6 MB) in one run: the time per MB of text of
// each says whether a long file costs more than its size.
func BenchmarkManualSize(b *testing.B) {
	for _, pages := range []int{470, 3000} {
		data := manual(pages, "The last page closes with the marrowfeld valve.")
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			extracttest.BenchPerMB(b, func() (*extract.Document, error) {
				return Poppler{}.Extract(context.Background(), data, "manual.pdf", extract.DefaultLimits())
			})
		})
	}
}

// binder is pdfwrite.ScannedBinder with testdata/lastpage.png last.
func binder(tb testing.TB, pages int) []byte {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "lastpage.png"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	scan, err := png.Decode(f)
	if err != nil {
		tb.Fatal(err)
	}
	return pdfwrite.ScannedBinder(pages, scan)
}

// TestTesseractReadsATwoHundredMegabyteScanToItsLastPage (issue 52 item 4): a
// 200 MB PDF of 24 scanned pages, within the OCR page limit, is read by OCR
// under the default limits, its last page's words found on page 24.
func TestTesseractReadsATwoHundredMegabyteScanToItsLastPage(t *testing.T) {
	reader := tesseractTest(t, "this 200 MB scan")
	const pages = 24
	data := binder(t, pages)
	if len(data) < 200_000_000 {
		t.Fatalf("the binder is %d bytes, not 200 MB", len(data))
	}
	lim := extract.DefaultLimits()
	lim.OCR = reader
	lim.Timeout = 5 * time.Minute // a loaded machine: the default limits hold, not the test
	doc, err := Poppler{}.Extract(context.Background(), data, "binder.pdf", lim)
	if err != nil {
		t.Fatalf("a %d-byte scan of %d pages: %v", len(data), pages, err)
	}
	at := strings.Index(doc.Text, "marrowfeld")
	if at < 0 || doc.Pages != pages {
		t.Fatalf("pages %d, last page's word at %d in %q; warnings %v", doc.Pages, at, doc.Text, doc.Warnings)
	}
	for _, b := range doc.Blocks {
		if b.Start <= at && at < b.End && (b.Page != pages || b.Confidence == 0) {
			t.Errorf("the last page's word is on page %d, confidence %v", b.Page, b.Confidence)
		}
	}
	t.Logf("%d pages: %d bytes of PDF, %d bytes of text, warnings %v", pages, len(data), len(doc.Text), doc.Warnings)
}
