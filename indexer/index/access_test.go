package index

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// testModel is the embedding model of these tests (3 dimensions).
const testModel = "acl-test"

func withAccess(fv pipeline.FileVersion, readAt time.Time, groups ...string) pipeline.FileVersion {
	fv.Access = pipeline.Access{Groups: groups, ReadAt: readAt}
	return fv
}

func accessChange(fv pipeline.FileVersion, readAt time.Time, groups ...string) pipeline.TagsChanged {
	return pipeline.TagsChanged{Object: fv.Object, FileID: fv.FileID, Access: pipeline.Access{Groups: groups, ReadAt: readAt}}
}

func vectorsOf(fv pipeline.FileVersion, model string, dims int) pipeline.Vectors {
	v := pipeline.Vectors{Object: fv.Object, Project: fv.Object.Project, FileID: fv.FileID, FileVersionID: fv.FileVersionID,
		Model: model, Dimensions: dims}
	for i, c := range fv.Chunks {
		vec := make([]float32, dims)
		for d := range vec {
			vec[d] = float32((i+1)*(d+2)%7) - 3
		}
		v.Chunks = append(v.Chunks, pipeline.ChunkVector{ChunkID: c.ID, SourceChecksum: c.SourceChecksum, Vector: vec})
	}
	return v
}

// fileObjects returns the objects of class that belong to fileID: id -> properties.
func fileObjects(t *testing.T, wv *weaviate.Client, class, project, fileID string) map[string]map[string]any {
	t.Helper()
	resp, err := wv.GraphQL().Get().WithClassName(class).WithTenant(project).WithWhere(textFilter("file_id", fileID)).WithLimit(10000).
		WithFields(graphql.Field{Name: schema.ReadersProperty}, graphql.Field{Name: "file_version_id"},
			graphql.Field{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}}).Do(context.Background())
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("read %s of %s: %v %v", class, fileID, err, resp.Errors)
	}
	out := map[string]map[string]any{}
	for _, r := range resp.Data["Get"].(map[string]any)[class].([]any) {
		m := r.(map[string]any)
		out[objectID(m)] = m
	}
	return out
}

// committedReaders lists the readers each Version of the file was
// committed with, in commit order.
func committedReaders(t *testing.T, wv *weaviate.Client, project, fileID string) []string {
	t.Helper()
	resp, err := wv.GraphQL().Get().WithClassName(schema.VersionClass).WithTenant(project).WithWhere(textFilter("file_id", fileID)).
		WithSort(graphql.Sort{Path: []string{"valid_from"}, Order: graphql.Asc}).
		WithFields(graphql.Field{Name: schema.CommittedReadersProperty}).Do(context.Background())
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("read Versions of %s: %v %v", fileID, err, resp.Errors)
	}
	var out []string
	for _, r := range resp.Data["Get"].(map[string]any)[schema.VersionClass].([]any) {
		out = append(out, strings.Join(wvquery.Strs(r.(map[string]any), schema.CommittedReadersProperty), " "))
	}
	return out
}

// wantReaders fails unless every object of the file in each class (n[class]
// of them, when given) has readers want.
func wantReaders(t *testing.T, wv *weaviate.Client, project, fileID string, want []string, n map[string]int) {
	t.Helper()
	for _, class := range []string{schema.SectionClass, schema.ChunkClass, schema.VersionClass, schema.ChunkVectorClass} {
		objs := fileObjects(t, wv, class, project, fileID)
		if c, ok := n[class]; ok && len(objs) != c {
			t.Errorf("%s: %d objects of the file, want %d", class, len(objs), c)
		}
		if len(objs) == 0 {
			t.Errorf("%s: no object of the file", class)
		}
		for id, o := range objs {
			if got := wvquery.Strs(o, schema.ReadersProperty); !slices.Equal(got, want) {
				t.Errorf("%s %s (version %s): readers %q, want %q", class, id, wvquery.Str(o, "file_version_id"), got, want)
			}
		}
	}
	doc := documentOf(t, project, fileID)
	if !slices.Equal(doc.labels.readers, want) {
		t.Errorf("Document: readers %q, want %q", doc.labels.readers, want)
	}
}

