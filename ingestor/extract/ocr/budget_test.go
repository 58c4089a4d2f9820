package ocr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// ocrFunc is an extract.OCR made of a function.
type ocrFunc func(ctx context.Context, img []byte) ([]extract.OCRBlock, error)

func (f ocrFunc) Recognize(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
	return f(ctx, img)
}

func limits(o extract.OCR) extract.Limits {
	lim := extract.DefaultLimits()
	lim.OCR = o
	return lim
}

func warnings(t *testing.T, b *Budget, want ...string) {
	t.Helper()
	if got := b.Warnings("text in pictures"); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

func TestBudgetOff(t *testing.T) {
	b := NewBudget(t.Context(), limits(nil))
	defer b.Close()
	if b.Allow(0) || b.Unavailable() != "OCR is off" {
		t.Fatalf("OCR off: allowed, or unavailable %q", b.Unavailable())
	}
	warnings(t, b, "text in pictures is not read: OCR is off")
}

func TestBudgetPages(t *testing.T) {
	lim := limits(ocrFunc(func(context.Context, []byte) ([]extract.OCRBlock, error) {
		return []extract.OCRBlock{{Text: "read", Confidence: 90}}, nil
	}))
	lim.MaxOCRPages = 2
	b := NewBudget(t.Context(), lim)
	defer b.Close()
	var read []int
	for page := 1; page <= 25; page++ {
		if b.Allow(page) {
			if blocks, err := b.Read(page, nil); err != nil || len(blocks) != 1 {
				t.Fatalf("page %d: %v, %v", page, blocks, err)
			}
			read = append(read, page)
		}
	}
	if !slices.Equal(read, []int{1, 2}) || b.Unavailable() != "" {
		t.Fatalf("read %v, unavailable %q", read, b.Unavailable())
	}
	warnings(t, b, "text in pictures is not read: OCR reads at most 2 per file (pages 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22 and 3 more)")
}

// TestBudgetMissing: OCR found missing on the first page is not tried on
// the next, and says why.
func TestBudgetMissing(t *testing.T) {
	calls := 0
	b := NewBudget(t.Context(), limits(ocrFunc(func(context.Context, []byte) ([]extract.OCRBlock, error) {
		calls++
		return nil, fmt.Errorf("%w: tesseract not found in PATH: install tesseract-ocr", extract.ErrNoOCR)
	})))
	defer b.Close()
	for page := 1; page <= 3; page++ {
		if b.Allow(page) {
			if _, err := b.Read(page, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if calls != 1 || b.Unavailable() != "tesseract not found in PATH: install tesseract-ocr" {
		t.Fatalf("%d calls, unavailable %q", calls, b.Unavailable())
	}
	warnings(t, b, "text in pictures is not read: tesseract not found in PATH: install tesseract-ocr (pages 1, 2, 3)")
}

// TestBudgetTime: past OCRTimeout the pages left are not read; the file's
// own time running out ends the extraction.
func TestBudgetTime(t *testing.T) {
	hang := ocrFunc(func(ctx context.Context, _ []byte) ([]extract.OCRBlock, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
	})
	lim := limits(hang)
	lim.OCRTimeout = 50 * time.Millisecond
	b := NewBudget(t.Context(), lim)
	defer b.Close()
	if !b.Allow(1) {
		t.Fatal("page 1 not allowed")
	}
	if _, err := b.Read(1, nil); err != nil {
		t.Fatal(err)
	}
	if b.Allow(2) || b.Unavailable() != "" {
		t.Fatalf("page 2 allowed after the time limit, or unavailable %q", b.Unavailable())
	}
	warnings(t, b, "text in pictures is not read: OCR took its time limit of 50ms (pages 1, 2)")

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	b = NewBudget(ctx, limits(hang))
	defer b.Close()
	b.Allow(1)
	if _, err := b.Read(1, nil); !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("the file's time is up: %v, want ErrTimeout", err)
	}
}

// TestBudgetFailures: a page OCR fails on is left out, the next read; the
// distinct reasons are bounded.
func TestBudgetFailures(t *testing.T) {
	b := NewBudget(t.Context(), limits(ocrFunc(func(_ context.Context, img []byte) ([]extract.OCRBlock, error) {
		if len(img) == 0 {
			return []extract.OCRBlock{{Text: "fine", Confidence: 90}}, nil
		}
		return nil, fmt.Errorf("%w: tesseract: exit status 1: error\n%s", extract.ErrCorrupt, img)
	})))
	defer b.Close()
	for page := 1; page <= 12; page++ {
		img := []byte(fmt.Sprint("reason ", page))
		if page == 12 {
			img = nil
		}
		if !b.Allow(page) {
			t.Fatalf("page %d not allowed", page)
		}
		blocks, err := b.Read(page, img)
		if err != nil || (page == 12) != (len(blocks) == 1) {
			t.Fatalf("page %d: %v, %v", page, blocks, err)
		}
	}
	got := b.Warnings("text in pictures")
	if len(got) != maxReasons+1 || got[0] != "text in pictures is not read: OCR failed: corrupt or unreadable file: tesseract: exit status 1: error reason 1 (page 1)" ||
		got[maxReasons] != "text in pictures is not read: for other reasons (pages 9, 10, 11)" {
		t.Fatalf("warnings %q", got)
	}
}

// TestBudgetMissingTesseract: OCR on without tesseract says what to
// install, for each file.
func TestBudgetMissingTesseract(t *testing.T) {
	_, err := New(Config{Binary: "no-such-tesseract"})
	b := NewBudget(t.Context(), limits(Missing{Err: err}))
	defer b.Close()
	if !b.Allow(0) {
		t.Fatal("not allowed")
	}
	if blocks, err := b.Read(0, nil); err != nil || blocks != nil {
		t.Fatalf("%v, %v", blocks, err)
	}
	want := "no-such-tesseract not found in PATH: install tesseract-ocr (apt-get install tesseract-ocr)"
	if b.Unavailable() != want {
		t.Fatalf("unavailable %q, want %q", b.Unavailable(), want)
	}
	warnings(t, b, "text in pictures is not read: "+want)
}
