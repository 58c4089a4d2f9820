package picture

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image/png"
	"path"
	"strings"

	"golang.org/x/image/tiff"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/ocr"
)

// isTIFF reports a classic TIFF header, little- or big-endian (BigTIFF,
// "II+", is not read).
func isTIFF(data []byte) bool {
	return bytes.HasPrefix(data, []byte("II*\x00")) || bytes.HasPrefix(data, []byte("MM\x00*"))
}

const (
	// maxPagePixels bounds a TIFF page decoded to be kept: x/image/tiff
	// holds up to 8 bytes a pixel. 40 megapixels is an A3 page at 400 dpi.
	maxPagePixels = 40 << 20
	// maxPagesCounted bounds the image file directories walked to count a
	// TIFF's pages past those read.
	maxPagesCounted = 1 << 16
)

// ifds walks a TIFF's chain of image file directories (one a page): the
// offsets of the first limit, and how many there are (up to
// maxPagesCounted). A chain that leaves the file or loops ends there; a
// file without a readable first directory is corrupt.
func ifds(data []byte, order binary.ByteOrder, limit int) (offsets []int, total int, err error) {
	seen := map[int]bool{}
	for off := int(order.Uint32(data[4:8])); off != 0 && total < maxPagesCounted && !seen[off]; total++ {
		next, err := nextIFD(data, order, off)
		if err != nil {
			if total == 0 {
				return nil, 0, err
			}
			break
		}
		seen[off] = true
		if len(offsets) < limit {
			offsets = append(offsets, off)
		}
		off = int(order.Uint32(data[next:]))
	}
	if total == 0 {
		return nil, 0, errors.New("no image file directory")
	}
	return offsets, total, nil
}

// nextIFD returns where the directory at off keeps the next one's offset.
func nextIFD(data []byte, order binary.ByteOrder, off int) (int, error) {
	if off < 8 || off > len(data)-2 {
		return 0, fmt.Errorf("image file directory at %d, outside the file", off)
	}
	next := off + 2 + 12*int(order.Uint16(data[off:]))
	if next > len(data)-4 {
		return 0, fmt.Errorf("image file directory at %d runs past the end of the file", off)
	}
	return next, nil
}

// extractTIFF reads a TIFF page by page, each a page of the document: its
// picture kept as PNG with a Figure block describing it, then the text OCR
// reads in it. x/image/tiff decodes only a file's first page, and OCR
// reads a multi-page file whole, so each page is handed to both as a file
// of its own: a copy of the file whose header points at that page's
// directory, the chain cut after it (one copy, re-pointed page by page).
func extractTIFF(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("image %s: %w: TIFF header cut short", name, extract.ErrCorrupt)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if data[0] == 'M' {
		order = binary.BigEndian
	}
	limit := lim.MaxPages
	if limit <= 0 {
		limit = maxPagesCounted
	}
	offsets, total, err := ifds(data, order, limit)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w: %v", name, extract.ErrCorrupt, err)
	}
	d := newDoc(ctx, name, lim)
	defer d.budget.Close()
	d.b.SetPages(total)
	page := bytes.Clone(data)
	var notRead, notKept ocr.Skipped
	for i, off := range offsets {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("image %s: %w: page %d: %v", name, extract.ErrTimeout, i+1, context.Cause(ctx))
		}
		next, _ := nextIFD(page, order, off) // checked by ifds
		chain := order.Uint32(page[next:])
		order.PutUint32(page[4:], uint32(off))
		order.PutUint32(page[next:], 0)
		err := d.tiffPage(i+1, total, page, &notRead, &notKept)
		order.PutUint32(page[next:], chain)
		if err == nil {
			err = d.checkText()
		}
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", name, err)
		}
	}
	for _, w := range append(notRead.Warnings("a page is not read: "), notKept.Warnings("a page's picture is not kept: ")...) {
		d.b.Warn(w)
	}
	if total > len(offsets) {
		d.b.Warn(fmt.Sprintf("only the first %d of %d pages were read", len(offsets), total))
	}
	return d.done()
}

// tiffPage keeps the picture of one page (img, a TIFF of that page alone)
// and reads its text. A first page that does not decode makes the file
// corrupt; a later one is left out with a warning. Its error ends the
// extraction.
func (d *doc) tiffPage(page, pages int, img []byte, notRead, notKept *ocr.Skipped) error {
	cfg, err := tiff.DecodeConfig(bytes.NewReader(img))
	switch {
	case err != nil && page == 1:
		return fmt.Errorf("%w: %v", extract.ErrCorrupt, err)
	case err != nil:
		notRead.Add(page, err.Error())
		return nil
	case int64(cfg.Width)*int64(cfg.Height) > maxPagePixels:
		notRead.Add(page, fmt.Sprintf("over %d megapixels", maxPagePixels>>20))
		return nil
	}
	if why := d.keepPage(page, pages, img, cfg.Width, cfg.Height); why != "" {
		notKept.Add(page, why)
	}
	return d.read(page, img)
}

// keepPage adds the page's picture as PNG with a Figure block, or says why not.
func (d *doc) keepPage(page, pages int, img []byte, w, h int) string {
	if d.lim.MaxImages > 0 && d.images >= d.lim.MaxImages {
		return fmt.Sprintf("over the limit of %d pictures (MaxImages)", d.lim.MaxImages)
	}
	decoded, err := tiff.Decode(bytes.NewReader(img))
	if err != nil {
		return err.Error()
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, decoded); err != nil {
		return err.Error()
	}
	if d.lim.MaxImageBytes > 0 && int64(buf.Len()) > d.lim.MaxImageBytes {
		return fmt.Sprintf("its PNG is over %d bytes (MaxImageBytes)", d.lim.MaxImageBytes)
	}
	d.images++
	stem := strings.TrimSuffix(d.base, path.Ext(d.base))
	d.b.AddImage(extract.Image{Name: fmt.Sprintf("%s-page-%d.png", stem, page), MIME: "image/png", Data: buf.Bytes(), Width: w, Height: h, Page: page},
		fmt.Sprintf("Image %s page %d of %d (TIFF, %dx%d)", d.base, page, pages, w, h))
	return ""
}
