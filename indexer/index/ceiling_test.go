package index

import (
	"context"
	"testing"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// WriteWithoutCommit stores what a commit and its vectors store, and
// publishes nothing: the watermark and the file's visible version stay as
// they were.
func TestWriteWithoutCommitStoresObjectsButPublishesNothing(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const project = "ceiling"
	fv := version(project, "a.md", "e1", "0001", "one", "two", "three")
	v := pipeline.Vectors{Object: fv.Object, Project: project, FileID: fv.FileID, FileVersionID: fv.FileVersionID, Model: "tiny", Dimensions: 2}
	for _, c := range fv.Chunks {
		v.Chunks = append(v.Chunks, pipeline.ChunkVector{ChunkID: c.ID, SourceChecksum: c.SourceChecksum, Vector: []float32{0.6, 0.8}})
	}
	if err := w.WriteWithoutCommit(ctx, fv, v); err != nil {
		t.Fatal(err)
	}
	if n := chunkCount(t, wv, project, fv.FileVersionID); n != 3 {
		t.Fatalf("%d chunks stored, want 3", n)
	}
	got, err := wv.Data().ObjectsGetter().WithClassName(schema.ChunkVectorClass).WithTenant(project).
		WithID(ids.ChunkVector(fv.Chunks[1].ID, "tiny")).WithVector().Do(ctx)
	if err != nil || len(got) != 1 || len(got[0].Vectors[schema.VectorName("tiny")]) != 2 {
		t.Fatalf("vector object of chunk 1: %v, %v", got, err)
	}
	if wm := watermark(t, w, project); wm != 0 {
		t.Fatalf("watermark %d after a write without commit, want 0", wm)
	}
	if seen := visible(t, wv, project, fv.FileID, 0); len(seen) != 0 {
		t.Fatalf("visible at the watermark: %v, want nothing", seen)
	}

	bad := v
	bad.Chunks = []pipeline.ChunkVector{{ChunkID: fv.Chunks[0].ID, Vector: nil}}
	other := version(project, "b.md", "e1", "0002", "x")
	if err := w.WriteWithoutCommit(ctx, other, bad); err == nil {
		t.Fatal("vectors without values were accepted")
	}
	if n := chunkCount(t, wv, project, other.FileVersionID); n != 0 {
		t.Fatalf("%d chunks stored with refused vectors, want none", n)
	}
}