func documentOf(t *testing.T, project, fileID string) current {
	t.Helper()
	w, _ := newWriter(t)
	doc, err := w.document(context.Background(), project, fileID)
	if err != nil || !doc.exists {
		t.Fatalf("document %s: %+v %v", fileID, doc, err)
	}
	return doc
}

// storedVectors returns the vectors of model stored for the file: id -> vector.
func storedVectors(t *testing.T, wv *weaviate.Client, project, fileID, model string) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for id := range fileObjects(t, wv, schema.ChunkVectorClass, project, fileID) {
		objs, err := wv.Data().ObjectsGetter().WithClassName(schema.ChunkVectorClass).WithID(id).WithTenant(project).WithVector().Do(context.Background())
		if err != nil || len(objs) != 1 {
			t.Fatalf("read vector %s: %v", id, err)
		}
		out[id] = objs[0].Vectors[schema.VectorName(model)]
	}
	return out
}

func mustApply(t *testing.T, w *Writer, fv pipeline.FileVersion, want Outcome) {
	t.Helper()
	if got, err := w.ApplyFileVersion(context.Background(), fv); err != nil || got != want {
		t.Fatalf("apply %s: %v %v, want %v", fv.Object.ETag, got, err, want)
	}
}

func mustChange(t *testing.T, w *Writer, ac pipeline.TagsChanged, want Outcome) {
	t.Helper()
	if got, err := w.ApplyAccessChange(context.Background(), ac); err != nil || got != want {
		t.Fatalf("access change to %q read at %s: %v %v, want %v", ac.Access.Groups, ac.Access.ReadAt.Format(time.RFC3339Nano), got, err, want)
	}
}

func mustVectors(t *testing.T, w *Writer, v pipeline.Vectors) {
	t.Helper()
	if err := w.ApplyVectors(context.Background(), v); err != nil {
		t.Fatalf("vectors of %s: %v", v.FileVersionID, err)
	}
}

// TestCommitRecordsReaders: a commit writes the file's readers on its
// Document, Sections, Chunks and Version, and vectors carry them whether
// they came before the commit or after; unreadable groups make the file
// admins-only; a delete keeps the last readers.
func TestCommitRecordsReaders(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const p = "acl-commit"
	readAt := time.Now().UTC()
	fv := withAccess(version(p, "team/a.md", "e1", "10", "one", "two"), readAt, "eng", "ops")
	mustVectors(t, w, vectorsOf(fv, testModel, 3)) // before the commit: no document, no readers yet
	mustApply(t, w, fv, Applied)
	want := []string{"eng", "ops"}
	wantReaders(t, wv, p, fv.FileID, want, map[string]int{schema.SectionClass: 1, schema.ChunkClass: 2, schema.VersionClass: 1, schema.ChunkVectorClass: 2})
	doc := documentOf(t, p, fv.FileID)
	if !doc.labels.readAt.Equal(readAt) || doc.labels.err != "" {
		t.Errorf("document access read at %s, error %q; want %s, none", doc.labels.readAt, doc.labels.err, readAt)
	}
	// Vectors after the commit (another model) take the document's readers.
	mustVectors(t, w, vectorsOf(fv, testModel+"-2", 3))
	wantReaders(t, wv, p, fv.FileID, want, map[string]int{schema.ChunkVectorClass: 4})

	bad := version(p, "team/b.md", "b1", "11", "secret")
	bad.Access = pipeline.Access{Error: "strata-groups: invalid group \"Eng\"", ReadAt: readAt}
	mustApply(t, w, bad, Applied)
	mustVectors(t, w, vectorsOf(bad, testModel, 3))
	wantReaders(t, wv, p, bad.FileID, []string{access.Nobody}, nil)
	if doc := documentOf(t, p, bad.FileID); doc.labels.err != bad.Access.Error {
		t.Errorf("document access_error %q, want %q", doc.labels.err, bad.Access.Error)
	}
	v, err := w.visibleVersion(ctx, p, bad.FileID, watermark(t, w, p))
	if err != nil || wvquery.Str(v, "access_error") != bad.Access.Error {
		t.Errorf("version access_error %q (%v), want %q", wvquery.Str(v, "access_error"), err, bad.Access.Error)
	}

	if out, err := w.ApplyDelete(ctx, deletion(p, "team/a.md", "20")); err != nil || out != Applied {
		t.Fatalf("delete: %v %v", out, err)
	}
	wantReaders(t, wv, p, fv.FileID, want, map[string]int{schema.VersionClass: 2})
	if doc := documentOf(t, p, fv.FileID); !doc.deleted || !doc.labels.readAt.Equal(readAt) {
		t.Errorf("tombstone %+v: want deleted, read at %s", doc, readAt)
	}
}

