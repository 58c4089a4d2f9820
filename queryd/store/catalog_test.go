package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// committedLog is a project's Versions as the indexer would have written
// them, with a gate that can hold loads back.
type committedLog struct {
	mu    sync.Mutex
	vs    map[string][]Version
	loads int
	gate  chan struct{} // when non-nil, each load waits for a receive
	fail  int           // the next fail loads return an error
}

func (l *committedLog) load(ctx context.Context, project string, from, to int64) ([]Version, error) {
	l.mu.Lock()
	gate := l.gate
	l.loads++
	if l.fail > 0 {
		l.fail--
		l.mu.Unlock()
		return nil, fmt.Errorf("weaviate unavailable")
	}
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Version
	for _, v := range l.vs[project] {
		if v.ValidFrom > from && v.ValidFrom <= to {
			out = append(out, v)
		}
	}
	return out, nil
}

func (l *committedLog) commit(project, path string, seq int64, status string, chunks int, deleted bool) Version {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.vs == nil {
		l.vs = map[string][]Version{}
	}
	v := Version{FileID: ids.File(project, "", path), FilePath: path, FileVersionID: fmt.Sprintf("%s-v%d", path, seq),
		Status: status, ChunkCount: chunks, Deleted: deleted, ValidFrom: seq}
	l.vs[project] = append(l.vs[project], v)
	return v
}

func publishSeq(t *testing.T, kv jetstream.KeyValue, project string, seq int64) {
	t.Helper()
	if _, err := kv.Put(context.Background(), project, binary.BigEndian.AppendUint64(nil, uint64(seq))); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newTestCatalog(log *committedLog) *Catalog {
	return &Catalog{load: log.load, log: slog.New(slog.DiscardHandler), byKey: map[string]*projectCatalog{},
		marks: map[string]map[string]map[string]bool{}}
}

func markEmbedded(t *testing.T, kv jetstream.KeyValue, project, fileVersionID, model string, chunks int) {
	t.Helper()
	val, _ := json.Marshal(pipeline.EmbeddedMark{Project: project, FileVersionID: fileVersionID, Model: model, Chunks: chunks})
	if _, err := kv.Put(context.Background(), pipeline.EmbeddedKey(project, fileVersionID, model), val); err != nil {
		t.Fatal(err)
	}
}

func startCatalog(t *testing.T, log *committedLog) (*Catalog, jetstream.KeyValue) {
	t.Helper()
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "catalog-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: pipeline.CommitsBucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestCatalog(log)
	if _, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: pipeline.EmbeddedBucket, History: 1}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Watch(ctx, js) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, kv
}

// TestCatalogFollowsCommits: versions, watermarks and counts follow the
// published sequences, including what was published before the catalog
// started, a replacement and a delete.
func TestCatalogFollowsCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	log := &committedLog{}
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "catalog-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: pipeline.CommitsBucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	a1 := log.commit("acme", "a.md", 1, pipeline.StatusIndexed, 3, false)
	log.commit("acme", "b.pdf", 2, pipeline.StatusFailed, 0, false)
	publishSeq(t, kv, "acme", 2) // before the catalog starts

	marks, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: pipeline.EmbeddedBucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	markEmbedded(t, marks, "acme", a1.FileVersionID, "m1", 3)
	c := newTestCatalog(log)
	if c.Ready() || c.Loaded() {
		t.Fatal("ready before watching")
	}
	ctx, cancel := context.WithCancel(access.System(context.Background()))
	defer cancel()
	go func() { _ = c.Watch(ctx, js) }()
	waitFor(t, "ready", c.Ready)
	if !c.Loaded() {
		t.Fatal("ready but not loaded")
	}
	if wm, ok := c.Watermark("acme"); !ok || wm != 2 {
		t.Fatalf("watermark %d %v", wm, ok)
	}
	if st, _ := c.Stats(ctx, "acme"); st != (Stats{Indexed: 1, Failed: 1, Chunks: 3}) {
		t.Fatalf("stats %+v", st)
	}
	if n, _ := c.Embedded(ctx, "acme", "m1"); n != 3 {
		t.Fatalf("embedded with m1: %d", n)
	}

	a3 := log.commit("acme", "a.md", 3, pipeline.StatusIndexed, 5, false)
	log.commit("acme", "b.pdf", 4, "deleted", 0, true)
	// An unpublished commit (5) is in the index but not visible.
	log.commit("acme", "c.md", 5, pipeline.StatusIndexed, 7, false)
	publishSeq(t, kv, "acme", 4)
	waitFor(t, "watermark 4", func() bool { wm, _ := c.Watermark("acme"); return wm == 4 })
	if st, _ := c.Stats(ctx, "acme"); st != (Stats{Indexed: 1, Chunks: 5}) {
		t.Fatalf("stats after replace and delete %+v", st)
	}
	if n, _ := c.Embedded(ctx, "acme", "m1"); n != 0 {
		t.Fatalf("the replaced version's vectors still counted: %d", n)
	}
	// Vectors of the new version land after its commit, twice (a replay),
	// and the unpublished version's before its commit.
	markEmbedded(t, marks, "acme", a3.FileVersionID, "m1", 5)
	markEmbedded(t, marks, "acme", a3.FileVersionID, "m1", 5)
	markEmbedded(t, marks, "acme", "c.md-v5", "m1", 7)
	markEmbedded(t, marks, "acme", a3.FileVersionID, "m2", 5)
	waitFor(t, "embedded 5", func() bool { n, _ := c.Embedded(ctx, "acme", "m1"); return n == 5 })
	waitFor(t, "embedded m2 5", func() bool { n, _ := c.Embedded(ctx, "acme", "m2"); return n == 5 })
	publishSeq(t, kv, "acme", 5)
	waitFor(t, "embedded 12 once c.md is committed", func() bool { n, _ := c.Embedded(ctx, "acme", "m1"); return n == 12 })
	fa := ids.File("acme", "", "a.md")
	if v := c.visibleAt(ctx, "acme", fa, 2); v == nil || v.FileVersionID != a1.FileVersionID {
		t.Fatalf("a.md as of 2: %+v", v)
	}
	if v := c.visibleAt(ctx, "acme", fa, 4); v == nil || v.FileVersionID != a3.FileVersionID {
		t.Fatalf("a.md as of 4: %+v", v)
	}
	if v := c.visibleAt(ctx, "acme", ids.File("acme", "", "c.md"), 4); v != nil {
		t.Fatalf("unpublished c.md visible: %+v", v)
	}
	if c.covers("acme", 6) || !c.covers("acme", 5) || c.covers("beta", 1) {
		t.Fatal("covers must stop at the watermark and at unknown projects")
	}
	if got := c.Projects(); len(got) != 1 || got[0] != "acme" {
		t.Fatalf("projects %v", got)
	}
}

