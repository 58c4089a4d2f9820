package store

import (
	"context"
	"reflect"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
)

// TestChunkDetailSection: a chunk that records its section (as the indexer
// writes it) is read with that section; an older chunk without those
// fields is read with none, so callers read the Section object.
func TestChunkDetailSection(t *testing.T) {
	ctx := context.Background()
	const project = "chunksection"
	wv := weaviateWithTenant(t, project)
	fileID := ids.File(project, "", "a.md")
	fv := ids.FileVersion(fileID, "e", "s")
	sec := ids.Section(fv, 2)
	chunk := func(i int, extra map[string]any) *models.Object {
		props := map[string]any{
			"content": "hello", "file_id": fileID, "file_version_id": fv, "file_path": "a.md", "branch": "", "index": i,
			"start_offset": 0, "end_offset": 5, "token_count": 1, "source_checksum": "sum", "section_id": sec, "heading_path": []string{"A"},
			"kind": "text", "valid_from": 3,
		}
		for k, v := range extra {
			props[k] = v
		}
		return &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, i)), Tenant: project, Properties: props}
	}
	objs := []*models.Object{
		chunk(0, map[string]any{"section_title": "Usage", "section_heading_path": []string{"Guide", "Usage"}, "section_ordinal": 2,
			"section_token_count": 180, "section_chunk_count": 2}),
		chunk(1, nil),
		{Class: schema.VersionClass, ID: strfmt.UUID(fv), Tenant: project, Properties: map[string]any{
			"file_id": fileID, "file_path": "a.md", "branch": "", "file_version_id": fv, "status": "indexed", "deleted": false, "valid_from": 3}},
	}
	res, err := wv.Batch().ObjectsBatcher().WithObjects(objs...).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Result != nil && r.Result.Errors != nil {
			t.Fatalf("store %s: %v", r.ID, r.Result.Errors.Error[0].Message)
		}
	}
	s := New(wv)
	carried, err := s.GetChunkDetail(ctx, project, ids.Chunk(fv, 0), 3)
	if err != nil || carried == nil {
		t.Fatalf("chunk 0: %v %v", carried, err)
	}
	want := &Section{ID: sec, FileID: fileID, FileVersionID: fv, FilePath: "a.md", Ordinal: 2, Title: "Usage",
		HeadingPath: []string{"Guide", "Usage"}, TokenCount: 180, ChunkCount: 2, ValidFrom: 3}
	if !reflect.DeepEqual(carried.Section, want) {
		t.Fatalf("chunk 0 section %+v, want %+v", carried.Section, want)
	}
	older, err := s.GetChunkDetail(ctx, project, ids.Chunk(fv, 1), 3)
	if err != nil || older == nil || older.Section != nil {
		t.Fatalf("chunk 1 (no section fields): %+v %v", older, err)
	}
	rows, err := s.ChunkDetails(ctx, project, ChunkQuery{FileVersionID: fv, To: -1, Limit: 10, At: 3})
	if err != nil || len(rows) != 2 || !reflect.DeepEqual(rows[0].Section, want) || rows[1].Section != nil {
		t.Fatalf("range read: %+v %v", rows, err)
	}
}
