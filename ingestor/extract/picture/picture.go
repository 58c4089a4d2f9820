// Package picture turns an uploaded PNG or JPEG into one image chunk: the
// image is kept for agents to view, and its chunk text describes it.
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
)

// Sniff reports whether data is a PNG or JPEG, by magic bytes.
func Sniff(data []byte) bool {
	return bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || bytes.HasPrefix(data, []byte("\xff\xd8\xff"))
}

// Extractor extracts images.
type Extractor struct{}

// Extract reads the image header (not the pixels) and describes the image.
func (Extractor) Extract(_ context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if !Sniff(data) {
		return nil, fmt.Errorf("image %s: %w: not a PNG or JPEG", name, extract.ErrUnsupported)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image %s: %w: %v", name, extract.ErrCorrupt, err)
	}
	if lim.MaxImageBytes > 0 && int64(len(data)) > lim.MaxImageBytes {
		return nil, fmt.Errorf("image %s: %w: %d bytes, limit %d", name, extract.ErrTooLarge, len(data), lim.MaxImageBytes)
	}
	b := extract.NewBuilder("image")
	base := extract.PropText(path.Base(name)) // one clean line: it is in the text
	b.SetTitle(base)
	b.AddImage(extract.Image{Name: base, MIME: "image/" + format, Data: data, Width: cfg.Width, Height: cfg.Height},
		fmt.Sprintf("Image %s (%s, %dx%d)", base, map[string]string{"png": "PNG", "jpeg": "JPEG"}[format], cfg.Width, cfg.Height))
	return b.Doc(), nil
}
