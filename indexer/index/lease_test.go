package index

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// TestTwoIndexersShareAProject runs two Writers, as two indexer replicas
// would be, over one project: events of the same files (several versions
// each, shuffled) go to both at once. With commit leases every commit gets
// its own sequence, the watermark counts them exactly, and each file ends at
// its newest version.
func TestTwoIndexersShareAProject(t *testing.T) {
	_, wv := newWriter(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var writers []*Writer
	for _, holder := range []string{"indexer-a", "indexer-b"} {
		leases, err := OpenLeases(ctx, sharedJS, 1, holder, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		w := New(Config{Weaviate: wv, Sequences: sharedSeqs, Log: log})
		w.SetCommitLocks(leases)
		writers = append(writers, w)
	}
	const project, files, versions = "replicas", 12, 3
	var events []pipeline.FileVersion
	for f := range files {
		for v := range versions {
			path := fmt.Sprintf("f%02d.md", f)
			events = append(events, version(project, path, fmt.Sprintf("e%d", v), fmt.Sprintf("%016X", 100+v), fmt.Sprintf("%s version %d", path, v)))
		}
	}
	rand.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	var applied atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, len(events))
	for g := range 4 {
		w := writers[g%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(events); i += 4 {
				out, err := w.ApplyFileVersion(ctx, events[i])
				if err != nil {
					errs <- err
					return
				}
				if out == Applied {
					applied.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wm := watermark(t, writers[0], project)
	// A commit may hold several versions (group commit), but each sequence
	// is one commit of one replica: the replicas' commits add up to it.
	if commits := writers[0].Commits() + writers[1].Commits(); wm != commits || applied.Load() < commits {
		t.Fatalf("watermark %d, but the replicas made %d commits of %d versions: two replicas committed one sequence", wm, commits, applied.Load())
	}
	resp, err := wv.GraphQL().Get().WithClassName(schema.VersionClass).WithTenant(project).
		WithFields(graphql.Field{Name: "valid_from"}).WithLimit(10000).Do(ctx)
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("versions: %v %v", err, resp.Errors)
	}
	seen := map[int64]bool{}
	for _, r := range resp.Data["Get"].(map[string]any)[schema.VersionClass].([]any) {
		from := int64(wvquery.Float(r.(map[string]any), "valid_from"))
		if from < 1 || from > wm {
			t.Fatalf("sequence %d outside 1..%d", from, wm)
		}
		seen[from] = true
	}
	if len(seen) != int(wm) {
		t.Fatalf("versions use %d of the sequences 1..%d: a published sequence holds nothing", len(seen), wm)
	}
	for f := range files {
		path := fmt.Sprintf("f%02d.md", f)
		newest := version(project, path, fmt.Sprintf("e%d", versions-1), fmt.Sprintf("%016X", 100+versions-1))
		if got := visible(t, wv, project, newest.FileID, wm); got[newest.FileVersionID] != 1 || len(got) != 1 {
			t.Fatalf("%s: visible %v, want its newest version %s", path, got, newest.FileVersionID)
		}
	}
}

// TestLeaseIsExclusiveAndExpires: a second holder waits while the first
// holds the lease, gets it once released, and a holder that vanished
// without releasing frees the lease after its TTL.
func TestLeaseIsExclusiveAndExpires(t *testing.T) {
	newWriter(t) // starts the shared servers
	ctx := context.Background()
	a, err := OpenLeases(ctx, sharedJS, 1, "a", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := OpenLeases(ctx, sharedJS, 1, "b", 3*time.Second)
	release, until, err := a.Acquire(ctx, "lease-test")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	if _, _, err := b.Acquire(short, "lease-test"); err == nil {
		t.Fatal("a second holder got a held lease")
	}
	cancel()
	time.Sleep(2500 * time.Millisecond) // past the TTL: renewals keep it
	if u := until(); !time.Now().Before(u) {
		t.Fatalf("a renewed lease is sure only until %v", u)
	}
	release()
	releaseB, _, err := b.Acquire(ctx, "lease-test")
	if err != nil {
		t.Fatal(err)
	}
	releaseB()
	// A holder that crashed: its entry is written once and never renewed.
	kv, err := sharedJS.KeyValue(ctx, LocksBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "lease-test", []byte("crashed")); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	release, _, err = a.Acquire(ctx, "lease-test")
	if err != nil {
		t.Fatal(err)
	}
	release()
	if waited := time.Since(started); waited < 2*time.Second {
		t.Fatalf("the crashed holder's lease was taken after %v, before its TTL", waited)
	}
}
