package index

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// vectorCount is how many vectors of fv's version project has.
func vectorCount(t *testing.T, wv *weaviate.Client, project string, fv pipeline.FileVersion) int {
	t.Helper()
	resp, err := wv.GraphQL().Get().WithClassName(schema.ChunkVectorClass).WithTenant(project).WithLimit(100).
		WithWhere(textFilter("file_version_id", fv.FileVersionID)).WithFields(graphql.Field{Name: "chunk_id"}).Do(context.Background())
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("count vectors of %s: %v %v", fv.Object.Path, err, resp.Errors)
	}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.ChunkVectorClass].([]any)
	return len(rows)
}

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
	count := func(fv pipeline.FileVersion) int { t.Helper(); return vectorCount(t, wv, p, fv) }
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

// TestAMembersVectorsGoWithItsContainer: a member's vectors are dropped
// when its container's version is stale (in either order), and judged by
// the container's Document, never the member's own: a crash can leave a
// member's Document ahead of its container's, and the member is then
// committed after all with its container (decideSets).
func TestAMembersVectorsGoWithItsContainer(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "stalemembers"
	vectors := func(fv pipeline.FileVersion) {
		t.Helper()
		if err := w.ApplyVectors(ctx, vectorsOf(fv, "tiny", 3)); err != nil {
			t.Fatalf("vectors of %s: %v", fv.Object.Path, err)
		}
	}
	apply := func(fv pipeline.FileVersion, want Outcome) {
		t.Helper()
		if out, err := w.ApplyFileVersion(ctx, fv); err != nil || out != want {
			t.Fatalf("apply %s %s: %v %v, want %v", fv.Object.Path, fv.Object.ETag, out, err, want)
		}
	}
	z1 := archive(p, "", "z.zip", "z1", "0000000000000010", "early.txt", "late.txt")
	z2 := archive(p, "", "z.zip", "z2", "0000000000000020", "other.txt")
	vectors(z1.Members[0])
	apply(z2, Applied)
	apply(z1, Stale)
	if n := vectorCount(t, wv, p, z1.Members[0]); n != 0 {
		t.Fatalf("a member of a stale container keeps %d vectors", n)
	}
	vectors(z1.Members[1])
	if n := vectorCount(t, wv, p, z1.Members[1]); n != 0 {
		t.Fatalf("a member of a stale container got %d vectors after its commit", n)
	}

	// A member's Document ahead of its container's (what a crash between
	// the two writes leaves): the member of the container's next version
	// keeps its vectors, as that version will be committed.
	y1 := archive(p, "", "y.zip", "y1", "0000000000000010", "m.txt")
	y2 := archive(p, "", "y.zip", "y2", "0000000000000030", "m.txt")
	apply(y1, Applied)
	ahead := y2.Members[0]
	if err := w.batch(ctx, []*models.Object{fileDocument(ahead, labelsOf(ahead), 99, time.Now().UTC().Format(time.RFC3339Nano))}); err != nil {
		t.Fatal(err)
	}
	y15 := archive(p, "", "y.zip", "y15", "0000000000000015", "m.txt")
	vectors(y15.Members[0])
	if n := vectorCount(t, wv, p, y15.Members[0]); n != 1 {
		t.Fatalf("a member of a container version still to come has %d vectors, want 1 (its own Document is ahead, its container's is not)", n)
	}
}

// TestARollBackDeletesPastOneBatchDeletesLimit: Weaviate deletes at most
// QUERY_MAXIMUM_RESULTS (10,000) objects in one batch delete; a commit of
// more chunks than that, cut short, is rolled back whole.
func TestARollBackDeletesPastOneBatchDeletesLimit(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const p, n = "rollback-10k", 10_050
	if err := w.ensureTenant(ctx, p); err != nil {
		t.Fatal(err)
	}
	objs := make([]*models.Object, n)
	for i := range objs {
		objs[i] = &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(ids.FileVersion(ids.File(p, "", "big.csv"), "e1", "x"), i)),
			Tenant: p, Properties: map[string]any{"file_id": "big", "valid_from": 7, "content": fmt.Sprint("row ", i)}}
	}
	if err := w.batch(ctx, objs); err != nil {
		t.Fatal(err)
	}
	if err := w.rollback(ctx, p, 6); err != nil {
		t.Fatal(err)
	}
	resp, err := wv.GraphQL().Aggregate().WithClassName(schema.ChunkClass).WithTenant(p).
		WithWhere(intFilter("valid_from", filters.GreaterThan, 6)).WithFields(graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}}).Do(ctx)
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("count: %v %v", err, resp.Errors)
	}
	rows, _ := resp.Data["Aggregate"].(map[string]any)[schema.ChunkClass].([]any)
	left := -1.0
	if len(rows) == 1 {
		meta, _ := rows[0].(map[string]any)["meta"].(map[string]any)
		left, _ = meta["count"].(float64)
	}
	if left != 0 {
		t.Fatalf("%v of %d unpublished chunks left after the roll-back", left, n)
	}
}
