package ocr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Budget is one file's allowance of OCR: Limits.OCR reads at most
// Limits.MaxOCRPages pictures (pages) within Limits.OCRTimeout, and every
// picture left unread is remembered with the reason, for the document's
// warnings. Readers (picture, pdf) ask Allow before they prepare a page,
// then Read it. A Budget is used by one goroutine.
type Budget struct {
	parent  context.Context
	ctx     context.Context // parent bounded by OCRTimeout
	cancel  context.CancelFunc
	ocr     extract.OCR
	max     int
	used    int
	off     string  // why no more pictures are read: OCR off, gone, out of time
	missing string  // why OCR cannot read at all: off, or gone (ErrNoOCR)
	timeout string  // the OCR time limit, for the warning
	skipped Skipped // pictures not read, and why
}

// maxReasons bounds the distinct reasons Skipped tells apart; later ones
// are counted under one, so a file cannot make a warning per page.
const maxReasons = 8

// NewBudget starts the OCR budget of a file being extracted under ctx.
// Zero limits are no limits, as elsewhere in extract.Limits. Close
// releases it.
func NewBudget(ctx context.Context, lim extract.Limits) *Budget {
	b := &Budget{parent: ctx, ocr: lim.OCR, max: lim.MaxOCRPages}
	if lim.OCRTimeout > 0 {
		b.ctx, b.cancel = context.WithTimeout(ctx, lim.OCRTimeout)
	} else {
		b.ctx, b.cancel = context.WithCancel(ctx)
	}
	if lim.OCR == nil {
		b.off, b.missing = "OCR is off", "OCR is off"
	}
	b.timeout = lim.OCRTimeout.String()
	return b
}

// Close releases the budget's timer.
func (b *Budget) Close() { b.cancel() }

// Context is the context to prepare a picture under (render a page): the
// file's, ending at the OCR time limit.
func (b *Budget) Context() context.Context { return b.ctx }

// Unavailable says why OCR cannot read anything: it is off, or it was
// found missing (extract.ErrNoOCR); "" while it can.
func (b *Budget) Unavailable() string { return b.missing }

// Allow reports whether the picture of page (0 for a file that is one
// picture) may be read; when not, the page is remembered with the reason.
func (b *Budget) Allow(page int) bool {
	switch {
	case b.off != "":
		b.skip(page, b.off)
	case b.ctx.Err() != nil:
		b.off = b.timeReason()
		b.skip(page, b.off)
	case b.max > 0 && b.used >= b.max:
		b.skip(page, fmt.Sprintf("OCR reads at most %d per file", b.max))
	default:
		b.used++
		return true
	}
	return false
}

// Read runs OCR on the picture of an allowed page. A picture OCR fails on
// is remembered (Fail) and gives no blocks; the error returned ends the
// extraction: the file's own time is up (ErrTimeout).
func (b *Budget) Read(page int, img []byte) ([]extract.OCRBlock, error) {
	blocks, err := b.ocr.Recognize(b.ctx, img)
	if err != nil {
		return nil, b.Fail(page, err)
	}
	return blocks, nil
}

// Fail remembers that page could not be read (its picture not prepared, or
// OCR failed on it) and why. It returns an error wrapping
// extract.ErrTimeout when the file's own time is up, which ends the
// extraction; past the OCR time limit, or when OCR turns out to be
// missing (extract.ErrNoOCR), later pages are not tried.
func (b *Budget) Fail(page int, err error) error {
	switch {
	case b.parent.Err() != nil:
		return fmt.Errorf("%w: OCR: %v", extract.ErrTimeout, context.Cause(b.parent))
	case b.ctx.Err() != nil:
		b.off = b.timeReason()
		b.skip(page, b.off)
	case errors.Is(err, extract.ErrNoOCR):
		b.missing = oneLine(strings.TrimPrefix(err.Error(), extract.ErrNoOCR.Error()+": "))
		b.off = b.missing
		b.skip(page, b.off)
	default:
		b.skip(page, "OCR failed: "+oneLine(err.Error()))
	}
	return nil
}

func (b *Budget) timeReason() string { return "OCR took its time limit of " + b.timeout }

func (b *Budget) skip(page int, reason string) { b.skipped.Add(page, reason) }

// Warnings say what was not read and why, one line a reason:
// "<what> is not read: <reason> (pages 3, 4)".
func (b *Budget) Warnings(what string) []string { return b.skipped.Warnings(what + " is not read: ") }

// Skipped remembers pages left out of a document, grouped by reason, for
// its warnings. The zero value is ready to use.
type Skipped struct {
	reasons []string // in the order first met
	pages   map[string][]int
}

// Add remembers that page (0 for a file without pages) was left out, and why.
func (s *Skipped) Add(page int, reason string) {
	if s.pages == nil {
		s.pages = map[string][]int{}
	}
	if _, known := s.pages[reason]; !known {
		if len(s.reasons) >= maxReasons {
			reason = "for other reasons"
		}
		if _, known := s.pages[reason]; !known {
			s.reasons = append(s.reasons, reason)
		}
	}
	s.pages[reason] = append(s.pages[reason], page)
}

// Warnings say what was left out and why, one line a reason: prefix, the
// reason and the pages, "(pages 3, 4)", unless the file is one picture
// (page 0).
func (s *Skipped) Warnings(prefix string) []string {
	var out []string
	for _, r := range s.reasons {
		w := prefix + r
		if pages := slices.DeleteFunc(slices.Clone(s.pages[r]), func(p int) bool { return p == 0 }); len(pages) > 0 {
			w += " (" + pageList(pages) + ")"
		}
		out = append(out, w)
	}
	return out
}

// maxListed bounds the page numbers a warning lists.
const maxListed = 20

func pageList(pages []int) string {
	var s strings.Builder
	s.WriteString("page")
	if len(pages) > 1 {
		s.WriteString("s")
	}
	for i, p := range pages[:min(len(pages), maxListed)] {
		if i > 0 {
			s.WriteString(",")
		}
		fmt.Fprintf(&s, " %d", p)
	}
	if len(pages) > maxListed {
		fmt.Fprintf(&s, " and %d more", len(pages)-maxListed)
	}
	return s.String()
}

// oneLine makes an error a warning's part: one line, at most 512 bytes.
func oneLine(s string) string {
	return extract.Truncate(strings.Join(strings.Fields(s), " "), 512)
}
