// Package picture turns an uploaded PNG, JPEG or TIFF into image chunks:
// each picture is kept for agents to view, with a chunk describing it,
// followed by the text Limits.OCR reads in it, paragraph by paragraph.
// A TIFF's pages are pages of the document.
package picture

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // register decoders
	_ "image/png"
	"path"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/ocr"
)

// Sniff reports whether data is a PNG, JPEG or TIFF, by magic bytes.
func Sniff(data []byte) bool {
	return bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || bytes.HasPrefix(data, []byte("\xff\xd8\xff")) || isTIFF(data)
}

// Extractor extracts images.
type Extractor struct{}

// ocrWhat is what a warning says was not read.
const ocrWhat = "text in pictures"

// Extract describes the picture (from its header) and reads its text with
// lim.OCR; a TIFF is read page by page (tiff.go).
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if !Sniff(data) {
		return nil, fmt.Errorf("image %s: %w: not a PNG, JPEG or TIFF", name, extract.ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("image %s: %w: %v", name, extract.ErrTimeout, context.Cause(ctx))
	}
	if isTIFF(data) {
		return extractTIFF(ctx, data, name, lim)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image %s: %w: %v", name, extract.ErrCorrupt, err)
	}
	if lim.MaxImageBytes > 0 && int64(len(data)) > lim.MaxImageBytes {
		return nil, fmt.Errorf("image %s: %w: %d bytes, limit %d", name, extract.ErrTooLarge, len(data), lim.MaxImageBytes)
	}
	d := newDoc(ctx, name, lim)
	defer d.budget.Close()
	d.b.AddImage(extract.Image{Name: d.base, MIME: "image/" + format, Data: data, Width: cfg.Width, Height: cfg.Height},
		fmt.Sprintf("Image %s (%s, %dx%d)", d.base, map[string]string{"png": "PNG", "jpeg": "JPEG"}[format], cfg.Width, cfg.Height))
	if err := d.read(0, data); err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	if err := d.checkText(); err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	return d.done()
}

// doc is a picture document being built: its pictures and the text OCR
// reads in them.
type doc struct {
	b      *extract.Builder
	base   string // the file's base name, one clean line
	lim    extract.Limits
	budget *ocr.Budget
	conf   map[int]float64 // OCR confidence by block index
	images int             // pictures kept
}

func newDoc(ctx context.Context, name string, lim extract.Limits) *doc {
	d := &doc{b: extract.NewBuilder("image").Within(lim), base: extract.PropText(path.Base(name)), lim: lim,
		budget: ocr.NewBudget(ctx, lim), conf: map[int]float64{}}
	d.b.SetTitle(d.base)
	return d
}

// read adds the paragraphs OCR reads in img (the picture of page, 0 for a
// file without pages), if the budget allows. Its error ends the extraction.
func (d *doc) read(page int, img []byte) error {
	if !d.budget.Allow(page) {
		return nil
	}
	blocks, err := d.budget.Read(page, img)
	if err != nil {
		return err
	}
	for _, ob := range blocks {
		if i := d.b.Add(extract.Paragraph, 0, page, ob.Text); i >= 0 {
			d.conf[i] = ob.Confidence
		}
	}
	return nil
}

// checkText fails a document whose text is over lim.MaxTextBytes.
func (d *doc) checkText() error {
	if d.lim.MaxTextBytes > 0 && d.b.Len() > d.lim.MaxTextBytes {
		return fmt.Errorf("%w: text over %d bytes (MaxTextBytes)", extract.ErrTooLarge, d.lim.MaxTextBytes)
	}
	return nil
}

// done returns the document, with the OCR blocks' confidence and what OCR
// did not read said in warnings.
func (d *doc) done() (*extract.Document, error) {
	for _, w := range d.budget.Warnings(ocrWhat) {
		d.b.Warn(w)
	}
	out, err := d.b.Finish()
	if err != nil {
		return nil, err
	}
	for i, c := range d.conf {
		out.Blocks[i].Confidence = c
	}
	return out, nil
}
