package index

import (
	"context"
	"testing"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// TestReplacedVersionsAreClosed follows one file through overwrites, a
// delete and a new life: each commit sets valid_to on the rows (chunks and
// vectors) of the versions it replaces, to its own sequence, and leaves the
// visible version's rows and a newer version's early vectors open.
func TestReplacedVersionsAreClosed(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "validity"
	v1 := version(p, "a.md", "e1", "0000000000000010", "one", "two")
	v2 := version(p, "a.md", "e2", "0000000000000020", "three")
	v3 := version(p, "a.md", "e3", "0000000000000040", "four", "five")
	v4 := version(p, "a.md", "e4", "0000000000000050", "six")
	apply := func(fv pipeline.FileVersion) int64 {
		t.Helper()
		if out, err := w.ApplyFileVersion(ctx, fv); err != nil || out != Applied {
			t.Fatalf("apply %s: %v %v", fv.Object.ETag, out, err)
		}
		return watermark(t, w, p)
	}
	vectors := func(fv pipeline.FileVersion) {
		t.Helper()
		if err := w.ApplyVectors(ctx, vectorsOf(fv, "tiny", 3)); err != nil {
			t.Fatalf("vectors of %s: %v", fv.Object.ETag, err)
		}
	}
	// validTo is each of the file's rows of class by version: its valid_to
	// (0: none).
	validTo := func(class string) map[string][]int64 {
		t.Helper()
		out := map[string][]int64{}
		resp, err := wv.GraphQL().Get().WithClassName(class).WithTenant(p).WithWhere(textFilter("file_id", v1.FileID)).WithLimit(1000).
			WithFields(graphqlFields("file_version_id", schema.ValidToProperty)...).Do(ctx)
		if err != nil || len(resp.Errors) > 0 {
			t.Fatalf("read %s: %v %v", class, err, resp.Errors)
		}
		for _, r := range resp.Data["Get"].(map[string]any)[class].([]any) {
			props := r.(map[string]any)
			id := wvquery.Str(props, "file_version_id")
			out[id] = append(out[id], int64(wvquery.Float(props, schema.ValidToProperty)))
		}
		return out
	}
	want := func(class string, fv pipeline.FileVersion, seq int64) {
		t.Helper()
		got := validTo(class)[fv.FileVersionID]
		if len(got) == 0 {
			t.Fatalf("%s of %s: no rows", class, fv.Object.ETag)
		}
		for _, s := range got {
			if s != seq {
				t.Fatalf("%s of %s: valid_to %v, want %d for every row", class, fv.Object.ETag, got, seq)
			}
		}
	}

	s1 := apply(v1)
	vectors(v1)
	want(schema.ChunkClass, v1, 0)
	want(schema.ChunkVectorClass, v1, 0)
	// v3's vectors come before v2 is even committed: a newer version's
	// early vectors must stay open when v2 closes v1.
	vectors(v3)
	s2 := apply(v2)
	if s2 <= s1 {
		t.Fatalf("watermark %d after %d", s2, s1)
	}
	want(schema.ChunkClass, v1, s2)
	want(schema.ChunkVectorClass, v1, s2)
	want(schema.ChunkClass, v2, 0)
	want(schema.ChunkVectorClass, v3, 0)

	// A delete closes the version it hides; the earlier one keeps its end.
	if out, err := w.ApplyDelete(ctx, deletion(p, "a.md", "0000000000000030")); err != nil || out != Applied {
		t.Fatalf("delete: %v %v", out, err)
	}
	s3 := watermark(t, w, p)
	want(schema.ChunkClass, v2, s3)
	want(schema.ChunkClass, v1, s2)

	// v2's vectors come after v2 was closed: they get its end too.
	vectors(v2)
	want(schema.ChunkVectorClass, v2, s3)

	s4 := apply(v3)
	want(schema.ChunkClass, v3, 0)
	want(schema.ChunkVectorClass, v3, 0)
	s5 := apply(v4)
	want(schema.ChunkClass, v3, s5)
	want(schema.ChunkVectorClass, v3, s5)
	want(schema.ChunkClass, v4, 0)
	if s4 >= s5 {
		t.Fatalf("watermarks %d, %d", s4, s5)
	}

	// Searches keep exactly the rows not replaced as of their sequence.
	for at, versions := range map[int64][]pipeline.FileVersion{s1: {v1}, s2: {v2}, s3: nil, s5: {v4}} {
		var got []string
		rows, err := wv.GraphQL().Get().WithClassName(schema.ChunkClass).WithTenant(p).
			WithWhere(wvquery.And(textFilter("file_id", v1.FileID), schema.NotReplaced(at))).
			WithFields(graphqlFields("file_version_id", "valid_from")...).WithLimit(100).Do(ctx)
		if err != nil || len(rows.Errors) > 0 {
			t.Fatalf("search at %d: %v %v", at, err, rows.Errors)
		}
		seen := map[string]bool{}
		for _, r := range rows.Data["Get"].(map[string]any)[schema.ChunkClass].([]any) {
			row := r.(map[string]any)
			if int64(wvquery.Float(row, "valid_from")) <= at && !seen[wvquery.Str(row, "file_version_id")] {
				seen[wvquery.Str(row, "file_version_id")] = true
				got = append(got, wvquery.Str(row, "file_version_id"))
			}
		}
		if len(got) != len(versions) || (len(versions) == 1 && got[0] != versions[0].FileVersionID) {
			t.Errorf("at %d: versions %v not replaced, want %d", at, got, len(versions))
		}
	}
}

func graphqlFields(names ...string) []graphql.Field {
	out := make([]graphql.Field, len(names))
	for i, n := range names {
		out[i] = graphql.Field{Name: n}
	}
	return out
}