// TestAccessChangeUpdatesEveryVersion: an access change sets the readers of
// every object of every version of the file, vectors included, without
// writing a chunk or touching a vector, and commits one Version repeating
// the visible file version. The same change again, or an older one, does
// nothing; the file's own events are still told apart.
func TestAccessChangeUpdatesEveryVersion(t *testing.T) {
	w, wv := newWriter(t)
	const p = "acl-change"
	t0 := time.Now().UTC()
	v1 := withAccess(version(p, "doc.md", "e1", "10", "a1", "a2", "a3"), t0, "eng")
	v2 := withAccess(version(p, "doc.md", "e2", "20", "b1", "b2"), t0.Add(time.Second), "eng")
	for _, fv := range []pipeline.FileVersion{v1, v2} {
		mustApply(t, w, fv, Applied)
		mustVectors(t, w, vectorsOf(fv, testModel, 3))
	}
	counts := map[string]int{schema.SectionClass: 2, schema.ChunkClass: 5, schema.VersionClass: 2, schema.ChunkVectorClass: 5}
	wantReaders(t, wv, p, v1.FileID, []string{"eng"}, counts)
	vectorsBefore := storedVectors(t, wv, p, v1.FileID, testModel)
	wm := watermark(t, w, p)

	change := accessChange(v2, t0.Add(time.Minute), "legal")
	mustChange(t, w, change, Applied)
	if got := watermark(t, w, p); got != wm+1 {
		t.Fatalf("watermark %d after the access change, want %d", got, wm+1)
	}
	counts[schema.VersionClass] = 3 // the change's Version; no chunk, section or vector written
	wantReaders(t, wv, p, v1.FileID, []string{"legal"}, counts)
	if got := committedReaders(t, wv, p, v1.FileID); !slices.Equal(got, []string{"eng", "eng", "legal"}) {
		t.Errorf("Versions' committed readers %q, want eng twice (as committed), then legal", got)
	}
	if got := storedVectors(t, wv, p, v1.FileID, testModel); !maps.EqualFunc(got, vectorsBefore, slices.Equal) {
		t.Errorf("vectors changed: %v, were %v", got, vectorsBefore)
	}
	if got := visible(t, wv, p, v1.FileID, wm+1); len(got) != 1 || got[v2.FileVersionID] != 2 {
		t.Errorf("visible after the change: %v, want v2's 2 chunks", got)
	}
	cur, err := w.visibleVersion(context.Background(), p, v1.FileID, wm+1)
	if err != nil || wvquery.Str(cur, "file_version_id") != v2.FileVersionID || wvquery.Float(cur, "valid_from") != float64(wm+1) || wvquery.Float(cur, "chunk_count") != 2 {
		t.Errorf("visible Version %v (%v): want v2 repeated at %d", cur, err, wm+1)
	}
	if doc := documentOf(t, p, v1.FileID); !doc.labels.readAt.Equal(change.Access.ReadAt) || doc.fileVersionID != v2.FileVersionID {
		t.Errorf("document %+v: want v2, access read at %s", doc, change.Access.ReadAt)
	}

	mustChange(t, w, change, Duplicate)
	mustChange(t, w, accessChange(v2, t0.Add(30*time.Second), "old"), Stale)
	mustApply(t, w, v2, Duplicate) // its Version is found by id, not confused with the change's
	mustApply(t, w, v1, Stale)
	if got := watermark(t, w, p); got != wm+1 {
		t.Fatalf("watermark %d: a duplicate or stale event committed", got)
	}
	wantReaders(t, wv, p, v1.FileID, []string{"legal"}, counts)

	// Back to the whole project.
	mustChange(t, w, accessChange(v2, t0.Add(2*time.Minute)), Applied)
	counts[schema.VersionClass] = 4
	wantReaders(t, wv, p, v1.FileID, []string{access.Everyone}, counts)
}