// TestCatalogAdvancesOnlyAfterLoading: while a commit's versions are being
// loaded, readers keep the previous watermark, so they never see a sequence
// whose versions are missing; a failed load is retried without a new commit.
func TestCatalogAdvancesOnlyAfterLoading(t *testing.T) {
	ctx := access.System(context.Background())
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	log := &committedLog{}
	c, kv := startCatalog(t, log)
	log.commit("acme", "a.md", 1, pipeline.StatusIndexed, 2, false)
	publishSeq(t, kv, "acme", 1)
	waitFor(t, "watermark 1", func() bool { wm, _ := c.Watermark("acme"); return wm == 1 })

	gate := make(chan struct{})
	log.mu.Lock()
	log.gate = gate
	log.mu.Unlock()
	log.mu.Lock()
	loads := log.loads
	log.mu.Unlock()
	log.commit("acme", "b.md", 2, pipeline.StatusIndexed, 4, false)
	publishSeq(t, kv, "acme", 2)
	waitFor(t, "the load of sequence 2 held at the gate", func() bool { log.mu.Lock(); defer log.mu.Unlock(); return log.loads > loads })
	if wm, _ := c.Watermark("acme"); wm != 1 {
		t.Fatalf("watermark advanced to %d before its versions were loaded", wm)
	}
	if v := c.visibleAt(ctx, "acme", ids.File("acme", "", "b.md"), 1); v != nil {
		t.Fatal("b.md visible as of 1")
	}
	gate <- struct{}{}
	waitFor(t, "watermark 2", func() bool { wm, _ := c.Watermark("acme"); return wm == 2 })

	log.mu.Lock()
	log.gate, log.fail = nil, 2
	log.mu.Unlock()
	log.commit("acme", "c.md", 3, pipeline.StatusUnsupported, 0, false)
	publishSeq(t, kv, "acme", 3)
	waitFor(t, "watermark 3 after failed loads", func() bool { wm, _ := c.Watermark("acme"); return wm == 3 })
	if st, _ := c.Stats(ctx, "acme"); st != (Stats{Indexed: 2, Unsupported: 1, Chunks: 6}) {
		t.Fatalf("stats %+v", st)
	}
}

// TestCatalogLoadedOutlivesAWatchRestart: Loaded turns true with the first
// Ready and stays true while a broken watch makes the catalog unready
// (Watch and watchMarks clear these flags when their watch ends).
func TestCatalogLoadedOutlivesAWatchRestart(t *testing.T) {
	c := newTestCatalog(&committedLog{})
	c.ready.Store(true)
	if c.Loaded() {
		t.Fatal("loaded before the embedded marks are")
	}
	c.marksReady.Store(true)
	if !c.Loaded() {
		t.Fatal("ready but not loaded")
	}
	c.ready.Store(false)
	if c.Ready() || !c.Loaded() {
		t.Fatalf("after the watch broke: ready %v, loaded %v; want false, true", c.Ready(), c.Loaded())
	}
}
