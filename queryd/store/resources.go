package store

// Reads behind MCP resources (queryd/resources): every indexed file of a
// project's main branch, in path order, and one file's extracted text.

import (
	"context"
	"fmt"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// MaxResourceText bounds the text one resource read returns; past it the
// text ends with a note (a client attaches resources whole).
const MaxResourceText = 4 << 20

// ResourceDocuments lists up to limit indexed (not failed, not deleted)
// documents of project's main branch whose path sorts after after ("" = from
// the first), in path order. Paging by the last path seen, not by offset,
// keeps a listing of any size exact while files are added or deleted.
func (s *Store) ResourceDocuments(ctx context.Context, project, after string, limit int) ([]Document, error) {
	where := wvquery.And(eq("branch", ""), eq("status", pipeline.StatusIndexed),
		filters.Where().WithPath([]string{"deleted"}).WithOperator(filters.Equal).WithValueBoolean(false))
	if after != "" {
		where = wvquery.And(where, filters.Where().WithPath([]string{"file_path"}).WithOperator(filters.GreaterThan).WithValueText(after))
	}
	rows, err := s.get(ctx, schema.DocumentClass, project, documentFields, where, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithSort(graphql.Sort{Path: []string{"file_path"}, Order: graphql.Asc}).WithLimit(limit)
	})
	if err != nil {
		return nil, fmt.Errorf("resource documents of %s: %w", project, err)
	}
	out := make([]Document, 0, len(rows))
	for _, r := range rows {
		out = append(out, documentOf(r))
	}
	return out, nil
}

// FileText returns the document of path on project's main branch and its
// extracted text, put back together from its chunks in order (chunks that
// overlap share their overlap once). The document is nil when there is no
// live file at path; a failed file has a document and no text.
func (s *Store) FileText(ctx context.Context, project, path string) (*Document, string, error) {
	doc, err := s.FindDocument(ctx, project, "", path)
	if err != nil {
		return nil, "", fmt.Errorf("file %s of %s: %w", path, project, err)
	}
	if doc == nil || doc.Deleted {
		return nil, "", nil
	}
	if doc.Status != pipeline.StatusIndexed {
		return doc, "", nil
	}
	var b strings.Builder
	end := 0 // rune offset of the text written so far
	for offset := 0; ; offset += MaxChunkQuery {
		page, err := s.ListChunks(ctx, project, doc.FileVersionID, offset, MaxChunkQuery)
		if err != nil {
			return nil, "", fmt.Errorf("text of %s in %s: %w", path, project, err)
		}
		for _, c := range page {
			end = appendChunk(&b, c, end)
			if b.Len() > MaxResourceText {
				b.WriteString(fmt.Sprintf("\n\n[Strata: text truncated at %d bytes; read the rest with the read tool]\n", MaxResourceText))
				return doc, b.String(), nil
			}
		}
		if len(page) < MaxChunkQuery {
			return doc, b.String(), nil
		}
	}
}

// appendChunk writes the part of c past end (rune offsets of the extracted
// text) and returns the new end. A chunk whose content does not span its
// offsets (an image's caption, say) is written whole on its own paragraph.
func appendChunk(b *strings.Builder, c Chunk, end int) int {
	runes := []rune(c.Content)
	switch {
	case len(runes) != c.EndOffset-c.StartOffset:
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(c.Content)
		return max(end, c.EndOffset)
	case c.EndOffset <= end:
		return end // wholly inside what is written
	case c.StartOffset < end:
		b.WriteString(string(runes[end-c.StartOffset:]))
	default:
		if b.Len() > 0 && c.StartOffset > end {
			b.WriteString("\n\n") // text between chunks (e.g. a skipped block) is not indexed
		}
		b.WriteString(c.Content)
	}
	return c.EndOffset
}
