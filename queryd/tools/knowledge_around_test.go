package tools

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
)

// sectionReadsFail is a reader whose Section objects cannot be read: a chunk
// tool that still needs one fails.
type sectionReadsFail struct{ *kbReader }

func (sectionReadsFail) GetSection(context.Context, string, string, int64) (*store.Section, error) {
	return nil, errors.New("GetSection called")
}

// carrySections makes x's chunks record their sections' names and
// statistics, as the indexer writes them.
func carrySections(x *kbIndex) {
	for p, chunks := range x.chunks {
		for i, c := range chunks {
			for _, s := range x.sections[p] {
				if s.ID == c.SectionID && s.ChunkCount > 0 { // as store.chunkDetails: recorded counts only
					chunks[i].Section = &store.Section{ID: s.ID, FileID: s.FileID, FileVersionID: s.FileVersionID, FilePath: s.FilePath,
						Branch: s.Branch, Ordinal: s.Ordinal, Title: s.Title, HeadingPath: s.HeadingPath,
						TokenCount: s.TokenCount, ChunkCount: s.ChunkCount, ValidFrom: c.ValidFrom}
					chunks[i].SectionTokens, chunks[i].SectionChunks = s.TokenCount, s.ChunkCount
				}
			}
		}
	}
}

// TestChunkCarriesItsSection: chunks that record their section's name and
// statistics (as the indexer writes them) answer read_around and get_info
// without reading the Section object, exactly as the chunks that do not.
func TestChunkCarriesItsSection(t *testing.T) {
	plain := newKBFixture()
	carried := newKBFixture()
	carrySections(carried.x)
	for _, budget := range []int{0, 500, 50} {
		want, got := readerServer(t, newKBReader(plain.x), budget), readerServer(t, sectionReadsFail{newKBReader(carried.x)}, budget)
		for i := range 10 {
			id := ids.Chunk(plain.guideFV, i)
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"read_around", map[string]any{"chunk_id": id}},
				{"read_around", map[string]any{"chunk_id": id, "window": 3}},
				{"get_info", map[string]any{"path_part_id": id}},
			} {
				w, g := mustCall(t, want, "*", call.tool, call.args), mustCall(t, got, "*", call.tool, call.args)
				if !reflect.DeepEqual(w, g) {
					t.Fatalf("budget %d %s %v:\n carried %v\n read    %v", budget, call.tool, call.args, g, w)
				}
			}
		}
	}
	// The fixture's chunks do have sections: the comparison above covered them.
	if carried.x.getChunk("acme", ids.Chunk(carried.guideFV, 5)).Section == nil {
		t.Fatal("fixture chunk carries no section")
	}
}
