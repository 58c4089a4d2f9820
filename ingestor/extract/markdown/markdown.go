// Package markdown extracts Markdown structure without rewriting the text:
// the document's Text is the file itself, so offsets point into the source.
// ATX headings outside fenced code become headings; fenced code stays one
// block; pipe tables stay one block.
package markdown

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Extractor extracts Markdown.
type Extractor struct{}

// Extract returns the file's blocks; data must be valid UTF-8.
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if err := extract.CheckText(data, lim); err != nil {
		return nil, fmt.Errorf("markdown %s: %w", name, err)
	}
	text := string(data)
	doc := &extract.Document{Format: "markdown", Text: text, Blocks: Blocks(text)}
	for _, b := range doc.Blocks {
		if b.Kind == extract.Heading && b.Level == 1 {
			doc.Title = HeadingTitle(text[b.Start:b.End])
			break
		}
	}
	return doc, ctx.Err()
}

// HeadingTitle strips the #s and closing #s of an ATX heading line.
func HeadingTitle(line string) string {
	t := strings.TrimLeft(strings.TrimSpace(line), "#")
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t), "#"))
}

// Blocks splits Markdown text into blocks with byte spans into text.
func Blocks(text string) []extract.Block {
	var out []extract.Block
	start, kind := -1, extract.Paragraph
	fence := ""
	flush := func(end int) {
		if start >= 0 {
			if e := trimEnd(text, start, end); e > start {
				out = append(out, extract.Block{Kind: kind, Start: start, End: e})
			}
		}
		start, kind = -1, extract.Paragraph
	}
	for off := 0; off < len(text); {
		nl := strings.IndexByte(text[off:], '\n')
		lineEnd := len(text)
		if nl >= 0 {
			lineEnd = off + nl
		}
		line := strings.TrimRight(text[off:lineEnd], "\r")
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		switch {
		case fence != "":
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
				flush(lineEnd)
			}
		case indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			flush(off)
			ch := trimmed[:1]
			fence = strings.Repeat(ch, len(trimmed)-len(strings.TrimLeft(trimmed, ch)))
			start, kind = off, extract.Code
		case indent < 4 && isHeading(trimmed):
			flush(off)
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			if e := trimEnd(text, off, lineEnd); e > off {
				out = append(out, extract.Block{Kind: extract.Heading, Level: level, Start: off, End: e})
			}
		case strings.TrimSpace(line) == "":
			flush(off)
		case strings.HasPrefix(trimmed, "|"):
			if start >= 0 && kind != extract.Table {
				flush(off)
			}
			if start < 0 {
				start, kind = off, extract.Table
			}
		default:
			if start >= 0 && kind == extract.Table {
				flush(off)
			}
			if start < 0 {
				start = off
			}
		}
		if nl < 0 {
			break
		}
		off = lineEnd + 1
	}
	flush(len(text))
	return out
}

func isHeading(trimmed string) bool {
	level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
	rest := trimmed[level:]
	return level >= 1 && level <= 6 && (rest == "" || rest[0] == ' ' || rest[0] == '\t') && strings.TrimSpace(strings.Trim(rest, "# \t")) != ""
}

func trimEnd(text string, start, end int) int {
	for end > start && strings.ContainsRune(" \t\r\n", rune(text[end-1])) {
		end--
	}
	return end
}
