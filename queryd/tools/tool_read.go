package tools

// The Knowledge Stack tool read: a document, section or chunk, inline within the token budget or paged.

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/pipeline"
)

const readDescription = "Read any node in the knowledge base. The tool automatically adapts its response based on the content size: " +
	"a document or section within the token budget comes back inline (all chunks); a larger document as a table of contents " +
	"with per-section statistics (read a section by its path_part_id); a larger section as chunks paginated with limit/offset; " +
	"a chunk as itself. The answer's mode says which: inline, toc or paginated."

//go:embed schemas/read.input.json
var readInput string

var readTool = define(ToolsetKnowledge, "read", readDescription, readInput, (*Tools).readNode)

type readArgs struct {
	PathPartID string `json:"path_part_id"`
	pageArgs
}

// TOCEntry is one section in a table of contents.
type TOCEntry struct {
	PathPartID  string   `json:"path_part_id"`
	Ordinal     int      `json:"ordinal"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	Level       int      `json:"level"`
	TokenCount  int      `json:"token_count"`
	ChunkCount  int      `json:"chunk_count"`
	PageStart   int      `json:"page_start,omitempty"`
	PageEnd     int      `json:"page_end,omitempty"`
	// FitsBudget: read(path_part_id) returns this section inline.
	FitsBudget bool `json:"fits_budget"`
}

// readOut is read's answer. Mode says its shape: inline and paginated carry
// chunks, toc carries sections; the page fields describe whichever it holds.
type readOut struct {
	Mode   string `json:"mode"` // inline, toc or paginated
	Reason string `json:"reason"`
	// within_budget, over_budget, missing_statistics, too_many_chunks or chunk
	Hint        string      `json:"hint"`
	PathPartID  string      `json:"path_part_id"`
	Type        string      `json:"type"`
	Name        string      `json:"name"`
	Path        string      `json:"path"`
	Breadcrumb  string      `json:"breadcrumb"`
	TokenCount  *int        `json:"token_count"` // the node's tokens; null when the statistics are missing
	TokenBudget int         `json:"token_budget"`
	Chunks      []ChunkView `json:"chunks,omitempty"`
	Sections    []TOCEntry  `json:"sections,omitempty"`
	Page
	// Truncated: the table of contents stops at 2,000 sections.
	Truncated bool `json:"truncated,omitempty"`
}

func (t *Tools) readNode(ctx context.Context, p auth.Principal, a readArgs) (any, error) {
	id, err := idArg("path_part_id", a.PathPartID)
	if err != nil {
		return nil, err
	}
	limit, offset, err := a.bounds()
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	pre := c.prefetchSection(ctx, id)
	defer pre.stop()
	n, noChunks := pre.sectionNode(ctx, c, id)
	if n == nil {
		order := []string{typeDocument, typeSection, typeChunk, typeFolder}
		if noChunks { // no chunk lies in a section of this id: most likely a chunk's
			order = []string{typeDocument, typeChunk, typeSection, typeFolder}
		}
		if n, err = c.mustResolve(ctx, "path_part_id", id, order...); err != nil {
			return nil, err
		}
	}
	out := &readOut{
		PathPartID: n.id(), Type: n.typ, Name: n.name(), Path: n.fsPath(), Breadcrumb: breadcrumb(n.crumbs()),
		TokenBudget: t.tokenBudget,
	}
	switch n.typ {
	case typeFolder:
		return nil, wrongType("path_part_id", n, "something to read: use list_contents with this path_part_id to browse it")
	case typeChunk:
		out.Mode, out.Reason, out.TokenCount = modeInline, "chunk", ptr(n.chunk.TokenCount)
		out.Chunks = []ChunkView{chunkView(*n.chunk)}
		out.Hint = "One chunk. read_around with its path_part_id as chunk_id shows its neighbours."
		out.Page = pageOf(1, 0, 1, 1)
		return out, nil
	case typeSection:
		return out, t.readSection(ctx, n, out, limit, offset, pre)
	}
	return out, t.readDocument(ctx, n, out, limit, offset)
}

func (t *Tools) readDocument(ctx context.Context, n *node, out *readOut, limit, offset int) error {
	ver, err := t.base.VersionAt(ctx, n.project, "", n.path, n.at)
	if err != nil {
		return err
	}
	if ver == nil || ver.Deleted {
		return notFound("path_part_id", n.fileID)
	}
	if ver.Status != pipeline.StatusIndexed {
		msg := ver.Error
		if msg == "" {
			msg = "no reason recorded"
		}
		return userErrorf("document %s was not indexed (%s): %s; it has no content to read", n.fsPath(), ver.Status, msg)
	}
	secs, err := t.knowledge.Sections(ctx, n.project, ver.FileVersionID, n.at, 0, maxSections+1)
	if err != nil {
		return err
	}
	complete := len(secs) <= maxSections
	secs = secs[:min(len(secs), maxSections)]
	tokens, missing := 0, len(secs) == 0
	for _, s := range secs {
		if s.TokenCount <= 0 {
			missing = true
		}
		tokens += s.TokenCount
	}
	q := store.ChunkQuery{FileVersionID: ver.FileVersionID, To: -1, At: n.at}
	budget := out.TokenBudget
	switch {
	case missing:
		out.Reason = "missing_statistics"
		out.Hint = "Section statistics are missing for this document, so its chunks are paginated: page with offset."
		return t.paginate(ctx, n, out, q, limit, offset)
	case complete && tokens <= budget:
		out.TokenCount = ptr(tokens)
		return t.inline(ctx, n, out, q, limit, offset)
	}
	if complete {
		out.TokenCount = ptr(tokens)
	}
	out.Mode, out.Reason = modeTOC, "over_budget"
	out.Hint = fmt.Sprintf("The document is over the %d-token budget, so this is its table of contents: read a section by its path_part_id (fits_budget sections come back whole).", budget)
	out.Truncated = !complete
	for _, s := range secs[min(offset, len(secs)):min(offset+limit, len(secs))] {
		out.Sections = append(out.Sections, TOCEntry{
			PathPartID: s.ID, Ordinal: s.Ordinal, Title: sectionName(&s), HeadingPath: nonNilStrings(s.HeadingPath),
			Level: s.Level, TokenCount: s.TokenCount, ChunkCount: s.ChunkCount, PageStart: s.PageStart, PageEnd: s.PageEnd,
			FitsBudget: s.TokenCount > 0 && s.TokenCount <= budget,
		})
	}
	out.Page = pageOf(len(secs), offset, limit, len(out.Sections))
	return nil
}

func (t *Tools) readSection(ctx context.Context, n *node, out *readOut, limit, offset int, pre *sectionPrefetches) error {
	s := n.section
	q := inlineSectionQuery(s.ID, s.FileVersionID, n.at)
	switch {
	case s.TokenCount <= 0:
		out.Reason = "missing_statistics"
		out.Hint = "Statistics are missing for this section, so its chunks are paginated: page with offset."
		return t.paginate(ctx, n, out, q, limit, offset)
	case s.TokenCount <= out.TokenBudget:
		out.TokenCount = ptr(s.TokenCount)
		if rows, ok := pre.rowsFor(ctx, n); ok {
			return t.inlineRows(ctx, n, out, q, rows, limit, offset)
		}
		return t.inline(ctx, n, out, q, limit, offset)
	}
	out.TokenCount = ptr(s.TokenCount)
	out.Reason = "over_budget"
	out.Hint = fmt.Sprintf("The section is over the %d-token budget, so its chunks are paginated: page with offset.", out.TokenBudget)
	return t.paginate(ctx, n, out, q, limit, offset)
}

// inline returns every chunk q selects; past maxInlineChunks it pages instead.
func (t *Tools) inline(ctx context.Context, n *node, out *readOut, q store.ChunkQuery, limit, offset int) error {
	q.Limit = maxInlineChunks + 1
	rows, err := t.knowledge.ChunkDetails(ctx, n.project, q)
	if err != nil {
		return err
	}
	return t.inlineRows(ctx, n, out, q, rows, limit, offset)
}

// inlineRows is inline with q's rows (up to maxInlineChunks + 1) read.
func (t *Tools) inlineRows(ctx context.Context, n *node, out *readOut, q store.ChunkQuery, rows []store.ChunkDetail, limit, offset int) error {
	if len(rows) > maxInlineChunks {
		out.Reason = "too_many_chunks"
		out.Hint = "Within the token budget but in too many chunks for one answer, so its chunks are paginated: page with offset."
		return t.paginate(ctx, n, out, q, limit, offset)
	}
	out.Mode, out.Reason = modeInline, "within_budget"
	out.Hint = fmt.Sprintf("Within the %d-token budget: all of it, inline.", out.TokenBudget)
	t.places.rememberDetails(n.project, rows)
	out.Chunks = chunkViews(rows)
	out.Page = pageOf(len(rows), 0, len(rows), len(rows))
	return nil
}

func (t *Tools) paginate(ctx context.Context, n *node, out *readOut, q store.ChunkQuery, limit, offset int) error {
	total, err := t.knowledge.CountChunks(ctx, n.project, q)
	if err != nil {
		return err
	}
	q.Offset, q.Limit = offset, limit
	rows, err := t.knowledge.ChunkDetails(ctx, n.project, q)
	if err != nil {
		return err
	}
	out.Mode = modePaginated
	t.places.rememberDetails(n.project, rows)
	out.Chunks = chunkViews(rows)
	out.Page = pageOf(total, offset, limit, len(rows))
	return nil
}
