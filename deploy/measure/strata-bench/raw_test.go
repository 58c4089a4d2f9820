package main

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/indexer/index"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
	"github.com/strata-kb/strata/shared/wvquery"
)

func TestMain(m *testing.M) {
	code := m.Run()
	serverstest.StopShared()
	os.Exit(code)
}

// TestRawWriteStoresObjectsButPublishesNothing: the raw write path stores
// what a commit and its vectors store, and publishes nothing: the
// watermark and the file's visible version stay as they were.
func TestRawWriteStoresObjectsButPublishesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real weaviate-server; skipped with -short")
	}
	ctx := context.Background()
	st := serverstest.StartShared(t)
	wv, err := schema.NewClient(st.WeaviateHost, st.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Ensure(ctx, wv); err != nil {
		t.Fatal(err)
	}
	nc, js, err := pipeline.Connect(st.NATSURL, "raw-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	seqs, err := index.OpenSequences(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := index.New(index.Config{Weaviate: wv, Sequences: seqs, Log: slog.New(slog.DiscardHandler)}) // reads the watermark
	r := newRawWriterTo(wv, 2)

	const project = "raw"
	fv := rawVersion(project, "a.md", "0001", "one", "two", "three")
	v := pipeline.Vectors{Object: fv.Object, Project: project, FileID: fv.FileID, FileVersionID: fv.FileVersionID, Model: "tiny", Dimensions: 2}
	for _, c := range fv.Chunks {
		v.Chunks = append(v.Chunks, pipeline.ChunkVector{ChunkID: c.ID, SourceChecksum: c.SourceChecksum, Vector: []float32{0.6, 0.8}})
	}
	if err := r.write(ctx, fv, v); err != nil {
		t.Fatal(err)
	}
	if n := countWhere(t, wv, schema.ChunkClass, project, eq("file_version_id", fv.FileVersionID)); n != 3 {
		t.Fatalf("%d chunks stored, want 3", n)
	}
	got, err := wv.Data().ObjectsGetter().WithClassName(schema.ChunkVectorClass).WithTenant(project).
		WithID(ids.ChunkVector(fv.Chunks[1].ID, "tiny")).WithVector().Do(ctx)
	if err != nil || len(got) != 1 || len(got[0].Vectors[schema.VectorName("tiny")]) != 2 {
		t.Fatalf("vector object of chunk 1: %v, %v", got, err)
	}
	wm, err := w.Watermark(ctx, project)
	if err != nil || wm != 0 {
		t.Fatalf("watermark %d (%v) after a raw write, want 0", wm, err)
	}
	if n := countWhere(t, wv, schema.VersionClass, project, wvquery.And(eq("file_id", fv.FileID),
		intOp("valid_from", filters.LessThanEqual, wm))); n != 0 {
		t.Fatalf("%d versions visible at the watermark, want none", n)
	}

	bad := v
	bad.Chunks = []pipeline.ChunkVector{{ChunkID: fv.Chunks[0].ID, Vector: nil}}
	other := rawVersion(project, "b.md", "0002", "x")
	if err := r.write(ctx, other, bad); err == nil {
		t.Fatal("vectors without values were accepted")
	}
	if n := countWhere(t, wv, schema.ChunkClass, project, eq("file_version_id", other.FileVersionID)); n != 0 {
		t.Fatalf("%d chunks stored with refused vectors, want none", n)
	}
}

// rawVersion is a file version of project with one section and a chunk per content.
func rawVersion(project, path, sequencer string, contents ...string) pipeline.FileVersion {
	fileID := ids.File(project, "", path)
	fv := pipeline.FileVersion{
		Object:        pipeline.Object{Bucket: "b", Key: project + "/" + path, Project: project, Path: path, ETag: "e1", Sequencer: sequencer},
		FileID:        fileID,
		FileVersionID: ids.FileVersion(fileID, "e1@"+sequencer, "sum-e1"),
		Status:        pipeline.StatusIndexed, Format: "text", IngestedAt: time.Now(),
	}
	sec := ids.Section(fv.FileVersionID, 0)
	fv.Sections = []pipeline.Section{{ID: sec, Title: path, ChunkCount: len(contents)}}
	for i, c := range contents {
		fv.Chunks = append(fv.Chunks, pipeline.Chunk{ID: ids.Chunk(fv.FileVersionID, i), Index: i, SectionID: sec, Content: c,
			StartOffset: i * 10, EndOffset: i*10 + len(c), TokenCount: 1, SourceChecksum: "x"})
	}
	return fv
}

// countWhere counts the objects of class in project's tenant that where matches.
func countWhere(t *testing.T, wv *weaviate.Client, class, project string, where *filters.WhereBuilder) int {
	t.Helper()
	resp, err := wv.GraphQL().Get().WithClassName(class).WithTenant(project).WithFields(graphql.Field{Name: "file_id"}).
		WithWhere(where).WithLimit(10000).Do(context.Background())
	if err != nil {
		t.Fatalf("count %s: %v", class, err)
	}
	if len(resp.Errors) > 0 {
		t.Fatalf("count %s: %s", class, resp.Errors[0].Message)
	}
	return len(resp.Data["Get"].(map[string]any)[class].([]any))
}
