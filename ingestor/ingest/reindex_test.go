package ingest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

type fakeLister []ObjectInfo

func (f fakeLister) List(_ context.Context, _, prefix string, fn func(ObjectInfo) error) error {
	for _, o := range f {
		if strings.HasPrefix(o.Key, prefix) {
			if err := fn(o); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f fakeLister) Exists(_ context.Context, _, key string) (bool, error) {
	for _, o := range f {
		if o.Key == key {
			return true, nil
		}
	}
	return false, nil
}

type fakeStateReader map[string]*pipeline.ObjectState

func (f fakeStateReader) Get(_ context.Context, _, key string) (*pipeline.ObjectState, error) {
	return f[key], nil
}

func (f fakeStateReader) List(_ context.Context, _ string, fn func(pipeline.ObjectState) error) error {
	for _, st := range f {
		if err := fn(*st); err != nil {
			return err
		}
	}
	return nil
}

func TestReindex(t *testing.T) {
	modified := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	objects := fakeLister{
		{Key: "acme/docs/a.md", ETag: "e1", LastModified: modified},         // indexed, unchanged
		{Key: "acme/docs/b.md", ETag: "e2-new", LastModified: modified},     // changed since its last event
		{Key: "acme/docs/c.md", ETag: "e3", LastModified: modified},         // never seen (lost notification)
		{Key: "acme/other/d.md", ETag: "e4", LastModified: modified},        // outside the prefix
		{Key: "acme@feature/docs/a.md", ETag: "e5", LastModified: modified}, // another branch
	}
	states := fakeStateReader{
		"acme/docs/a.md": {Key: "acme/docs/a.md", ETag: "e1", State: pipeline.StateIndexed, Sequencer: "FFFFFFFFFFFFFF00"},
		"acme/docs/b.md": {Key: "acme/docs/b.md", ETag: "e2", State: pipeline.StateIndexed, Sequencer: "10"},
		// Gone from the bucket, but its delete notification was lost.
		"acme/docs/gone.md": {Key: "acme/docs/gone.md", ETag: "e9", State: pipeline.StateIndexed, Sequencer: "FFFFFFFFFFFFFFF0"},
		// Already deleted: nothing to do.
		"acme/docs/deleted.md": {Key: "acme/docs/deleted.md", State: pipeline.StateDeleted, Sequencer: "20"},
	}
	run := func(body string) (ReindexResult, *fakePub) {
		pub := &fakePub{}
		r := &Reindexer{Bucket: "strata", Lister: objects, States: states, Pub: pub}
		res, err := r.Handle(context.Background(), "strata.reindex.acme", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return res, pub
	}
	res, pub := run(`{"prefix":"docs/"}`)
	if res.Listed != 3 || res.Emitted != 2 || res.Skipped != 1 || res.Deleted != 1 {
		t.Fatalf("result %+v", res)
	}
	for _, m := range pub.msgs {
		recs, err := event.Parse(m.data)
		if err != nil || len(recs) != 1 {
			t.Fatalf("re-emitted event does not parse: %v %s", err, m.data)
		}
		r := recs[0]
		if wantDelete := r.Key == "acme/docs/gone.md"; wantDelete != (r.Op == event.Delete) {
			t.Fatalf("%s re-emitted as %v", r.Key, r.Op)
		}
		if st := states[r.Key]; st != nil && pipeline.CompareSequencers(r.Sequencer, st.Sequencer) <= 0 {
			t.Fatalf("%s re-emitted with sequencer %s, not newer than %s", r.Key, r.Sequencer, st.Sequencer)
		}
		if m.subject != pipeline.ObjectEventsSubject || !strings.HasPrefix(m.msgID, "reindex-") {
			t.Fatalf("published on %s id %s", m.subject, m.msgID)
		}
	}
	if res, _ := run(`{"prefix":"other/"}`); res.Deleted != 0 {
		t.Fatalf("a delete was emitted outside the prefix: %+v", res)
	}
	if res, _ := run(`{"prefix":"docs/","force":true}`); res.Emitted != 3 || res.Skipped != 0 {
		t.Fatalf("force: %+v", res)
	}
	if res, _ := run(`{"branch":"feature"}`); res.Listed != 1 || res.Emitted != 1 {
		t.Fatalf("branch: %+v", res)
	}
	if res, _ := run(``); res.Listed != 4 {
		t.Fatalf("empty request lists the whole main branch: %+v", res)
	}
	r := &Reindexer{Bucket: "strata", Lister: objects, States: states, Pub: &fakePub{}}
	for _, bad := range []struct{ subject, body string }{{"strata.reindex.bad project", "{}"}, {"strata.reindex.acme", "{not json"}} {
		if _, err := r.Handle(context.Background(), bad.subject, []byte(bad.body)); !worker.IsPermanent(err) {
			t.Errorf("%+v: err %v, want permanent", bad, err)
		}
	}
}

// TestReindexLeavesRecentAndSeenUploadsAlone: during a burst, objects whose
// event was seen (even if still pending) or that changed less than MinAge
// ago are not re-emitted by an unforced reindex; a forced one takes them.
func TestReindexLeavesRecentAndSeenUploadsAlone(t *testing.T) {
	objects := fakeLister{
		{Key: "acme/new.md", ETag: "n1", LastModified: time.Now()},                     // just uploaded, no state yet
		{Key: "acme/pending.md", ETag: "p1", LastModified: time.Now().Add(-time.Hour)}, // event seen, still in the pipeline
		{Key: "acme/lost.md", ETag: "l1", LastModified: time.Now().Add(-time.Hour)},    // old, never seen: lost
	}
	states := fakeStateReader{"acme/pending.md": {Key: "acme/pending.md", ETag: "p1", State: pipeline.StatePending, Sequencer: "10", UpdatedAt: time.Now()}}
	r := &Reindexer{Bucket: "strata", Lister: objects, States: states, Pub: &fakePub{}, MinAge: time.Minute}
	res, err := r.Handle(context.Background(), "strata.reindex.acme", nil)
	if err != nil || res.Emitted != 1 || res.Skipped != 2 {
		t.Fatalf("unforced: %+v %v; want only the lost upload", res, err)
	}
	if res, _ := r.Handle(context.Background(), "strata.reindex.acme", []byte(`{"force":true}`)); res.Emitted != 3 {
		t.Fatalf("forced: %+v", res)
	}
	// Pending for longer than StalePending (10x MinAge): its event was lost
	// (a live event that failed while MinIO lost the durable copy).
	states["acme/pending.md"] = &pipeline.ObjectState{Key: "acme/pending.md", ETag: "p1", State: pipeline.StatePending, Sequencer: "10", UpdatedAt: time.Now().Add(-11 * time.Minute)}
	if res, err := r.Handle(context.Background(), "strata.reindex.acme", nil); err != nil || res.Emitted != 2 || res.Skipped != 1 {
		t.Fatalf("stale pending: %+v %v; want it re-emitted with the lost upload", res, err)
	}
	states["acme/pending.md"] = &pipeline.ObjectState{Key: "acme/pending.md", ETag: "p1", State: pipeline.StateIndexed, Sequencer: "10", UpdatedAt: time.Now().Add(-time.Hour)}
	if res, _ := r.Handle(context.Background(), "strata.reindex.acme", nil); res.Emitted != 1 {
		t.Fatalf("an old indexed state is done, not stuck: %+v", res)
	}
}
