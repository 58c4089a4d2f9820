package index

import (
	"context"
	"testing"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// TestVectorsOfAVersionSupersededBeforeItsCommitAreDropped: the embedder
// may finish a file version before the indexer commits it. When a newer
// event of the file is committed first, the older version never will be,
// and its vectors go whichever comes first: its vectors, then its stale
// commit; or its stale commit, then its vectors. A version committed before
// it was superseded keeps its vectors (a release reads them), and so does
// a version still to be committed.
func TestVectorsOfAVersionSupersededBeforeItsCommitAreDropped(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "stalevectors"
	count := func(fv pipeline.FileVersion) int {
		t.Helper()
		resp, err := wv.GraphQL().Get().WithClassName(schema.ChunkVectorClass).WithTenant(p).WithLimit(100).
			WithWhere(textFilter("file_version_id", fv.FileVersionID)).WithFields(graphql.Field{Name: "chunk_id"}).Do(ctx)
		if err != nil || len(resp.Errors) > 0 {
			t.Fatalf("count vectors of %s: %v %v", fv.Object.ETag, err, resp.Errors)
		}
		rows, _ := resp.Data["Get"].(map[string]any)[schema.ChunkVectorClass].([]any)
		return len(rows)
	}
	apply := func(fv pipeline.FileVersion, want Outcome) {
		t.Helper()
		if out, err := w.ApplyFileVersion(ctx, fv); err != nil || out != want {
			t.Fatalf("apply %s: %v %v, want %v", fv.Object.ETag, out, err, want)
		}
	}
	vectors := func(fv pipeline.FileVersion) {
		t.Helper()
		if err := w.ApplyVectors(ctx, vectorsOf(fv, "tiny", 3)); err != nil {
			t.Fatalf("vectors of %s: %v", fv.Object.ETag, err)
		}
	}

	// Vectors first: kept while the version may still be committed, then
	// dropped by its stale commit.
	a1 := version(p, "a.md", "a1", "0000000000000010", "one", "two")
	a2 := version(p, "a.md", "a2", "0000000000000020", "three")
	vectors(a1)
	apply(a2, Applied)
	if n := count(a1); n != 2 {
		t.Fatalf("a1's vectors before its commit came: %d, want 2", n)
	}
	apply(a1, Stale)
	if n := count(a1); n != 0 {
		t.Fatalf("a1, stale and never committed, keeps %d vectors", n)
	}

	// The stale commit first: its vectors, coming after, are not kept.
	b1 := version(p, "b.md", "b1", "0000000000000010", "four")
	b2 := version(p, "b.md", "b2", "0000000000000020", "five")
	apply(b2, Applied)
	apply(b1, Stale)
	vectors(b1)
	if n := count(b1); n != 0 {
		t.Fatalf("b1, stale and never committed, got %d vectors", n)
	}
	// Superseded by a delete before its commit: the same.
	d1 := version(p, "d.md", "d1", "0000000000000010", "six")
	if out, err := w.ApplyDelete(ctx, deletion(p, "d.md", "0000000000000020")); err != nil || out != Applied {
		t.Fatalf("delete d.md: %v %v", out, err)
	}
	vectors(d1)
	if n := count(d1); n != 0 {
		t.Fatalf("d1, older than the file's delete and never committed, got %d vectors", n)
	}

	// Committed, then superseded, then its vectors: a release may read it.
	c1 := version(p, "c.md", "c1", "0000000000000010", "seven")
	c2 := version(p, "c.md", "c2", "0000000000000020", "eight")
	c3 := version(p, "c.md", "c3", "0000000000000030", "nine")
	apply(c1, Applied)
	apply(c2, Applied)
	vectors(c1)
	if n := count(c1); n != 1 {
		t.Fatalf("c1, committed before c2 superseded it, has %d vectors, want 1", n)
	}
	// A version newer than the file's: still to be committed, kept.
	vectors(c3)
	if n := count(c3); n != 1 {
		t.Fatalf("c3, newer than the file's version, has %d vectors, want 1", n)
	}
	// A redelivery of a committed version found stale keeps its vectors too.
	apply(c1, Stale)
	if n := count(c1); n != 1 {
		t.Fatalf("c1's stale redelivery left %d vectors, want 1", n)
	}
	// Vectors without their event's sequencer say nothing: kept.
	old := vectorsOf(a1, "tiny", 3)
	old.Object.Sequencer = ""
	if err := w.ApplyVectors(ctx, old); err != nil {
		t.Fatal(err)
	}
	if n := count(a1); n != 2 {
		t.Fatalf("vectors without a sequencer: %d kept, want 2", n)
	}
}