// TestFileVersionOlderThanAccessChange: a file version whose groups were
// read before an applied access change takes the change's readers; a
// version read after it has its own.
func TestFileVersionOlderThanAccessChange(t *testing.T) {
	w, wv := newWriter(t)
	const p = "acl-order"
	t0 := time.Now().UTC()
	v1 := withAccess(version(p, "doc.md", "e1", "10", "one"), t0, "eng")
	mustApply(t, w, v1, Applied)
	mustVectors(t, w, vectorsOf(v1, testModel, 3))
	mustChange(t, w, accessChange(v1, t0.Add(2*time.Second), "legal"), Applied)
	// v2 was fetched (with the old groups) before the tag change, committed after it.
	v2 := withAccess(version(p, "doc.md", "e2", "20", "two", "three"), t0.Add(time.Second), "eng")
	mustApply(t, w, v2, Applied)
	mustVectors(t, w, vectorsOf(v2, testModel, 3))
	wantReaders(t, wv, p, v1.FileID, []string{"legal"}, nil)
	if doc := documentOf(t, p, v1.FileID); !doc.labels.readAt.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("document access read at %s, want the change's", doc.labels.readAt)
	}
	v3 := withAccess(version(p, "doc.md", "e3", "30", "four"), t0.Add(3*time.Second), "ops")
	mustApply(t, w, v3, Applied)
	for id, o := range fileObjects(t, wv, schema.ChunkClass, p, v1.FileID) {
		want := []string{"legal"}
		if wvquery.Str(o, "file_version_id") == v3.FileVersionID {
			want = []string{"ops"}
		}
		if got := wvquery.Strs(o, schema.ReadersProperty); !slices.Equal(got, want) {
			t.Errorf("chunk %s: readers %q, want %q", id, got, want)
		}
	}
}

// TestGarbageCollectionAfterAccessChange: the Version an access change
// commits repeats the visible file version; garbage collection takes both
// Versions as one version and keeps its chunks while it is the latest.
func TestGarbageCollectionAfterAccessChange(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const p = "acl-gc"
	t0 := time.Now().UTC()
	only := withAccess(version(p, "only.md", "o1", "10", "kept", "also kept"), t0, "eng")
	v1 := withAccess(version(p, "doc.md", "e1", "11", "old"), t0, "eng")
	v2 := withAccess(version(p, "doc.md", "e2", "20", "new one", "new two"), t0, "eng")
	for _, fv := range []pipeline.FileVersion{only, v1, v2} {
		mustApply(t, w, fv, Applied)
		mustVectors(t, w, vectorsOf(fv, testModel, 3))
	}
	mustChange(t, w, accessChange(only, t0.Add(time.Minute), "legal"), Applied)
	mustChange(t, w, accessChange(v2, t0.Add(time.Minute), "legal"), Applied)
	deleted, err := w.CollectGarbage(ctx, p, 0)
	if err != nil || deleted != 1 {
		t.Fatalf("gc deleted %d (%v), want v1 only", deleted, err)
	}
	if n := chunkCount(t, wv, p, v1.FileVersionID); n != 0 {
		t.Errorf("gc kept %d chunks of the superseded v1", n)
	}
	for _, fv := range []pipeline.FileVersion{only, v2} {
		if n := chunkCount(t, wv, p, fv.FileVersionID); n != len(fv.Chunks) {
			t.Errorf("%s: gc left %d of its %d chunks", fv.Object.Path, n, len(fv.Chunks))
		}
		if got := visible(t, wv, p, fv.FileID, watermark(t, w, p)); got[fv.FileVersionID] != len(fv.Chunks) {
			t.Errorf("%s: visible %v after gc", fv.Object.Path, got)
		}
		wantReaders(t, wv, p, fv.FileID, []string{"legal"}, map[string]int{schema.VersionClass: 2, schema.ChunkVectorClass: len(fv.Chunks)})
	}
	mustApply(t, w, v2, Duplicate)
	if deleted, err := w.CollectGarbage(ctx, p, 0); err != nil || deleted != 0 {
		t.Fatalf("second gc deleted %d (%v)", deleted, err)
	}

	// Superseded, the repeated version goes whole: both its Versions.
	v3 := withAccess(version(p, "doc.md", "e3", "30", "newest"), t0.Add(2*time.Minute), "legal")
	mustApply(t, w, v3, Applied)
	if deleted, err := w.CollectGarbage(ctx, p, 0); err != nil || deleted != 1 {
		t.Fatalf("gc after v3 deleted %d (%v), want v2", deleted, err)
	}
	for id, o := range fileObjects(t, wv, schema.VersionClass, p, v2.FileID) {
		if wvquery.Str(o, "file_version_id") != v3.FileVersionID {
			t.Errorf("gc left Version %s of %s", id, wvquery.Str(o, "file_version_id"))
		}
	}
}

