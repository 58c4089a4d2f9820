package index

import (
	"context"
	"testing"

	"github.com/strata-kb/strata/shared/pipeline"
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
	fresh := New(wv, sharedSeqs, nil, w.log) // knows no tenants: asks Weaviate, as after a restart
	deleted, err := fresh.CollectGarbage(ctx, project, 0)
	if err != nil || deleted != 1 {
		t.Fatalf("gc deleted %d: %v; want the superseded version", deleted, err)
	}
	if n := chunkCount(t, wv, project, old.FileVersionID); n != 0 {
		t.Fatalf("gc kept %d chunks of the superseded version", n)
	}
}
