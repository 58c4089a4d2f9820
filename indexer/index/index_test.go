package index

import (
	"context"
	"fmt"
	"github.com/nats-io/nats.go/jetstream"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

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

var (
	sharedOnce   sync.Once
	sharedClient *weaviate.Client
	sharedSeqs   *KVSequences
	sharedJS     jetstream.JetStream
)

// newWriter returns a writer on one Weaviate shared by this package's tests
// (each test uses its own projects).
func newWriter(t *testing.T) (*Writer, *weaviate.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real weaviate-server; skipped with -short")
	}
	sharedOnce.Do(func() {
		st := serverstest.StartShared(t)
		wv, err := schema.NewClient(st.WeaviateHost, st.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Ensure(context.Background(), wv); err != nil {
			t.Fatal(err)
		}
		nc, js, err := pipeline.Connect(st.NATSURL, "index-test", nil)
		if err != nil {
			t.Fatal(err)
		}
		if sharedSeqs, err = OpenSequences(context.Background(), js, 1); err != nil {
			t.Fatal(err)
		}
		_ = nc // lives as long as the test binary
		sharedJS = js
		sharedClient = wv
	})
	if sharedClient == nil {
		t.Fatal("weaviate did not start")
	}
	return New(Config{Weaviate: sharedClient, Sequences: sharedSeqs, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}), sharedClient
}

func version(project, path, etag, sequencer string, contents ...string) pipeline.FileVersion {
	fileID := ids.File(project, "", path)
	fv := pipeline.FileVersion{
		Object:        pipeline.Object{Bucket: "b", Key: project + "/" + path, Project: project, Path: path, ETag: etag, Sequencer: sequencer},
		FileID:        fileID,
		FileVersionID: ids.FileVersion(fileID, etag+"@"+sequencer, "sum-"+etag),
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

func deletion(project, path, sequencer string) pipeline.FileDeleted {
	return pipeline.FileDeleted{Object: pipeline.Object{Project: project, Path: path, Key: project + "/" + path, Sequencer: sequencer},
		FileID: ids.File(project, "", path)}
}

// visible returns the file_version_id -> chunk count of a file as a reader at
// sequence at sees it: the file's latest Version with valid_from <= at, unless
// that is a delete.
func visible(t *testing.T, wv *weaviate.Client, project, fileID string, at int64) map[string]int {
	t.Helper()
	get := func(class string, where *filters.WhereBuilder, fields ...string) []map[string]any {
		var fs []graphql.Field
		for _, f := range fields {
			fs = append(fs, graphql.Field{Name: f})
		}
		resp, err := wv.GraphQL().Get().WithClassName(class).WithTenant(project).WithFields(fs...).WithWhere(where).WithLimit(10000).Do(context.Background())
		if err != nil || len(resp.Errors) > 0 {
			t.Fatalf("query %s: %v %v", class, err, resp.Errors)
		}
		var out []map[string]any
		for _, r := range resp.Data["Get"].(map[string]any)[class].([]any) {
			out = append(out, r.(map[string]any))
		}
		return out
	}
	var latest map[string]any
	for _, v := range get(schema.VersionClass, wvquery.And(textFilter("file_id", fileID), intFilter("valid_from", filters.LessThanEqual, at)), "file_version_id", "valid_from", "deleted") {
		if latest == nil || wvquery.Float(v, "valid_from") > wvquery.Float(latest, "valid_from") {
			latest = v
		}
	}
	out := map[string]int{}
	if latest == nil || latest["deleted"] == true {
		return out
	}
	id := wvquery.Str(latest, "file_version_id")
	for range get(schema.ChunkClass, textFilter("file_version_id", id), "index") {
		out[id]++
	}
	return out
}

func chunkCount(t *testing.T, wv *weaviate.Client, project, versionID string) int {
	t.Helper()
	resp, err := wv.GraphQL().Get().WithClassName(schema.ChunkClass).WithTenant(project).WithFields(graphql.Field{Name: "index"}).
		WithWhere(textFilter("file_version_id", versionID)).WithLimit(10000).Do(context.Background())
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("count chunks: %v %v", err, resp.Errors)
	}
	return len(resp.Data["Get"].(map[string]any)[schema.ChunkClass].([]any))
}

func watermark(t *testing.T, w *Writer, project string) int64 {
	t.Helper()
	wm, err := w.Watermark(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	return wm
}

func TestCommitsOrderingAndTombstones(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "commits"
	v1 := version(p, "docs/a.md", "e1", "0000000000000010", "one", "two", "three")
	v2 := version(p, "docs/a.md", "e2", "0000000000000020", "new one", "new two")
	apply := func(fv pipeline.FileVersion, want Outcome) {
		t.Helper()
		got, err := w.ApplyFileVersion(ctx, fv)
		if err != nil || got != want {
			t.Fatalf("apply %s: %v %v, want %v", fv.Object.ETag, got, err, want)
		}
	}
	only := func(fv string, n int) {
		t.Helper()
		got := visible(t, wv, p, v1.FileID, watermark(t, w, p))
		if len(got) != 1 || got[fv] != n {
			t.Fatalf("visible versions %v, want only %s x%d", got, fv, n)
		}
	}
	apply(v1, Applied)
	only(v1.FileVersionID, 3)
	apply(v2, Applied)
	only(v2.FileVersionID, 2)
	if wm := watermark(t, w, p); wm != 2 {
		t.Fatalf("watermark %d after two commits", wm)
	}
	// The replaced version is still there for reads as of sequence 1.
	if got := visible(t, wv, p, v1.FileID, 1); got[v1.FileVersionID] != 3 || len(got) != 1 {
		t.Fatalf("as of sequence 1: %v", got)
	}

	apply(v1, Stale)     // a late event of the older version changes nothing (its sequencer is older)
	apply(v2, Duplicate) // a replay of the current one neither
	only(v2.FileVersionID, 2)
	if wm := watermark(t, w, p); wm != 2 {
		t.Fatalf("stale and duplicate events must not commit; watermark %d", wm)
	}

	if got, err := w.ApplyDelete(ctx, deletion(p, "docs/a.md", "0000000000000030")); err != nil || got != Applied {
		t.Fatalf("delete: %v %v", got, err)
	}
	if got := visible(t, wv, p, v1.FileID, watermark(t, w, p)); len(got) != 0 {
		t.Fatalf("chunks visible after delete: %v", got)
	}
	apply(v2, Stale) // a replayed upload older than the delete must not resurrect the file
	if got, _ := w.ApplyDelete(ctx, deletion(p, "docs/a.md", "0000000000000030")); got != Duplicate {
		t.Fatalf("duplicate delete: %v", got)
	}
	v3 := version(p, "docs/a.md", "e3", "0000000000000040", "back again")
	apply(v3, Applied) // a newer upload after the delete is a new life of the file
	only(v3.FileVersionID, 1)

	// Re-uploading identical bytes (same ETag) later is a new version with its own history.
	v4 := version(p, "docs/a.md", "e3", "0000000000000050", "back again")
	apply(v4, Applied)
	only(v4.FileVersionID, 1)
	if got := visible(t, wv, p, v1.FileID, watermark(t, w, p)-1); got[v3.FileVersionID] != 1 {
		t.Fatalf("history of the identical earlier upload lost: %v", got)
	}
}

// TestShuffledAndDuplicatedEvents applies one key's events in random orders
// with duplicates: the newest event always wins.
func TestShuffledAndDuplicatedEvents(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	for round := range 4 {
		p := fmt.Sprintf("shuffle%d", round)
		type ev struct {
			put *pipeline.FileVersion
			del *pipeline.FileDeleted
		}
		var evs []ev
		var last pipeline.FileVersion
		for i := 1; i <= 5; i++ {
			fv := version(p, "f.md", fmt.Sprintf("e%d", i), fmt.Sprintf("%016X", i*16), fmt.Sprintf("content %d", i))
			evs = append(evs, ev{put: &fv}, ev{put: &fv}) // every event twice
			last = fv
		}
		deleteLast := round%2 == 1
		if deleteLast {
			d := deletion(p, "f.md", fmt.Sprintf("%016X", 6*16))
			evs = append(evs, ev{del: &d})
		}
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		for _, e := range evs {
			var err error
			if e.put != nil {
				_, err = w.ApplyFileVersion(ctx, *e.put)
			} else {
				_, err = w.ApplyDelete(ctx, *e.del)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		got := visible(t, wv, p, last.FileID, watermark(t, w, p))
		if deleteLast && len(got) != 0 {
			t.Fatalf("round %d: the delete was the newest event, still visible: %v", round, got)
		}
		if !deleteLast && (len(got) != 1 || got[last.FileVersionID] != 1) {
			t.Fatalf("round %d: want only the newest version, got %v", round, got)
		}
	}
}

// TestReleaseReadsThePast pins a release, then overwrites three times and
// deletes: the release still reads exactly what was visible when it was made.
func TestReleaseReadsThePast(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "releases"
	v1 := version(p, "guide.md", "e1", "10", "release one text", "second chunk")
	other := version(p, "other.md", "o1", "11", "other file")
	for _, fv := range []pipeline.FileVersion{v1, other} {
		if _, err := w.ApplyFileVersion(ctx, fv); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := w.CreateRelease(ctx, pipeline.ReleaseRequest{Project: p, Version: "v1.0.0"})
	if err != nil || rel.Sequence != 2 || rel.ReleaseID != ids.Release(p, "", "v1.0.0") {
		t.Fatalf("release %+v %v", rel, err)
	}
	for i := 2; i <= 4; i++ {
		if _, err := w.ApplyFileVersion(ctx, version(p, "guide.md", fmt.Sprintf("e%d", i), fmt.Sprintf("%d", i*10), fmt.Sprintf("overwrite %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.ApplyDelete(ctx, deletion(p, "guide.md", "50")); err != nil {
		t.Fatal(err)
	}
	if got := visible(t, wv, p, v1.FileID, rel.Sequence); len(got) != 1 || got[v1.FileVersionID] != 2 {
		t.Fatalf("release v1.0.0 reads %v, want v1's 2 chunks", got)
	}
	if got := visible(t, wv, p, v1.FileID, watermark(t, w, p)); len(got) != 0 {
		t.Fatalf("latest still shows the deleted file: %v", got)
	}
	if _, err := w.CreateRelease(ctx, pipeline.ReleaseRequest{Project: p, Version: "v1.0.0"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate version: %v", err)
	}
	for _, bad := range []pipeline.ReleaseRequest{{Project: p, Version: ""}, {Project: p, Version: "v 1"}, {Project: "../x", Version: "v1"}, {Project: "nosuchproject", Version: "v1"}} {
		if _, err := w.CreateRelease(ctx, bad); err == nil {
			t.Errorf("release %+v accepted", bad)
		}
	}

	// GC: superseded versions no release pins go; the pinned one stays.
	deleted, err := w.CollectGarbage(ctx, p, 0)
	if err != nil || deleted == 0 {
		t.Fatalf("gc deleted %d: %v", deleted, err)
	}
	if got := visible(t, wv, p, v1.FileID, rel.Sequence); got[v1.FileVersionID] != 2 {
		t.Fatalf("gc removed a pinned version: %v", got)
	}
	if deleted != 3 {
		t.Fatalf("gc deleted %d versions, want the 3 unpinned overwrites", deleted)
	}
	for i := 2; i <= 4; i++ {
		id := version(p, "guide.md", fmt.Sprintf("e%d", i), fmt.Sprintf("%d", i*10)).FileVersionID
		if got := chunkCount(t, wv, p, id); got != 0 {
			t.Fatalf("gc kept %d chunks of unpinned version e%d", got, i)
		}
	}
	if got := visible(t, wv, p, other.FileID, watermark(t, w, p)); got[other.FileVersionID] != 1 {
		t.Fatalf("gc touched a current file: %v", got)
	}
}

// TestAtomicSwitchUnderConcurrentReads overwrites a large file many times
// while readers read at the published watermark: every read sees exactly
// one complete version, never a mix and never nothing.
func TestAtomicSwitchUnderConcurrentReads(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "atomic"
	chunks := func(v int) []string {
		out := make([]string, 120)
		for i := range out {
			out[i] = fmt.Sprintf("version %d chunk %d", v, i)
		}
		return out
	}
	first := version(p, "big.md", "e0", "100", chunks(0)...)
	if _, err := w.ApplyFileVersion(ctx, first); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var reads, bad atomic.Int64
	var wg sync.WaitGroup
	var failure atomic.Value
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				wm, err := w.Watermark(ctx, p)
				if err != nil {
					continue
				}
				got := visible(t, wv, p, first.FileID, wm)
				reads.Add(1)
				if len(got) != 1 {
					bad.Add(1)
					failure.Store(fmt.Sprintf("at %d: %v", wm, got))
					continue
				}
				for _, n := range got {
					if n != 120 {
						bad.Add(1)
						failure.Store(fmt.Sprintf("at %d: %v", wm, got))
					}
				}
			}
		}()
	}
	for v := 1; v <= 6; v++ {
		if _, err := w.ApplyFileVersion(ctx, version(p, "big.md", fmt.Sprintf("e%d", v), fmt.Sprintf("%d", 100+v), chunks(v)...)); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d of %d reads saw a mixed or empty file, e.g. %v", bad.Load(), reads.Load(), failure.Load())
	}
	if reads.Load() < 10 {
		t.Fatalf("only %d reads raced the overwrites", reads.Load())
	}
	t.Logf("%d concurrent reads during 6 overwrites of 120 chunks, all consistent", reads.Load())
}

// TestInterruptedCommitIsRolledBack simulates a crash between writing a
// version and publishing its sequence: the next commit removes the
// unpublished objects and reopens what they had superseded.
func TestInterruptedCommitIsRolledBack(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "rollback"
	v1 := version(p, "a.md", "e1", "10", "first")
	if _, err := w.ApplyFileVersion(ctx, v1); err != nil {
		t.Fatal(err)
	}
	// The crash: v2 written and v1 superseded at sequence 2, never published.
	v2 := version(p, "a.md", "e2", "20", "half written")
	w.publishHook = func() error { return fmt.Errorf("simulated crash") }
	_, err := w.ApplyFileVersion(ctx, v2)
	w.publishHook = nil
	if err == nil {
		t.Fatal("the simulated crash did not happen")
	}
	if got := visible(t, wv, p, v1.FileID, 2); got[v2.FileVersionID] != 1 {
		t.Fatalf("setup: the unpublished version should exist at 2: %v", got)
	}
	if got := visible(t, wv, p, v1.FileID, watermark(t, w, p)); got[v1.FileVersionID] != 1 || len(got) != 1 {
		t.Fatalf("readers must still see v1 only: %v", got)
	}
	other := version(p, "b.md", "b1", "30", "another file")
	if _, err := w.ApplyFileVersion(ctx, other); err != nil {
		t.Fatal(err)
	}
	if got := visible(t, wv, p, v1.FileID, watermark(t, w, p)); got[v1.FileVersionID] != 1 || len(got) != 1 {
		t.Fatalf("after rollback a.md must be v1 again: %v", got)
	}
	// The redelivered v2 then commits normally.
	if out, err := w.ApplyFileVersion(ctx, v2); err != nil || out != Applied {
		t.Fatalf("redelivery: %v %v", out, err)
	}
	if got := visible(t, wv, p, v1.FileID, watermark(t, w, p)); got[v2.FileVersionID] != 1 || len(got) != 1 {
		t.Fatalf("after redelivery: %v", got)
	}
}

// TestCommitCutShortByAnotherProcess: a writer that has committed before
// skips the rollback only while no intent lies above the watermark; a
// commit another process cut short leaves one, and the next commit of
// this writer rolls it back.
func TestCommitCutShortByAnotherProcess(t *testing.T) {
	w1, wv := newWriter(t)
	w2, _ := newWriter(t) // another indexer process on the same stores
	ctx := context.Background()
	p := "rollback-elsewhere"
	v1 := version(p, "a.md", "e1", "10", "first")
	if _, err := w1.ApplyFileVersion(ctx, v1); err != nil {
		t.Fatal(err)
	}
	v2 := version(p, "a.md", "e2", "20", "half written elsewhere")
	w2.publishHook = func() error { return fmt.Errorf("simulated crash") }
	if _, err := w2.ApplyFileVersion(ctx, v2); err == nil {
		t.Fatal("the simulated crash did not happen")
	}
	if got := visible(t, wv, p, v1.FileID, 2); got[v2.FileVersionID] != 1 {
		t.Fatalf("setup: the unpublished version should exist at 2: %v", got)
	}
	other := version(p, "b.md", "b1", "30", "another file")
	if _, err := w1.ApplyFileVersion(ctx, other); err != nil {
		t.Fatal(err)
	}
	if got := visible(t, wv, p, v1.FileID, watermark(t, w1, p)); got[v1.FileVersionID] != 1 || len(got) != 1 {
		t.Fatalf("w1 must have rolled back w2's unpublished version: %v", got)
	}
}