// TestAccessChangeOfAbsentOrDeletedFile: a change of a file without a
// document does nothing; a deleted file's objects take the new readers
// (a release may show it) but no Version is committed.
func TestAccessChangeOfAbsentOrDeletedFile(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const p = "acl-deleted"
	t0 := time.Now().UTC()
	v1 := withAccess(version(p, "gone.md", "e1", "10", "one", "two"), t0, "eng")
	mustChange(t, w, accessChange(v1, t0), Absent)
	mustApply(t, w, v1, Applied)
	mustVectors(t, w, vectorsOf(v1, testModel, 3))
	if out, err := w.ApplyDelete(ctx, deletion(p, "gone.md", "20")); err != nil || out != Applied {
		t.Fatalf("delete: %v %v", out, err)
	}
	wm := watermark(t, w, p)
	mustChange(t, w, accessChange(v1, t0.Add(time.Minute), "legal"), Applied)
	if got := watermark(t, w, p); got != wm {
		t.Errorf("watermark %d after the change of a deleted file, want %d", got, wm)
	}
	wantReaders(t, wv, p, v1.FileID, []string{"legal"}, map[string]int{schema.VersionClass: 2, schema.ChunkClass: 2})
	if doc := documentOf(t, p, v1.FileID); !doc.deleted {
		t.Errorf("the change revived the tombstone: %+v", doc)
	}
}

// TestInterruptedAccessChangeIsFinished: a change cut short before its
// commit is published leaves the document's read time as it was, so its
// redelivery applies it again and commits one Version.
func TestInterruptedAccessChangeIsFinished(t *testing.T) {
	w, wv := newWriter(t)
	const p = "acl-crash"
	t0 := time.Now().UTC()
	v1 := withAccess(version(p, "doc.md", "e1", "10", "one", "two"), t0, "eng")
	mustApply(t, w, v1, Applied)
	mustVectors(t, w, vectorsOf(v1, testModel, 3))
	wm := watermark(t, w, p)
	change := accessChange(v1, t0.Add(time.Minute), "legal")
	w.publishHook = func() error { return fmt.Errorf("simulated crash") }
	_, err := w.ApplyAccessChange(context.Background(), change)
	w.publishHook = nil
	if err == nil {
		t.Fatal("the simulated crash did not happen")
	}
	if doc := documentOf(t, p, v1.FileID); !slices.Equal(doc.labels.readers, []string{"eng"}) || !doc.labels.readAt.Equal(t0) {
		t.Fatalf("document after the crash: %+v, want the old access", doc)
	}
	mustChange(t, w, change, Applied)
	if got := watermark(t, w, p); got != wm+1 {
		t.Errorf("watermark %d, want %d", got, wm+1)
	}
	wantReaders(t, wv, p, v1.FileID, []string{"legal"}, map[string]int{schema.VersionClass: 2})
}

