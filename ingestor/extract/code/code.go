// Package code extracts source code files. The text is the file itself,
// byte for byte, so chunk offsets point into the source; the structure is
// one section per top-level declaration (and per member of a class),
// found by cheap line-based, language-aware heuristics rather than a parser.
package code

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Extractor extracts source code. It implements extract.Extractor.
type Extractor struct{}

var _ extract.Extractor = Extractor{}

// Extract returns the source as the document text with a Heading block per
// declaration (its leading comments and decorators through its signature
// line) followed by Code blocks for its body. Code before the first
// declaration is a Code block without a heading.
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", extract.ErrTimeout, name, err)
	}
	// Line offsets are int32, so 2 GiB is a hard limit under any other.
	limit := math.MaxInt32
	if lim.MaxTextBytes > 0 && lim.MaxTextBytes < limit {
		limit = lim.MaxTextBytes
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%w: %s: %d bytes of source, limit %d", extract.ErrTooLarge, name, len(data), limit)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, fmt.Errorf("%w: binary or invalid UTF-8 content", extract.ErrCorrupt)
	}
	lang := Language(name, data)
	sp := specs[lang]
	if sp == nil {
		return nil, fmt.Errorf("%w: %s is not recognised as source code", extract.ErrUnsupported, name)
	}
	text := string(data)
	lines, open, err := scanLines(ctx, text, sp.syn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &file{text: text, lines: lines, spec: sp, lim: lim, held: int64(len(text))}
	if err := extract.Hold(&f.held, 0, lim); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	decls, err := f.findDecls(ctx, 0, len(lines), 0, sp.top)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.emit(ctx, 0, len(lines), decls, 1); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.err != nil {
		return nil, fmt.Errorf("%s: %w", name, f.err)
	}
	doc := &extract.Document{
		Format:   "code",
		Language: lang,
		Text:     text,
		Blocks:   f.blocks,
		Title:    baseName(name),
	}
	if open > 0 {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf(
			"a comment or string opened on line %d is never closed; nothing after it was split", open))
	}
	return doc, nil
}
