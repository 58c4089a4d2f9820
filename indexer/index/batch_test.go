package index

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
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

// Vectors written while another writer adds a model's named vector to the
// collection are all stored: Weaviate makes the collection's shards
// read-only while it applies the update, and the refused objects are sent
// again (CI once failed a write on it).
func TestVectorWritesDuringCollectionUpdate(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const p = "class-updating"
	var files []pipeline.FileVersion
	for i := range 12 {
		fv := version(p, fmt.Sprintf("doc-%d.md", i), "e", fmt.Sprint(100+i), "one", "two", "three")
		mustApply(t, w, fv, Applied)
		files = append(files, fv)
	}
	stop := make(chan struct{})
	updates := make(chan error, 1)
	go func() {
		// Each new model is a collection update (schema.EnsureVectorSpace).
		defer close(updates)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := schema.EnsureVectorSpace(ctx, wv, fmt.Sprintf("updating-model-%d-%d", time.Now().UnixNano(), i), 1); err != nil {
				updates <- err
				return
			}
		}
	}()
	for round := range 4 {
		for _, fv := range files {
			if err := w.ApplyVectors(ctx, vectorsOf(fv, testModel, 3)); err != nil {
				close(stop)
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	close(stop)
	if err := <-updates; err != nil {
		t.Fatalf("collection update: %v", err)
	}
	for _, fv := range files {
		got := fileObjects(t, wv, schema.ChunkVectorClass, p, fv.FileID)
		if len(got) != len(fv.Chunks) {
			t.Errorf("%s: %d vectors stored, want %d", fv.Object.Key, len(got), len(fv.Chunks))
		}
	}
}

func TestClassUpdating(t *testing.T) {
	for msg, want := range map[string]bool{
		"store is read-only due to: UpdateVectorIndexConfigs: [m_a m_b]": true,
		"store is read-only due to: disk usage too high":                 false,
		"invalid text property 'index'":                                  false,
	} {
		if got := schema.ClassUpdating(msg); got != want {
			t.Errorf("ClassUpdating(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestBatchParts: a write is split into requests of at most batchSize, in
// order and whole; one too large for a request goes in whole rounds of
// parallel requests of at least minBatchSpread objects.
func TestBatchParts(t *testing.T) {
	for _, tc := range []struct{ n, parallel, want int }{
		{0, 4, 0}, {1, 4, 1}, {batchSize, 4, 1}, // one request stays one
		{batchSize + 1, 4, 4}, // 201: four of 50 or 51
		{900, 4, 8},           // two rounds of four, not 4 x 200 and 100 alone
		{900, 8, 8},           // one round
		{5*batchSize + 50, 4, 8},
		{120, 1, 1}, {450, 1, 3}, // one at a time: as few as fit
		{260, 16, 5}, // not under minBatchSpread: five of 52
	} {
		objs := make([]*models.Object, tc.n)
		for i := range objs {
			objs[i] = &models.Object{ID: strfmt.UUID(fmt.Sprint(i))}
		}
		parts := batchParts(objs, tc.parallel)
		var joined []*models.Object
		for _, p := range parts {
			if len(p) > batchSize || (len(parts) > 1 && len(p) < minBatchSpread) {
				t.Errorf("n=%d parallel=%d: a part of %d", tc.n, tc.parallel, len(p))
			}
			joined = append(joined, p...)
		}
		if len(joined) != tc.n || (tc.n > 0 && (joined[0] != objs[0] || joined[tc.n-1] != objs[tc.n-1])) {
			t.Errorf("n=%d parallel=%d: parts do not hold the objects in order", tc.n, tc.parallel)
		}
		if len(parts) != tc.want {
			t.Errorf("n=%d parallel=%d: %d parts, want %d", tc.n, tc.parallel, len(parts), tc.want)
		}
	}
}