// TestAccessChangePagesByID: a file with more objects than a page takes the
// change on every one of them (keyset paging by id, as offsets stop at 10,000).
func TestAccessChangePagesByID(t *testing.T) {
	w, wv := newWriter(t)
	defer func(n int) { mergePage = n }(mergePage)
	mergePage = 3
	const p = "acl-paging"
	t0 := time.Now().UTC()
	contents := func(v int) []string {
		out := make([]string, 10)
		for i := range out {
			out[i] = fmt.Sprintf("version %d chunk %d", v, i)
		}
		return out
	}
	for v := 1; v <= 2; v++ {
		fv := withAccess(version(p, "big.md", fmt.Sprintf("e%d", v), fmt.Sprintf("%d", v*10), contents(v)...), t0, "eng")
		mustApply(t, w, fv, Applied)
		mustVectors(t, w, vectorsOf(fv, testModel, 3))
	}
	fileID := ids.File(p, "", "big.md")
	mustChange(t, w, pipeline.TagsChanged{Object: pipeline.Object{Project: p, Path: "big.md"}, FileID: fileID,
		Access: pipeline.Access{Groups: []string{"legal"}, ReadAt: t0.Add(time.Minute)}}, Applied)
	wantReaders(t, wv, p, fileID, []string{"legal"}, map[string]int{schema.ChunkClass: 20, schema.ChunkVectorClass: 20, schema.VersionClass: 3})
}

// TestAccessChangeTime measures an access change of a 200-chunk file with
// its vectors (a log line, not an assertion).
func TestAccessChangeTime(t *testing.T) {
	w, wv := newWriter(t)
	const p = "acl-time"
	t0 := time.Now().UTC()
	contents := make([]string, 200)
	for i := range contents {
		contents[i] = fmt.Sprintf("chunk %d of a long document about access control", i)
	}
	fv := withAccess(version(p, "long.md", "e1", "10", contents...), t0, "eng")
	mustApply(t, w, fv, Applied)
	mustVectors(t, w, vectorsOf(fv, testModel+"-384", 384))
	start := time.Now()
	mustChange(t, w, accessChange(fv, t0.Add(time.Minute), "legal"), Applied)
	took := time.Since(start)
	start = time.Now()
	mustChange(t, w, accessChange(fv, t0.Add(2*time.Minute), "legal"), Applied) // same groups: nothing to merge
	same := time.Since(start)
	wantReaders(t, wv, p, fv.FileID, []string{"legal"}, map[string]int{schema.ChunkClass: 200, schema.ChunkVectorClass: 200})
	t.Logf("access change of a 200-chunk file (200 chunks, 200 vectors, 1 section, 1 version): %s; again with the same groups: %s",
		took.Round(time.Millisecond), same.Round(time.Millisecond))
}

// TestEnsureVectorSpaceAddsReaders: an older ChunkVector collection gets the
// field-tokenized readers property (not one auto-schema would make on the
// first write). It replaces the shared ChunkVector collection.
func TestEnsureVectorSpaceAddsReaders(t *testing.T) {
	_, wv := newWriter(t)
	ctx := context.Background()
	if err := wv.Schema().ClassDeleter().WithClassName(schema.ChunkVectorClass).Do(ctx); err != nil {
		t.Fatal(err)
	}
	old := &models.Class{Class: schema.ChunkVectorClass, MultiTenancyConfig: &models.MultiTenancyConfig{Enabled: true},
		VectorConfig: map[string]models.VectorConfig{schema.VectorName("old"): {Vectorizer: map[string]any{"none": map[string]any{}}, VectorIndexType: "hnsw"}}}
	for _, name := range []string{"chunk_id", "file_id", "file_version_id", "file_path", "branch", "model", "source_checksum"} {
		old.Properties = append(old.Properties, &models.Property{Name: name, DataType: []string{"text"}, Tokenization: "field"})
	}
	if err := wv.Schema().ClassCreator().WithClass(old).Do(ctx); err != nil {
		t.Fatal(err)
	}
	if err := schema.EnsureVectorSpace(ctx, wv, testModel, 1); err != nil {
		t.Fatal(err)
	}
	have, err := wv.Schema().ClassGetter().WithClassName(schema.ChunkVectorClass).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var readers *models.Property
	for _, p := range have.Properties {
		if p.Name == schema.ReadersProperty {
			readers = p
		}
	}
	if readers == nil || readers.Tokenization != "field" || !slices.Equal(readers.DataType, []string{"text[]"}) {
		t.Fatalf("readers property %+v, want field-tokenized text[]", readers)
	}
	if _, ok := have.VectorConfig[schema.VectorName(testModel)]; !ok {
		t.Fatal("the model's named vector was not added")
	}
}

