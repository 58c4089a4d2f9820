package store

import (
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
)

// TestListChunksPages: pages read by id (up to maxIDWindow) and by offset
// (wider) give every chunk of the version once, in order, and nothing of
// another version.
func TestListChunksPages(t *testing.T) {
	ctx := asSystem()
	const project = "listpages"
	wv := weaviateWithTenant(t, project)
	fileID := ids.File(project, "", "l.md")
	fv, other := ids.FileVersion(fileID, "e1", "s1"), ids.FileVersion(fileID, "e2", "s2")
	const n = 300
	var objs []*models.Object
	for _, version := range []string{fv, other} {
		for i := range n {
			objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(version, i)), Tenant: project, Properties: map[string]any{
				"content": "c", "file_id": fileID, "file_version_id": version, "file_path": "l.md", "branch": "", "index": i,
				"start_offset": 0, "end_offset": 1, "token_count": 1, "source_checksum": "sum", "kind": "text", "valid_from": 3,
			}})
		}
	}
	putObjects(t, wv, objs...)
	s := New(wv)
	for _, limit := range []int{101, maxIDWindow, maxIDWindow + 1} {
		next := 0
		for offset := 0; offset < n+limit; offset += limit {
			rows, err := s.ListChunks(ctx, project, fv, offset, limit)
			if err != nil {
				t.Fatal(err)
			}
			if want := min(limit, max(0, n-offset)); len(rows) != want {
				t.Fatalf("limit %d offset %d: %d rows, want %d", limit, offset, len(rows), want)
			}
			for _, r := range rows {
				if r.FileVersionID != fv || r.Index != next || r.ID != ids.Chunk(fv, next) {
					t.Fatalf("limit %d offset %d: row %+v, want index %d of %s", limit, offset, r, next, fv)
				}
				next++
			}
		}
		if next != n {
			t.Errorf("limit %d: %d chunks listed, want %d", limit, next, n)
		}
	}
}
