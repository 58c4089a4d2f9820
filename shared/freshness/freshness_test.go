package freshness

import (
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

func TestMergeKeepsTheNewestEventAndEveryStageTime(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	pending := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StatePending, Stages: pipeline.StageTimes{Uploaded: at(0), Seen: at(10)}}
	indexed := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateIndexed, Sequence: 4,
		Stages: pipeline.StageTimes{Uploaded: at(0), Seen: at(20), Extracted: at(30), Committed: at(40)}}
	embedded := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateEmbedded, Sequence: 4, Stages: pipeline.StageTimes{Embedded: at(90)}}
	newer := pipeline.ObjectState{Sequencer: "0B", State: pipeline.StatePending, Stages: pipeline.StageTimes{Seen: at(100)}}

	got, changed := merge(pending, indexed)
	want := pipeline.StageTimes{Uploaded: at(0), Seen: at(10), Extracted: at(30), Committed: at(40)}
	if !changed || got.State != pipeline.StateIndexed || got.Stages != want {
		t.Fatalf("pending then indexed: %v %s %+v", changed, got.State, got.Stages)
	}
	got, changed = merge(got, embedded)
	want.Embedded = at(90)
	if !changed || got.State != pipeline.StateEmbedded || got.Stages != want {
		t.Fatalf("then embedded: %v %s %+v", changed, got.State, got.Stages)
	}
	// Vectors written before the commit: embedded first, then the commit adds its times.
	got, changed = merge(embedded, indexed)
	if !changed || got.State != pipeline.StateEmbedded || got.Stages.Committed != at(40) || got.Stages.Embedded != at(90) {
		t.Fatalf("embedded then indexed: %v %s %+v", changed, got.State, got.Stages)
	}
	if _, changed = merge(got, indexed); changed {
		t.Fatal("a repeated commit changed the state")
	}
	// A second copy of the event seen later keeps the first time it was seen.
	if got, _ = merge(pending, pipeline.ObjectState{Sequencer: "0A", State: pipeline.StatePending, Stages: pipeline.StageTimes{Seen: at(3000)}}); got.Stages.Seen != at(10) {
		t.Fatalf("seen again: %+v", got.Stages)
	}
	if got, changed = merge(indexed, newer); !changed || got.Sequencer != "0B" || got.Stages != newer.Stages {
		t.Fatalf("newer event: %v %+v", changed, got)
	}
	if _, changed = merge(newer, indexed); changed {
		t.Fatal("an older event replaced a newer one")
	}
}

// The tags read a state records is the later of two whatever the writes'
// order or event, as the index keeps the later read on its document: the
// indexer's writes without one (vectors, deletes, the ingestor's pending)
// keep it, an earlier read never replaces a later one, and a newer upload's
// read replaces its predecessor's.
func TestMergeKeepsTheLaterTagsRead(t *testing.T) {
	t1 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	t2, t3 := t1.Add(time.Second), t1.Add(2*time.Second)
	pending := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StatePending}
	indexed := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateIndexed, Sequence: 4, TagsDigest: "d1", TagsReadAt: t1}
	got, changed := merge(pending, indexed)
	if !changed || got.State != pipeline.StateIndexed || got.TagsDigest != "d1" || !got.TagsReadAt.Equal(t1) {
		t.Fatalf("pending then indexed: %v %+v", changed, got)
	}
	if got, _ = merge(got, indexed); got.TagsDigest != "d1" {
		t.Fatalf("a repeated commit: %+v", got)
	}
	embedded := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateEmbedded, Sequence: 4}
	if got, _ = merge(got, embedded); got.State != pipeline.StateEmbedded || got.TagsDigest != "d1" {
		t.Fatalf("then embedded: %+v", got)
	}
	// A tag change applied (read later), then the commit of the same event
	// again (a redelivery): the later read stays.
	got, _ = laterTags(got, "d2", t2)
	if got, changed = merge(got, indexed); changed || got.TagsDigest != "d2" || got.State != pipeline.StateEmbedded {
		t.Fatalf("a late commit over a later tag read: %v %+v", changed, got)
	}
	if _, changed := laterTags(got, "d0", t1.Add(-time.Second)); changed {
		t.Fatal("an earlier tag read replaced a later one")
	}
	if _, changed := laterTags(got, "", t3); changed {
		t.Fatal("a read without a digest was recorded")
	}
	// A newer event: its pending state (no read yet) keeps the earlier
	// version's read; its commit, read later, replaces it.
	next := pipeline.ObjectState{Sequencer: "0B", State: pipeline.StatePending}
	if got, changed = merge(got, next); !changed || got.State != pipeline.StatePending || got.TagsDigest != "d2" {
		t.Fatalf("a newer upload pending: %v %+v", changed, got)
	}
	if got, _ = merge(got, pipeline.ObjectState{Sequencer: "0B", State: pipeline.StateIndexed, TagsDigest: "d3", TagsReadAt: t3}); got.TagsDigest != "d3" || got.State != pipeline.StateIndexed {
		t.Fatalf("a newer upload committed: %+v", got)
	}
	// An older event's write loses as before, and its earlier read with it.
	if got, changed = merge(got, pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateEmbedded, TagsDigest: "d1", TagsReadAt: t1}); changed || got.TagsDigest != "d3" {
		t.Fatalf("an older event over a newer one: %v %+v", changed, got)
	}
}
