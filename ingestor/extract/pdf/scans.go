package pdf

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/ocr"
)

const (
	// scanDPI is the resolution pages are rendered at for OCR: Tesseract
	// reads 10-12 pt text best at 300 dpi.
	scanDPI = 300
	// maxScanPixels bounds a rendered page (an A3 page at 300 dpi is 17.4
	// megapixels): a larger page is rendered at a lower resolution, so a
	// poster or a page size a file lies about costs no more.
	maxScanPixels = 32 << 20
)

// NeedsOCR reports whether a page's text (as pdftotext prints it) leaves
// it to OCR: none, or junk (no usable character mapping).
func NeedsOCR(page string) bool {
	text := Sanitize(page)
	return strings.TrimSpace(text) == "" || Junk(text)
}

// readScans reads with OCR the pages of the file (pages, their text from
// pdftotext) that need it, as far as the budget allows, and returns their
// paragraphs by page number; a page OCR read is in the map even when it
// had no text. textBytes is the text so far, which the pages read add to
// up to lim.MaxTextBytes. Its error ends the extraction.
func (p Poppler) readScans(pdf []byte, pages []string, textBytes int, lim extract.Limits, budget *ocr.Budget) (map[int][]extract.OCRBlock, error) {
	var read map[int][]extract.OCRBlock
	var sizes map[int][2]float64
	dir := ""
	for i, text := range pages {
		page := i + 1
		if !NeedsOCR(text) || !budget.Allow(page) {
			continue
		}
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp(p.ScratchDir, "strata-ocr-"); err != nil {
				return nil, fmt.Errorf("OCR: %w", err)
			}
			defer os.RemoveAll(dir)
			// The sizes of the pages left, for their resolution; without
			// them (pdfinfo failed) pages are rendered at scanDPI.
			sizes, _ = p.pageSizes(budget.Context(), pdf, page, len(pages), lim)
		}
		img, err := p.render(budget.Context(), pdf, dir, page, renderDPI(sizes[page]), lim)
		if err != nil {
			if err := budget.Fail(page, err); err != nil {
				return nil, err
			}
			continue
		}
		blocks, err := budget.Read(page, img)
		if err != nil {
			return nil, err
		}
		if read == nil {
			read = map[int][]extract.OCRBlock{}
		}
		read[page] = blocks
		for _, b := range blocks {
			textBytes += len(b.Text) + 2
		}
		if lim.MaxTextBytes > 0 && textBytes > lim.MaxTextBytes {
			return nil, fmt.Errorf("%w: text with the pages read by OCR over %d bytes (MaxTextBytes)", extract.ErrTooLarge, lim.MaxTextBytes)
		}
	}
	return read, nil
}

// render draws one page as an 8-bit gray, uncompressed TIFF at dpi, into
// dir: pdftoppm spends longer encoding a 300-dpi page as PNG (4 s on a
// letter page) than drawing it (0.6 s), and it writes a TIFF only to a
// file, where it can seek.
func (p Poppler) render(ctx context.Context, pdf []byte, dir string, page, dpi int, lim extract.Limits) ([]byte, error) {
	n := strconv.Itoa(page)
	root := filepath.Join(dir, "page")
	defer os.Remove(root + ".tif")
	if _, err := p.run(ctx, lim, 1<<20, pdf, "pdftoppm", "-r", strconv.Itoa(dpi), "-gray", "-tiff", "-singlefile", "-f", n, "-l", n, stdinPDF, root); err != nil {
		return nil, err
	}
	f, err := os.Open(root + ".tif")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A page drawn past its size (pdfinfo failed) is not read at all; one
	// within it is read into a buffer of its size (io.ReadAll's doubling
	// would allocate twice an 8 MB page, each page of a scan).
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxScanPixels+1<<20 {
		return nil, fmt.Errorf("%w: page %d drawn at %d dpi is over %d megapixels", extract.ErrTooLarge, page, dpi, maxScanPixels>>20)
	}
	img := make([]byte, st.Size())
	if _, err := io.ReadFull(f, img); err != nil {
		return nil, fmt.Errorf("read page %d drawn at %d dpi: %w", page, dpi, err)
	}
	return img, nil
}

// pageSizes reads the size of pages first to last in points, by page, from
// pdfinfo's "Page    3 size: 612 x 792 pts (letter)" lines.
func (p Poppler) pageSizes(ctx context.Context, pdf []byte, first, last int, lim extract.Limits) (map[int][2]float64, error) {
	out, err := p.run(ctx, lim, 1<<20, pdf, "pdfinfo", "-f", strconv.Itoa(first), "-l", strconv.Itoa(last), stdinPDF)
	if err != nil {
		return map[int][2]float64{}, err
	}
	sizes := map[int][2]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != "Page" || f[2] != "size:" || f[4] != "x" || f[6] != "pts" {
			continue
		}
		page, err1 := strconv.Atoi(f[1])
		w, err2 := strconv.ParseFloat(f[3], 64)
		h, err3 := strconv.ParseFloat(f[5], 64)
		if err1 == nil && err2 == nil && err3 == nil {
			sizes[page] = [2]float64{w, h}
		}
	}
	return sizes, nil
}

// renderDPI is the resolution to render a page of size (points) at:
// scanDPI, or less for a page that would be over maxScanPixels.
func renderDPI(size [2]float64) int {
	w, h := size[0]/72, size[1]/72 // inches
	if w <= 0 || h <= 0 || w*h*scanDPI*scanDPI <= maxScanPixels {
		return scanDPI
	}
	return max(1, int(math.Sqrt(maxScanPixels/(w*h))))
}
