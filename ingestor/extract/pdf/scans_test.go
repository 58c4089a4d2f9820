package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/image/tiff"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/ocr"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// fakeOCR says what picture it was handed, in one paragraph, and
// remembers the pictures.
type fakeOCR struct {
	mu   sync.Mutex
	seen []string
}

func (f *fakeOCR) Recognize(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrCorrupt, err)
	}
	seen := fmt.Sprintf("%s %dx%d %v", format, cfg.Width, cfg.Height, cfg.ColorModel == nil)
	if format == "tiff" {
		if g, err := tiff.Decode(bytes.NewReader(img)); err == nil {
			_, gray := g.(*image.Gray)
			seen = fmt.Sprintf("%s %dx%d gray=%v", format, cfg.Width, cfg.Height, gray)
		}
	}
	f.mu.Lock()
	f.seen = append(f.seen, seen)
	f.mu.Unlock()
	return []extract.OCRBlock{{Text: "Read by OCR from a " + seen + " picture.", Confidence: 77}}, nil
}

func (f *fakeOCR) pictures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// ocrFunc is an extract.OCR made of a function.
type ocrFunc func(ctx context.Context, img []byte) ([]extract.OCRBlock, error)

func (f ocrFunc) Recognize(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
	return f(ctx, img)
}

func withOCR(o extract.OCR) extract.Limits {
	lim := testLimits()
	lim.OCR = o
	return lim
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pageTexts lists the document's blocks as "page kind text".
func pageTexts(doc *extract.Document) []string {
	var out []string
	for _, b := range doc.Blocks {
		out = append(out, fmt.Sprintf("%d %v %s", b.Page, b.Kind, doc.Text[b.Start:b.End]))
	}
	return out
}

// TestScanReadByOCR: mixed.pdf has text on page 1 and a scan on page 2;
// only page 2 is rendered (8-bit gray, 300 dpi: 397x227 pt is 1655x946
// pixels) and read by OCR, its paragraphs on page 2 with their confidence.
func TestScanReadByOCR(t *testing.T) {
	data := readFile(t, "mixed.pdf")
	f := &fakeOCR{}
	doc, err := Poppler{}.Extract(t.Context(), data, "mixed.pdf", withOCR(f))
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	want := []string{
		"1 paragraph The zebracorn ledger lists every invoice we sent this spring.\nEach entry names the customer, the amount and the date it was paid.\nA second paragraph follows after a blank line to test grouping.",
		"2 paragraph Read by OCR from a tiff 1655x946 gray=true picture.",
		"2 image Image 1 on page 2 (JPEG, 1654x945)",
	}
	if got := pageTexts(doc); !slices.Equal(got, want) || len(doc.Warnings) != 0 || doc.Pages != 2 {
		t.Fatalf("blocks\n%s\nwant\n%s\nwarnings %q", strings.Join(got, "\n"), strings.Join(want, "\n"), doc.Warnings)
	}
	for _, b := range doc.Blocks {
		if want := map[int]float64{1: 0, 2: 77}[b.Page]; b.Kind == extract.Paragraph && b.Confidence != want {
			t.Errorf("block %+v: confidence, want %v", b, want)
		}
	}
	if got := f.pictures(); len(got) != 1 {
		t.Errorf("OCR read %q, want page 2 only", got)
	}
}

// TestScanWithoutOCR: a file with no text at all needs OCR, which is an
// error saying so; a file with some text keeps it and says which pages
// were not read.
func TestScanWithoutOCR(t *testing.T) {
	missing := ocrFunc(func(context.Context, []byte) ([]extract.OCRBlock, error) {
		return nil, fmt.Errorf("%w: tesseract not found in PATH: install tesseract-ocr", extract.ErrNoOCR)
	})
	for _, c := range []struct {
		lim  extract.Limits
		says string
	}{{testLimits(), "OCR is off"}, {withOCR(missing), "tesseract not found in PATH: install tesseract-ocr"}} {
		doc, err := Poppler{}.Extract(t.Context(), readFile(t, "scanned.pdf"), "scanned.pdf", c.lim)
		if !errors.Is(err, extract.ErrNoOCR) || doc != nil || !strings.Contains(err.Error(), "no page has a text layer (1 page(s)") || !strings.HasSuffix(err.Error(), c.says) {
			t.Errorf("scanned.pdf: %v, %v; want ErrNoOCR saying %q", doc, err, c.says)
		}
		doc, err = Poppler{}.Extract(t.Context(), readFile(t, "mixed.pdf"), "mixed.pdf", c.lim)
		if err != nil {
			t.Fatal(err)
		}
		want := "text of pages without a text layer is not read: " + c.says + " (page 2)"
		if !slices.Equal(doc.Warnings, []string{want}) || !strings.Contains(doc.Text, "zebracorn") {
			t.Errorf("mixed.pdf: warnings %q, want %q", doc.Warnings, want)
		}
	}
}

// scans is a PDF of n pages with a picture and no text.
func scans(n int) []byte {
	var pages []pdfwrite.Page
	for range n {
		pages = append(pages, pdfwrite.Page{Image: true})
	}
	return pdfwrite.Make(pages, nil)
}

// TestScanLimits: MaxOCRPages and OCRTimeout bound the pages read; the
// rest are named in a warning.
func TestScanLimits(t *testing.T) {
	data := scans(3)
	lim := withOCR(&fakeOCR{})
	lim.MaxOCRPages = 1
	doc, err := Poppler{}.Extract(t.Context(), data, "scans.pdf", lim)
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	if got := pageTexts(doc); len(got) != 4 || !strings.HasPrefix(got[0], "1 paragraph Read by OCR") ||
		!slices.Equal(doc.Warnings, []string{"text of pages without a text layer is not read: OCR reads at most 1 per file (pages 2, 3)"}) {
		t.Fatalf("MaxOCRPages 1: blocks %q, warnings %q", got, doc.Warnings)
	}

	hang := ocrFunc(func(ctx context.Context, _ []byte) ([]extract.OCRBlock, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
	})
	lim = withOCR(hang)
	lim.OCRTimeout = 300 * time.Millisecond
	start := time.Now()
	doc, err = Poppler{}.Extract(t.Context(), data, "scans.pdf", lim)
	if err != nil || time.Since(start) > 10*time.Second {
		t.Fatalf("OCRTimeout: %v after %v", err, time.Since(start))
	}
	if !slices.Equal(doc.Warnings, []string{"text of pages without a text layer is not read: OCR took its time limit of 300ms (pages 1, 2, 3)"}) {
		t.Fatalf("OCRTimeout: warnings %q", doc.Warnings)
	}

	lim = withOCR(&fakeOCR{})
	lim.MaxTextBytes = 40
	if doc, err := (Poppler{}).Extract(t.Context(), data, "scans.pdf", lim); !errors.Is(err, extract.ErrTooLarge) || doc != nil {
		t.Fatalf("MaxTextBytes 40: %v, %v; want ErrTooLarge", doc, err)
	}
}

// TestJunkPagesReadByOCR: the pages of TAMReview.pdf whose text is junk
// (9, 20, 21) are read by OCR instead of being left out.
func TestJunkPagesReadByOCR(t *testing.T) {
	data := readFile(t, "hostile/TAMReview.pdf")
	f := &fakeOCR{}
	doc, err := Poppler{}.Extract(t.Context(), data, "TAMReview.pdf", withOCR(f))
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	var read []int
	for _, b := range doc.Blocks {
		if b.Confidence > 0 {
			read = append(read, b.Page)
		}
	}
	if !slices.Equal(read, []int{9, 20, 21}) || len(doc.Warnings) != 0 {
		t.Fatalf("pages read by OCR %v, warnings %q", read, doc.Warnings)
	}
}

// TestHostileWithoutOCR: the hostile corpus without OCR gives documents
// or classified errors, ErrNoOCR for the files with no text layer.
func TestHostileWithoutOCR(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.pdf"))
	noText := 0
	for _, f := range files {
		data := readFile(t, strings.TrimPrefix(f, "testdata/"))
		doc, err := Poppler{}.Extract(t.Context(), data, filepath.Base(f), testLimits())
		switch {
		case errors.Is(err, extract.ErrNoOCR):
			noText++
			if doc != nil || !strings.Contains(err.Error(), "OCR is off") {
				t.Errorf("%s: %v", f, err)
			}
		case err != nil:
			if !extracttest.Classified(err) {
				t.Errorf("%s: %v", f, err)
			}
		default:
			extracttest.Verify(t, doc, data, profile)
		}
	}
	// GHOSTSCRIPT-698804-1-fuzzed, PDFBOX-3148-2-fuzzed, PDFBOX-4352-0,
	// XiaoBiaoSong, bug1065245, bug1782186, empty_protected, issue16263,
	// issue19802, operator_list_cycle: blank or junk pages only.
	if noText != 10 {
		t.Errorf("%d files need OCR, want 10", noText)
	}
}

func TestRenderDPI(t *testing.T) {
	for _, c := range []struct {
		w, h float64
		dpi  int
	}{{612, 792, 300}, {842, 1191, 300}, {0, 0, 300}, {2384, 3370, 147}, {14400, 14400, 28}} {
		dpi := renderDPI([2]float64{c.w, c.h})
		px := (c.w / 72 * float64(dpi)) * (c.h / 72 * float64(dpi))
		if dpi != c.dpi || px > maxScanPixels {
			t.Errorf("%vx%v pt: %d dpi (%.0f pixels), want %d", c.w, c.h, dpi, px, c.dpi)
		}
	}
}

// tesseractTest returns the real Tesseract for a test of go tool task
// test-ocr (STRATA_OCR_TESTS=all), which reads what (go tool task test OCRs
// two pages, end to end); it fails without tesseract unless STRATA_NO_OCR=1.
func tesseractTest(t *testing.T, what string) *ocr.Tesseract {
	t.Helper()
	if os.Getenv("STRATA_OCR_TESTS") != "all" {
		t.Skip("go tool task test OCRs two pages, in the end-to-end TestOfficeFilesAndScans; go tool task test-ocr (STRATA_OCR_TESTS=all) reads " + what + " too")
	}
	tess, err := ocr.New(ocr.Config{})
	if err != nil {
		if os.Getenv("STRATA_NO_OCR") == "1" {
			t.Skipf("STRATA_NO_OCR=1: OCR is not tested on this machine (%v)", err)
		}
		t.Fatalf("%v (set STRATA_NO_OCR=1 to skip the tests that need tesseract)", err)
	}
	return tess
}

// TestTesseractReadsScan: the scan in mixed.pdf read by Tesseract.
func TestTesseractReadsScan(t *testing.T) {
	tess := tesseractTest(t, "this one")
	data := readFile(t, "mixed.pdf")
	doc, err := Poppler{}.Extract(t.Context(), data, "mixed.pdf", withOCR(tess))
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	var found []string
	for _, b := range doc.Blocks {
		if text := doc.Text[b.Start:b.End]; b.Page == 2 && b.Kind == extract.Paragraph && b.Confidence > 50 {
			found = append(found, text)
		}
	}
	if len(found) != 2 || !strings.HasPrefix(found[0], "Scanned report: the marmalade protocol was approved in March.") ||
		!strings.Contains(found[1], "records team") || len(doc.Warnings) != 0 {
		t.Fatalf("page 2 read %q, warnings %q", found, doc.Warnings)
	}
}

// TestOCRTimeBeyondTimeout: OCR has lim.OCRTimeout beyond the lim.Timeout
// of poppler's tools.
func TestOCRTimeBeyondTimeout(t *testing.T) {
	slow := ocrFunc(func(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
		case <-time.After(3500 * time.Millisecond):
			return []extract.OCRBlock{{Text: "slow but read", Confidence: 60}}, nil
		}
	})
	lim := withOCR(slow)
	lim.Timeout, lim.OCRTimeout = 3*time.Second, 20*time.Second
	doc, err := Poppler{}.Extract(t.Context(), scans(1), "scan.pdf", lim)
	if err != nil || !strings.Contains(doc.Text, "slow but read") || len(doc.Warnings) != 0 {
		t.Fatalf("%v, %v", doc, err)
	}
}
