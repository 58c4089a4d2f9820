package index

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/freshness"
	"github.com/strata-kb/strata/shared/pipeline"
)

// TestStateRecordsTheTagsReadTheIndexHolds: the object's state (real NATS
// KV) records the digest of the tags read the document holds, which the
// reconcile pass compares with the bucket listing: the commit's own, a tag
// change applied since, the later of the two when a version read before a
// change is committed after it; never a change that was not applied (stale,
// or of a file without a document).
func TestStateRecordsTheTagsReadTheIndexHolds(t *testing.T) {
	_, _ = newWriter(t)
	ctx := context.Background()
	states, err := freshness.Open(ctx, sharedJS, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := New(Config{Weaviate: sharedClient, Sequences: sharedSeqs, States: states, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const p = "acl-digest"
	t0 := time.Now().UTC()
	read := func(fv pipeline.FileVersion, at time.Time, digest string, groups ...string) pipeline.FileVersion {
		fv = withAccess(fv, at, groups...)
		fv.Access.TagsDigest = digest
		return fv
	}
	change := func(fv pipeline.FileVersion, at time.Time, digest string, groups ...string) pipeline.TagsChanged {
		ac := accessChange(fv, at, groups...)
		ac.Access.TagsDigest = digest
		return ac
	}
	want := func(what string, fv pipeline.FileVersion, state, sequencer, digest string, at time.Time) {
		t.Helper()
		st, err := states.Get(ctx, p, fv.Object.Key)
		if err != nil {
			t.Fatal(err)
		}
		if st == nil || st.State != state || st.Sequencer != sequencer || st.TagsDigest != digest || !st.TagsReadAt.Equal(at) {
			t.Fatalf("%s: state %+v, want %s of event %s with the digest %s read at %s", what, st, state, sequencer, digest, at)
		}
	}

	v1 := read(version(p, "doc.md", "e1", "10", "one"), t0, "t1:a", "eng")
	mustApply(t, w, v1, Applied)
	want("committed", v1, pipeline.StateIndexed, "10", "t1:a", t0)
	mustVectors(t, w, vectorsOf(v1, testModel, 3))
	want("embedded", v1, pipeline.StateEmbedded, "10", "t1:a", t0)

	mustChange(t, w, change(v1, t0.Add(2*time.Second), "t1:b", "legal"), Applied)
	want("tag change applied", v1, pipeline.StateEmbedded, "10", "t1:b", t0.Add(2*time.Second))
	mustChange(t, w, change(v1, t0.Add(2*time.Second), "t1:b", "legal"), Duplicate)
	mustChange(t, w, change(v1, t0.Add(time.Second), "t1:stale", "old"), Stale)
	want("stale change", v1, pipeline.StateEmbedded, "10", "t1:b", t0.Add(2*time.Second))
	mustApply(t, w, v1, Duplicate)
	want("commit redelivered", v1, pipeline.StateEmbedded, "10", "t1:b", t0.Add(2*time.Second))

	// v2 was read before the change and committed after it: the document
	// keeps the change's readers, and the state its digest.
	v2 := read(version(p, "doc.md", "e2", "20", "two"), t0.Add(time.Second), "t1:c", "eng")
	mustApply(t, w, v2, Applied)
	wantReaders(t, sharedClient, p, v1.FileID, []string{"legal"}, nil)
	want("an earlier read committed later", v2, pipeline.StateIndexed, "20", "t1:b", t0.Add(2*time.Second))
	v3 := read(version(p, "doc.md", "e3", "30", "three"), t0.Add(3*time.Second), "t1:d", "ops")
	mustApply(t, w, v3, Applied)
	want("a later upload", v3, pipeline.StateIndexed, "30", "t1:d", t0.Add(3*time.Second))

	// A change of a file the index has no document of records nothing.
	never := read(version(p, "never.md", "n1", "11", "x"), t0, "t1:n", "eng")
	if err := states.Put(ctx, pipeline.ObjectState{Key: never.Object.Key, Project: p, ETag: "n1", Sequencer: "11", State: pipeline.StatePending}); err != nil {
		t.Fatal(err)
	}
	mustChange(t, w, change(never, t0.Add(time.Second), "t1:m", "legal"), Absent)
	if st, err := states.Get(ctx, p, never.Object.Key); err != nil || st == nil || st.TagsDigest != "" {
		t.Fatalf("a change of a file without a document: state %+v %v, want no digest", st, err)
	}
}

// TestRedeliveredCommitRecordsEarlyVectors: a version whose vectors came
// before its commit, and whose commit did not record it embedded (the
// lookup of its vectors failed: here, a writer without a state store),
// is recorded embedded when the commit is redelivered.
func TestRedeliveredCommitRecordsEarlyVectors(t *testing.T) {
	_, _ = newWriter(t)
	ctx := context.Background()
	states, err := freshness.Open(ctx, sharedJS, 1)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	stateless := New(Config{Weaviate: sharedClient, Sequences: sharedSeqs, Log: log})
	w := New(Config{Weaviate: sharedClient, Sequences: sharedSeqs, States: states, Log: log})
	const p = "early-vectors"
	v1 := version(p, "early.md", "e1", "10", "one")
	mustVectors(t, w, vectorsOf(v1, testModel, 3))
	mustApply(t, stateless, v1, Applied)
	if st, err := states.Get(ctx, p, v1.Object.Key); err != nil || st != nil && st.State == pipeline.StateEmbedded {
		t.Fatalf("before the redelivery: state %+v, %v; want none embedded", st, err)
	}
	mustApply(t, w, v1, Duplicate)
	st, err := states.Get(ctx, p, v1.Object.Key)
	if err != nil || st == nil || st.State != pipeline.StateEmbedded || st.FileVersionID != v1.FileVersionID || st.Sequence == 0 {
		t.Fatalf("after the redelivery: state %+v, %v; want %s embedded at its commit's sequence", st, err, v1.FileVersionID)
	}
}
