package tools

// The Knowledge Stack tool read_around: a chunk with its neighbours (and its section when that fits).

import (
	"context"
	_ "embed"
	"fmt"
	"slices"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

const readAroundDescription = "Expand the reading window around a search result. After finding a relevant chunk via search, use this " +
	"to see the surrounding context. Returns the anchor chunk, window chunks before and after it, the anchor's position in the " +
	"list, and whether the full section was returned (the whole section comes back when it fits the token budget)."

//go:embed schemas/read_around.input.json
var readAroundInput string

var readAroundTool = define(ToolsetKnowledge, "read_around", readAroundDescription, readAroundInput, (*Tools).readAround)

type readAroundArgs struct {
	ChunkID string   `json:"chunk_id"`
	Window  *float64 `json:"window"`
}

// SectionRef names a section and its statistics.
type SectionRef struct {
	PathPartID  string   `json:"path_part_id"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	TokenCount  int      `json:"token_count"`
	ChunkCount  int      `json:"chunk_count"`
}

type readAroundOut struct {
	AnchorChunkID  string `json:"anchor_chunk_id"`
	AnchorIndex    int    `json:"anchor_index"`    // the anchor's index in its document
	AnchorPosition int    `json:"anchor_position"` // the anchor's position in chunks (0-based)
	Window         int    `json:"window"`
	// WholeSection: chunks hold every chunk of the anchor's section.
	WholeSection bool        `json:"whole_section"`
	DocumentID   string      `json:"document_id"`
	DocumentPath string      `json:"document_path"`
	Breadcrumb   string      `json:"breadcrumb"`
	Section      *SectionRef `json:"section"`
	TokenBudget  int         `json:"token_budget"`
	Chunks       []ChunkView `json:"chunks"` // by index
}

func (t *Tools) readAround(ctx context.Context, p auth.Principal, a readAroundArgs) (any, error) {
	id, err := idArg("chunk_id", a.ChunkID)
	if err != nil {
		return nil, err
	}
	window, err := intArg("window", a.Window, 1, 1, 10)
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	if out, ok, err := t.readAroundPlace(ctx, c, id, window); err != nil || ok {
		return out, err
	}
	n, err := c.resolveChunk(ctx, id, "a chunk: use read with it as path_part_id")
	if err != nil {
		return nil, err
	}
	rows, err := t.knowledge.ChunkDetails(ctx, n.project, t.aroundQuery(n.chunk.FileVersionID, n.chunk.Index, window, n.section, n.at))
	if err != nil {
		return nil, err
	}
	return t.aroundAnswer(ctx, n, window, rows)
}

// readAroundPlace answers from the anchor's remembered place (chunk_places.go)
// in one query; ok is false when the place is unknown or no longer holds the
// current anchor, and the caller resolves the anchor instead.
func (t *Tools) readAroundPlace(ctx context.Context, c *kbCall, id string, window int) (out readAroundOut, ok bool, err error) {
	pl, known := t.places.lookup(id)
	if !known || !slices.Contains(c.projects, pl.project) {
		return out, false, nil
	}
	at, err := c.watermark(ctx, pl.project)
	if err != nil {
		return out, false, err
	}
	fv := pl.fileVersionID.String()
	if !t.currentInCatalog(ctx, pl.project, pl.fileID.String(), fv, at) {
		return out, false, nil
	}
	rows, err := t.knowledge.ChunkDetails(ctx, pl.project, t.aroundQuery(fv, pl.index, window, pl.section(), at))
	if err != nil {
		return out, false, err
	}
	i := slices.IndexFunc(rows, func(r store.ChunkDetail) bool { return r.ID == id })
	if i < 0 || !pl.matches(rows[i]) {
		return out, false, nil
	}
	anchor := rows[i]
	n := &node{typ: typeChunk, project: pl.project, at: at, path: anchor.FilePath, fileID: anchor.FileID, chunk: &anchor, section: anchor.Section}
	out, err = t.aroundAnswer(ctx, n, window, rows)
	return out, err == nil, err
}

// aroundQuery selects the window of chunk index of version fv, and its
// whole section too when that fits the budget, in one query: a section's
// chunks are consecutive and hold the anchor, so window and section
// together are one run of chunks.
func (t *Tools) aroundQuery(fv string, index, window int, sec *store.Section, at int64) store.ChunkQuery {
	lo, hi := max(0, index-window), index+window
	q := store.ChunkQuery{FileVersionID: fv, From: lo, To: hi, Limit: hi - lo + 1, At: at}
	if sec != nil && sec.TokenCount > 0 && sec.TokenCount <= t.tokenBudget && sec.ChunkCount <= maxInlineChunks {
		size := sec.ChunkCount
		if size <= 0 { // statistics missing: room for the most a section may inline
			size = maxInlineChunks
		}
		q.AlsoSectionID, q.Limit = sec.ID, q.Limit+size
	}
	return q
}

// aroundAnswer is read_around's answer for anchor node n and the rows of
// its aroundQuery.
func (t *Tools) aroundAnswer(ctx context.Context, n *node, window int, rows []store.ChunkDetail) (readAroundOut, error) {
	anchor, sec := n.chunk, n.section
	t.places.rememberDetails(n.project, rows)
	out := readAroundOut{
		AnchorChunkID: anchor.ID, AnchorIndex: anchor.Index, AnchorPosition: -1, Window: window,
		DocumentID: anchor.FileID, DocumentPath: absPath(n.project, anchor.FilePath), Breadcrumb: breadcrumb(n.crumbs()),
		TokenBudget: t.tokenBudget, Chunks: make([]ChunkView, 0, len(rows)),
	}
	inSection := 0
	for i, r := range rows {
		v := chunkView(r)
		if r.ID == anchor.ID {
			v.IsAnchor, out.AnchorPosition = true, i
		}
		if anchor.SectionID != "" && r.SectionID == anchor.SectionID {
			inSection++
		}
		out.Chunks = append(out.Chunks, v)
	}
	if out.AnchorPosition < 0 { // not expected: the anchor is in its own version's range
		return out, fmt.Errorf("read_around: anchor %s missing from its range %d-%d", anchor.ID, max(0, anchor.Index-window), anchor.Index+window)
	}
	if sec != nil {
		out.Section = &SectionRef{PathPartID: sec.ID, Title: sectionName(sec), HeadingPath: nonNilStrings(sec.HeadingPath),
			TokenCount: sec.TokenCount, ChunkCount: sec.ChunkCount}
		size := sec.ChunkCount
		if size <= 0 { // statistics missing: count
			var err error
			if size, err = t.knowledge.CountChunks(ctx, n.project, store.ChunkQuery{FileVersionID: anchor.FileVersionID, SectionID: sec.ID, To: -1, At: n.at}); err != nil {
				return out, err
			}
		}
		out.WholeSection = size > 0 && inSection >= size
	}
	return out, nil
}
