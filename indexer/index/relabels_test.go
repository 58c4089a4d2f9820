package index

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// recordedRelabels is a Relabels that checks, at each call, what the index
// holds then.
type recordedRelabels struct {
	announced, withdrawn []pipeline.Relabel
	onAnnounce           func(pipeline.Relabel)
	onWithdraw           func()
}

func (r *recordedRelabels) Announce(_ context.Context, rl pipeline.Relabel) (uint64, error) {
	r.announced = append(r.announced, rl)
	if r.onAnnounce != nil {
		r.onAnnounce(rl)
	}
	return uint64(len(r.announced)), nil
}

func (r *recordedRelabels) Withdraw(_ context.Context, project, fileID string, revision uint64) error {
	r.withdrawn = append(r.withdrawn, r.announced[revision-1])
	if r.onWithdraw != nil {
		r.onWithdraw()
	}
	return nil
}

// TestAccessChangeIsAnnouncedWhileApplied: an access change is announced
// before any object gets its new readers, naming the visible file version
// and the new readers, and withdrawn once every object has them. A change
// with nothing to do (duplicate, stale) announces nothing.
func TestAccessChangeIsAnnouncedWhileApplied(t *testing.T) {
	w, wv := newWriter(t)
	const p = "acl-announce"
	t0 := time.Now().UTC()
	fv := withAccess(version(p, "doc.md", "e1", "10", "a1", "a2", "a3"), t0, "hr")
	mustApply(t, w, fv, Applied)
	mustVectors(t, w, vectorsOf(fv, testModel, 3))
	counts := map[string]int{schema.SectionClass: 1, schema.ChunkClass: 3, schema.VersionClass: 1, schema.ChunkVectorClass: 3}

	rec := &recordedRelabels{
		onAnnounce: func(pipeline.Relabel) { wantReaders(t, wv, p, fv.FileID, []string{"hr"}, counts) },
		onWithdraw: func() {
			counts[schema.VersionClass] = 2
			wantReaders(t, wv, p, fv.FileID, []string{"finance"}, counts)
		},
	}
	w.SetRelabels(rec)
	change := accessChange(fv, t0.Add(time.Minute), "finance")
	mustChange(t, w, change, Applied)
	want := pipeline.Relabel{Project: p, FileID: fv.FileID, FileVersionID: fv.FileVersionID, Readers: []string{"finance"}, ReadAt: change.Access.ReadAt}
	if len(rec.announced) != 1 || !sameRelabel(rec.announced[0], want) {
		t.Fatalf("announced %+v, want %+v", rec.announced, want)
	}
	if len(rec.withdrawn) != 1 {
		t.Fatalf("withdrawn %d times, want once", len(rec.withdrawn))
	}
	mustChange(t, w, change, Duplicate)
	mustChange(t, w, accessChange(fv, t0.Add(time.Second), "old"), Stale)
	if len(rec.announced) != 1 {
		t.Fatalf("a duplicate or stale change was announced: %+v", rec.announced[1:])
	}
}

func sameRelabel(a, b pipeline.Relabel) bool {
	return a.Project == b.Project && a.FileID == b.FileID && a.FileVersionID == b.FileVersionID &&
		slices.Equal(a.Readers, b.Readers) && a.ReadAt.Equal(b.ReadAt)
}

// TestKVRelabelsLaterReadWins: of two announcements of one file the later
// read stays, whatever their order; withdrawing a replaced one leaves the
// one that replaced it; a file may be announced again once withdrawn.
func TestKVRelabelsLaterReadWins(t *testing.T) {
	newWriter(t) // starts the shared servers
	ctx := context.Background()
	k, err := OpenRelabels(ctx, sharedJS, 1)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC()
	at := func(d time.Duration, readers ...string) pipeline.Relabel {
		return pipeline.Relabel{Project: "relabel-kv", FileID: "f1", FileVersionID: "v1", Readers: readers, ReadAt: t0.Add(d)}
	}
	held := func() *pipeline.Relabel {
		kv, err := sharedJS.KeyValue(ctx, pipeline.RelabelsBucket)
		if err != nil {
			t.Fatal(err)
		}
		e, err := kv.Get(ctx, pipeline.RelabelKey("relabel-kv", "f1"))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		var r pipeline.Relabel
		if err := json.Unmarshal(e.Value(), &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	announce := func(r pipeline.Relabel) uint64 {
		rev, err := k.Announce(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	first := announce(at(time.Second, "hr"))
	if first == 0 {
		t.Fatal("the first announcement was not recorded")
	}
	if rev := announce(at(0, "old")); rev != 0 {
		t.Fatalf("an older read replaced a newer one (revision %d)", rev)
	}
	second := announce(at(2*time.Second, "finance"))
	if second == 0 {
		t.Fatal("a newer read was not recorded")
	}
	if err := k.Withdraw(ctx, "relabel-kv", "f1", first); err != nil {
		t.Fatal(err)
	}
	if r := held(); r == nil || !slices.Equal(r.Readers, []string{"finance"}) {
		t.Fatalf("after withdrawing the replaced one: %+v, want finance's", r)
	}
	if err := k.Withdraw(ctx, "relabel-kv", "f1", second); err != nil {
		t.Fatal(err)
	}
	if r := held(); r != nil {
		t.Fatalf("withdrawn, still held: %+v", r)
	}
	if announce(at(3*time.Second, "legal")) == 0 {
		t.Fatal("a withdrawn file cannot be announced again")
	}
}
