// Package plaintext extracts plain text (and CSV, JSON, YAML read as text):
// the text is the file itself and blocks are its paragraphs.
package plaintext

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Extractor extracts plain text.
type Extractor struct{}

// Extract returns the file's paragraphs; data must be valid UTF-8.
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if err := extract.CheckText(data, lim); err != nil {
		return nil, fmt.Errorf("text %s: %w", name, err)
	}
	text := string(data)
	blocks, err := ParagraphsWithin(text, lim)
	if err != nil {
		return nil, fmt.Errorf("text %s: %w", name, err)
	}
	return &extract.Document{Format: "text", Text: text, Blocks: blocks}, ctx.Err()
}

// Paragraphs returns runs of non-blank lines as blocks.
func Paragraphs(text string) []extract.Block {
	blocks, _ := ParagraphsWithin(text, extract.Limits{})
	return blocks
}

// ParagraphsWithin is Paragraphs, stopped with ErrTooLarge as soon as the
// text and its blocks hold more than lim.MaxFileBytes.
func ParagraphsWithin(text string, lim extract.Limits) ([]extract.Block, error) {
	held := int64(len(text))
	if err := extract.Hold(&held, 0, lim); err != nil {
		return nil, err
	}
	var out []extract.Block
	add := func(b extract.Block) error {
		out = append(out, b)
		return extract.Hold(&held, extract.BlockBytes, lim)
	}
	start := -1
	last := 0 // end of the last non-blank line
	for off := 0; off <= len(text); {
		nl := strings.IndexByte(text[off:], '\n')
		lineEnd := len(text)
		if nl >= 0 {
			lineEnd = off + nl
		}
		if strings.TrimSpace(text[off:lineEnd]) == "" {
			if start >= 0 {
				if err := add(extract.Block{Kind: extract.Paragraph, Start: start, End: last}); err != nil {
					return nil, err
				}
				start = -1
			}
		} else {
			if start < 0 {
				start = off + (len(text[off:lineEnd]) - len(strings.TrimLeft(text[off:lineEnd], " \t")))
			}
			last = off + len(strings.TrimRight(text[off:lineEnd], " \t\r"))
		}
		if nl < 0 {
			break
		}
		off = lineEnd + 1
	}
	if start >= 0 {
		if err := add(extract.Block{Kind: extract.Paragraph, Start: start, End: last}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
