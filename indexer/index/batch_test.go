package index

import (
	"context"
	"strings"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
)

// A write of several batches sent at once stores every object, and a
// refused object in any batch fails the write with its id.
func TestParallelBatchesWriteEverythingAndReportFailures(t *testing.T) {
	w, wv := newWriter(t)
	w.SetBatchParallel(4)
	ctx := context.Background()
	const project = "parallel-batches"
	if err := w.ensureTenant(ctx, project); err != nil {
		t.Fatal(err)
	}
	chunks := func(fv string, n int) []*models.Object {
		var objs []*models.Object
		for i := range n {
			objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, i)), Tenant: project,
				Properties: map[string]any{"file_version_id": fv, "index": i, "content": "c", "valid_from": 1}})
		}
		return objs
	}
	fv := ids.FileVersion(ids.File(project, "", "a.md"), "e", "s")
	if err := w.batch(ctx, chunks(fv, 5*batchSize+50)); err != nil {
		t.Fatal(err)
	}
	if n := chunkCount(t, wv, project, fv); n != 5*batchSize+50 {
		t.Fatalf("%d chunks stored, want %d", n, 5*batchSize+50)
	}

	other := ids.FileVersion(ids.File(project, "", "b.md"), "e", "s")
	objs := chunks(other, 4*batchSize)
	bad := objs[2*batchSize+7]
	bad.Properties.(map[string]any)["index"] = "not a number"
	err := w.batch(ctx, objs)
	if err == nil || !strings.Contains(err.Error(), string(bad.ID)) {
		t.Fatalf("err %v, want the refused object %s named", err, bad.ID)
	}
}
