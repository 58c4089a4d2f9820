package tools

// The Knowledge Stack tool read_around: a chunk with its neighbours (and its section when that fits).

import (
	"context"
	"fmt"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

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
	n, err := t.resolveChunk(ctx, p, id, "a chunk: use read with it as path_part_id")
	if err != nil {
		return nil, err
	}
	anchor, sec, budget := n.chunk, n.section, t.tokenBudget
	lo, hi := max(0, anchor.Index-window), anchor.Index+window
	q := store.ChunkQuery{FileVersionID: anchor.FileVersionID, From: lo, To: hi, Limit: hi - lo + 1, At: n.at}
	// The whole section too when it fits the budget, in the same query: a
	// section's chunks are consecutive and hold the anchor, so window and
	// section together are one run of chunks.
	if sec != nil && sec.TokenCount > 0 && sec.TokenCount <= budget && sec.ChunkCount <= maxInlineChunks {
		size := sec.ChunkCount
		if size <= 0 { // statistics missing: room for the most a section may inline
			size = maxInlineChunks
		}
		q.AlsoSectionID, q.Limit = sec.ID, q.Limit+size
	}
	rows, err := t.read.ChunkDetails(ctx, n.project, q)
	if err != nil {
		return nil, err
	}
	out := readAroundOut{
		AnchorChunkID: anchor.ID, AnchorIndex: anchor.Index, AnchorPosition: -1, Window: window,
		DocumentID: anchor.FileID, DocumentPath: absPath(n.project, anchor.FilePath), Breadcrumb: breadcrumb(n.crumbs()),
		TokenBudget: budget, Chunks: make([]ChunkView, 0, len(rows)),
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
		return nil, fmt.Errorf("read_around: anchor %s missing from its range %d-%d", anchor.ID, lo, hi)
	}
	if sec != nil {
		out.Section = &SectionRef{PathPartID: sec.ID, Title: sectionName(sec), HeadingPath: nonNilStrings(sec.HeadingPath),
			TokenCount: sec.TokenCount, ChunkCount: sec.ChunkCount}
		size := sec.ChunkCount
		if size <= 0 { // statistics missing: count
			if size, err = t.read.CountChunks(ctx, n.project, store.ChunkQuery{FileVersionID: anchor.FileVersionID, SectionID: sec.ID, To: -1, At: n.at}); err != nil {
				return nil, err
			}
		}
		out.WholeSection = size > 0 && inSection >= size
	}
	return out, nil
}
