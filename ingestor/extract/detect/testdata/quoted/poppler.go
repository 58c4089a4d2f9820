package pdf

import (
	"bytes"
	"context"
	"fmt"
)

// Extract extracts text per page.
func (p Poppler) Extract(ctx context.Context, data []byte, name string) error {
	if !Sniff(data) {
		return fmt.Errorf("pdf %s: no %%PDF header", name)
	}
	return nil
}

// Sniff reports whether data is a PDF: a %PDF- header in the first KiB, or
// PDF object syntax with a catalog near the start.
func Sniff(data []byte) bool {
	head := data[:min(len(data), 64<<10)]
	return bytes.Contains(head, []byte(" obj")) && bytes.Contains(head, []byte("endobj")) && bytes.Contains(head, []byte("/Type"))
}
