package index

import (
	"context"
	"testing"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// Garbage collection of a project that has no vectors yet, while the
// ChunkVector collection exists for another project, still collects (it
// failed on the missing tenant, every hour, collecting nothing).
func TestGarbageCollectionOfAProjectWithoutVectors(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	if err := w.ensureVectorSpace(ctx, "has-vectors", "tiny"); err != nil {
		t.Fatal(err)
	}
	const project = "no-vectors"
	old := version(project, "a.md", "e1", "10", "old text")
	for _, fv := range []pipeline.FileVersion{old, version(project, "a.md", "e2", "20", "new text")} {
		if _, err := w.ApplyFileVersion(ctx, fv); err != nil {
			t.Fatal(err)
		}
	}
	fresh := New(Config{Weaviate: wv, Sequences: sharedSeqs, Log: w.log}) // knows no tenants: asks Weaviate, as after a restart
	deleted, err := fresh.CollectGarbage(ctx, project, 0)
	if err != nil || deleted != 1 {
		t.Fatalf("gc deleted %d: %v; want the superseded version", deleted, err)
	}
	if n := chunkCount(t, wv, project, old.FileVersionID); n != 0 {
		t.Fatalf("gc kept %d chunks of the superseded version", n)
	}
}

// A committed version whose chunks a filtered read no longer finds (what a
// weaviate-server killed inside a batch can leave: objects without their
// index entries) is committed again when its event comes back, instead of
// being taken for a duplicate.
func TestTornVersionIsCommittedAgain(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const project = "torn"
	fv := version(project, "a.md", "e1", "10", "first", "second", "third")
	if out, err := w.ApplyFileVersion(ctx, fv); err != nil || out != Applied {
		t.Fatalf("apply: %s, %v", out, err)
	}
	if out, err := w.ApplyFileVersion(ctx, fv); err != nil || out != Duplicate {
		t.Fatalf("replay of a whole version: %s, %v; want duplicate", out, err)
	}
	for _, c := range fv.Chunks[1:] { // what readers no longer find
		if err := wv.Data().Deleter().WithClassName(schema.ChunkClass).WithID(c.ID).WithTenant(project).Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := w.ApplyFileVersion(ctx, fv); err != nil || out != Applied {
		t.Fatalf("replay of a torn version: %s, %v; want applied again", out, err)
	}
	if got := visible(t, wv, project, fv.FileID, watermark(t, w, project)); got[fv.FileVersionID] != 3 {
		t.Fatalf("visible after the repair: %v, want the version's 3 chunks", got)
	}
}

// Garbage collection reads a project's Versions a page at a time, so it
// collects past a first page (it read at most 10,000, Weaviate's most
// results of one query; a page of 3 here stands for that).
func TestGarbageCollectionReadsEveryPageOfVersions(t *testing.T) {
	defer func(n int) { mergePage = n }(mergePage)
	mergePage = 3
	w, wv := newWriter(t)
	ctx := context.Background()
	const project = "gc-pages"
	var superseded []pipeline.FileVersion
	for _, path := range []string{"a.md", "b.md", "c.md", "d.md", "e.md"} {
		old := version(project, path, "e1", "10", "old text of "+path)
		for _, fv := range []pipeline.FileVersion{old, version(project, path, "e2", "20", "new text of "+path)} {
			if out, err := w.ApplyFileVersion(ctx, fv); err != nil || out != Applied {
				t.Fatalf("apply %s: %v %v", path, out, err)
			}
		}
		superseded = append(superseded, old)
	}
	deleted, err := w.CollectGarbage(ctx, project, 0)
	if err != nil || deleted != len(superseded) {
		t.Fatalf("gc deleted %d: %v; want the %d superseded versions", deleted, err, len(superseded))
	}
	for _, fv := range superseded {
		if n := chunkCount(t, wv, project, fv.FileVersionID); n != 0 {
			t.Fatalf("gc kept %d chunks of %s's superseded version", n, fv.Object.Path)
		}
	}
}
