package store

import (
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
	ctx := asSystem()
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
	putObjects(t, wv, objs...)
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

// TestChunkWindowByIDs: a bounded index range (read_around's window) is read
// by the chunks' ids: the same chunks, in order, as the range on index, with
// another version's chunks of the same indexes and a chunk committed after
// the view left out, and a section's chunks added when asked.
func TestChunkWindowByIDs(t *testing.T) {
	ctx := asSystem()
	const project = "chunkwindow"
	wv := weaviateWithTenant(t, project)
	fileID := ids.File(project, "", "w.md")
	fv, other := ids.FileVersion(fileID, "e1", "s1"), ids.FileVersion(fileID, "e2", "s2")
	secA, secB := ids.Section(fv, 0), ids.Section(fv, 1)
	chunk := func(version string, i int, section string, validFrom int) *models.Object {
		return &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(version, i)), Tenant: project, Properties: map[string]any{
			"content": "c", "file_id": fileID, "file_version_id": version, "file_path": "w.md", "branch": "", "index": i,
			"start_offset": 0, "end_offset": 1, "token_count": 1, "source_checksum": "sum", "section_id": section,
			"kind": "text", "valid_from": validFrom,
		}}
	}
	var objs []*models.Object
	for i := range 8 {
		sec := secA
		if i >= 5 {
			sec = secB
		}
		objs = append(objs, chunk(fv, i, sec, 3), chunk(other, i, ids.Section(other, 0), 3))
	}
	objs = append(objs, chunk(fv, 8, secB, 9)) // committed after the view at 3
	putObjects(t, wv, objs...)
	s := New(wv)
	indexes := func(q ChunkQuery) []int {
		t.Helper()
		rows, err := s.ChunkDetails(ctx, project, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, r := range rows {
			if r.FileVersionID != fv {
				t.Fatalf("row of version %s", r.FileVersionID)
			}
			out = append(out, r.Index)
		}
		return out
	}
	for _, c := range []struct {
		q    ChunkQuery
		want []int
	}{
		{ChunkQuery{FileVersionID: fv, From: 2, To: 4, Limit: 3, At: 3}, []int{2, 3, 4}},
		{ChunkQuery{FileVersionID: fv, From: 0, To: 1, Limit: 2, At: 3}, []int{0, 1}},
		{ChunkQuery{FileVersionID: fv, From: 6, To: 9, Limit: 4, At: 3}, []int{6, 7}},                      // past the end, and 8 not yet visible
		{ChunkQuery{FileVersionID: fv, From: 6, To: 9, Limit: 4, At: 9}, []int{6, 7, 8}},                   // visible from 9
		{ChunkQuery{FileVersionID: fv, From: 0, To: 200, Limit: 20, At: 3}, []int{0, 1, 2, 3, 4, 5, 6, 7}}, // too wide for ids: the range
		{ChunkQuery{FileVersionID: fv, From: 3, To: 4, AlsoSectionID: secB, Limit: 10, At: 3}, []int{3, 4, 5, 6, 7}},
		// By section id alone (read's prefetch): the section's chunks as of the view.
		{ChunkQuery{SectionID: secB, To: -1, Limit: 10, At: 3}, []int{5, 6, 7}},
		{ChunkQuery{SectionID: secB, To: -1, Limit: 10, At: 9}, []int{5, 6, 7, 8}},
		{ChunkQuery{SectionID: secA, To: -1, Limit: 2, At: 3}, []int{0, 1}},
	} {
		if got := indexes(c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: indexes %v, want %v", c.q, got, c.want)
		}
	}
}

// TestWindowFilterUsesIDs: which filter a chunk query becomes.
func TestWindowFilterUsesIDs(t *testing.T) {
	fv := ids.FileVersion(ids.File("p", "", "a.md"), "e", "s")
	paths := func(q ChunkQuery) map[string]bool {
		seen := map[string]bool{}
		var walk func(w *models.WhereFilter)
		walk = func(w *models.WhereFilter) {
			if len(w.Path) > 0 {
				seen[w.Path[0]] = true
			}
			for _, o := range w.Operands {
				walk(o)
			}
		}
		walk(chunkQueryWhere(q).Build())
		return seen
	}
	if p := paths(ChunkQuery{FileVersionID: fv, From: 3, To: 9}); !p["id"] || p["index"] {
		t.Errorf("window 3-9 filters on %v, want id and not index", p)
	}
	if p := paths(ChunkQuery{FileVersionID: fv, From: 0, To: 500}); p["id"] || !p["index"] {
		t.Errorf("range 0-500 filters on %v, want index", p)
	}
	if p := paths(ChunkQuery{FileVersionID: fv, To: -1}); p["id"] || p["index"] {
		t.Errorf("whole version filters on %v", p)
	}
}
