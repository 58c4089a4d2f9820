package index

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/servers"
	"github.com/strata-kb/strata/shared/servers/serverstest"
)

func newWriter(t *testing.T) (*Writer, *weaviate.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real weaviate-server; skipped with -short")
	}
	st := serverstest.Start(t)
	wv, err := schema.NewClient(st.WeaviateHost, st.WeaviateGRPCHost, servers.LocalWeaviateWriter)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Ensure(context.Background(), wv); err != nil {
		t.Fatal(err)
	}
	return New(wv, slog.New(slog.NewTextHandler(io.Discard, nil))), wv
}

func version(project, path, etag, sequencer string, contents ...string) pipeline.FileVersion {
	fileID := ids.File(project, "", path)
	fv := pipeline.FileVersion{
		Object:        pipeline.Object{Bucket: "b", Key: project + "/" + path, Project: project, Path: path, ETag: etag, Sequencer: sequencer},
		FileID:        fileID,
		FileVersionID: ids.FileVersion(fileID, etag, "sum-"+etag),
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

// versionsOf returns the file_version_id of every stored chunk of a file.
func versionsOf(t *testing.T, wv *weaviate.Client, project, fileID string) map[string]int {
	t.Helper()
	resp, err := wv.GraphQL().Get().WithClassName(schema.ChunkClass).WithTenant(project).
		WithFields(graphql.Field{Name: "file_version_id"}).
		WithWhere(filters.Where().WithPath([]string{"file_id"}).WithOperator(filters.Equal).WithValueText(fileID)).
		WithLimit(1000).Do(context.Background())
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("query chunks: %v %v", err, resp.Errors)
	}
	out := map[string]int{}
	for _, r := range resp.Data["Get"].(map[string]any)[schema.ChunkClass].([]any) {
		out[r.(map[string]any)["file_version_id"].(string)]++
	}
	return out
}

func TestVersionSwitchOrderingAndTombstones(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	v1 := version("acme", "docs/a.md", "e1", "0000000000000010", "one", "two", "three")
	v2 := version("acme", "docs/a.md", "e2", "0000000000000020", "new one", "new two")
	apply := func(fv pipeline.FileVersion, want Outcome) {
		t.Helper()
		got, err := w.ApplyFileVersion(ctx, fv)
		if err != nil || got != want {
			t.Fatalf("apply %s: %v %v, want %v", fv.Object.ETag, got, err, want)
		}
	}
	only := func(fv string, n int) {
		t.Helper()
		got := versionsOf(t, wv, "acme", v1.FileID)
		if len(got) != 1 || got[fv] != n {
			t.Fatalf("stored versions %v, want only %s x%d", got, fv, n)
		}
	}

	apply(v1, Applied)
	only(v1.FileVersionID, 3)
	apply(v2, Applied)
	only(v2.FileVersionID, 2) // the overwrite removed every chunk of v1

	apply(v1, Stale) // a late event of the older version changes nothing
	only(v2.FileVersionID, 2)
	apply(v2, Applied) // a duplicate of the current one is an idempotent upsert
	only(v2.FileVersionID, 2)

	del := pipeline.FileDeleted{Object: pipeline.Object{Project: "acme", Path: "docs/a.md", Key: "acme/docs/a.md", Sequencer: "0000000000000030"}, FileID: v1.FileID}
	if got, err := w.ApplyDelete(ctx, del); err != nil || got != Applied {
		t.Fatalf("delete: %v %v", got, err)
	}
	if got := versionsOf(t, wv, "acme", v1.FileID); len(got) != 0 {
		t.Fatalf("chunks left after delete: %v", got)
	}
	apply(v2, Stale) // a replayed upload older than the delete must not resurrect the file
	if got := versionsOf(t, wv, "acme", v1.FileID); len(got) != 0 {
		t.Fatalf("delete undone by a replay: %v", got)
	}
	if got, err := w.ApplyDelete(ctx, del); err != nil || got != Applied {
		t.Fatalf("duplicate delete: %v %v", got, err)
	}

	v3 := version("acme", "docs/a.md", "e3", "0000000000000040", "back again")
	apply(v3, Applied) // a newer upload after the delete is a new life of the file
	only(v3.FileVersionID, 1)

	// Another project's file with the same path is untouched by all of this.
	other := version("beta", "docs/a.md", "e1", "0000000000000001", "beta")
	apply(other, Applied)
	if got := versionsOf(t, wv, "beta", other.FileID); got[other.FileVersionID] != 1 {
		t.Fatalf("beta: %v", got)
	}
	only(v3.FileVersionID, 1)
}

func TestFailedVersionReplacesOldChunksAndKeepsReason(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	v1 := version("acme", "b.md", "e1", "10", "readable")
	if _, err := w.ApplyFileVersion(ctx, v1); err != nil {
		t.Fatal(err)
	}
	bad := version("acme", "b.md", "e2", "20")
	bad.Status, bad.Error = pipeline.StatusFailed, "binary content"
	if _, err := w.ApplyFileVersion(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if got := versionsOf(t, wv, "acme", v1.FileID); len(got) != 0 {
		t.Fatalf("chunks of the replaced version remain: %v", got)
	}
	objs, err := wv.Data().ObjectsGetter().WithClassName(schema.DocumentClass).WithID(v1.FileID).WithTenant("acme").Do(ctx)
	if err != nil || len(objs) != 1 {
		t.Fatalf("document: %v %v", objs, err)
	}
	props := objs[0].Properties.(map[string]any)
	if props["status"] != pipeline.StatusFailed || props["error"] != "binary content" {
		t.Fatalf("document must carry the failure: %v", props)
	}
}