// TestSkipAccess: which access changes have nothing to do.
func TestSkipAccess(t *testing.T) {
	t0 := time.Now()
	doc := current{exists: true, labels: labels{readers: []string{"eng"}, readAt: t0}}
	for _, c := range []struct {
		doc  current
		at   time.Time
		out  Outcome
		skip bool
	}{
		{current{}, t0, Absent, true},
		{doc, t0.Add(-time.Nanosecond), Stale, true},
		{doc, t0, Duplicate, true},
		{doc, t0.Add(time.Nanosecond), "", false},
		{current{exists: true}, t0, "", false}, // written before access existed
	} {
		out, skip := skipAccess(c.doc, labels{readAt: c.at})
		if out != c.out || skip != c.skip {
			t.Errorf("doc read at %s, change at %s: %q %v, want %q %v", c.doc.labels.readAt, c.at, out, skip, c.out, c.skip)
		}
	}
	if a := doc.labelsFor(pipeline.FileVersion{Access: pipeline.Access{Groups: []string{"ops"}, ReadAt: t0.Add(-time.Second)}}); !slices.Equal(a.readers, []string{"eng"}) {
		t.Errorf("an older read took %q over the document's", a.readers)
	}
	if a := doc.labelsFor(pipeline.FileVersion{Access: pipeline.Access{Groups: []string{"ops"}, ReadAt: t0.Add(time.Second)}}); !slices.Equal(a.readers, []string{"ops"}) {
		t.Errorf("a newer read got %q", a.readers)
	}
	if a := deletedLabels(current{}); !slices.Equal(a.readers, []string{access.Nobody}) {
		t.Errorf("delete of an unknown file readable by %q", a.readers)
	}
}

// TestVersionRuns: consecutive Versions of one file version are one run.
func TestVersionRuns(t *testing.T) {
	vs := []gcVersion{{id: "a", from: 1}, {id: "a", from: 3}, {id: "b", from: 4}, {id: "c", from: 5}, {id: "c", from: 6}, {id: "c", from: 7}}
	if got := versionRuns(vs); !slices.Equal(got, []int{0, 2, 3}) {
		t.Fatalf("runs %v", got)
	}
	back := []gcVersion{{id: "a", from: 1}, {id: "b", from: 2}, {id: "a", from: 3}}
	if runs := versionRuns(back); !laterRun(back, runs, 0) || laterRun(back, runs, 1) {
		t.Fatal("a file version visible again later must be kept")
	}
}

// TestAccessPropertiesAreDeclared: every property an access change and a
// commit write is in the schema (auto-schema would invent the others).
func TestAccessPropertiesAreDeclared(t *testing.T) {
	declared := map[string]map[string]bool{}
	for _, c := range schema.Definitions() {
		declared[c.Class] = map[string]bool{}
		for _, p := range c.Properties {
			declared[c.Class][p.Name] = true
		}
	}
	fv := withAccess(version("declared", "a.md", "e1", "01", "one"), time.Now(), "eng")
	a := labelsOf(fv)
	objs := append(versionObjects(fv, a, 3, "2026-11-25T00:00:00Z", termsOf(fv)), fileDocument(fv, a, 3, "2026-11-25T00:00:00Z"))
	visible := map[string]any{"file_id": fv.FileID, "file_version_id": fv.FileVersionID, "chunk_count": float64(1), "deleted": false}
	objs = append(objs, accessVersion("declared", visible, a, 4, "2026-11-25T00:00:00Z"))
	for _, o := range objs {
		for k := range o.Properties.(map[string]any) {
			if !declared[o.Class][k] {
				t.Errorf("%s property %q is not in the schema", o.Class, k)
			}
		}
		if r := o.Properties.(map[string]any)[schema.ReadersProperty]; !slices.Equal(r.([]string), []string{"eng"}) {
			t.Errorf("%s readers %v", o.Class, r)
		}
	}
	if n := objs[len(objs)-1].Properties.(map[string]any)["chunk_count"]; n != int64(1) {
		t.Errorf("access version chunk_count %#v, want int64(1)", n)
	}
}
