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

// The tags digest the ingestor records survives the indexer's writes of the
// same event (which carry none), is replaced by a later read of the tags
// whatever the stage, and does not outlive its event.
func TestMergeKeepsTheTagsDigestOfTheEvent(t *testing.T) {
	pending := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StatePending, TagsDigest: "d1"}
	indexed := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateIndexed, Sequence: 4}
	got, changed := merge(pending, indexed)
	if !changed || got.State != pipeline.StateIndexed || got.TagsDigest != "d1" {
		t.Fatalf("pending then indexed: %v %+v", changed, got)
	}
	if got, _ = merge(got, indexed); got.TagsDigest != "d1" {
		t.Fatalf("a repeated commit: %+v", got)
	}
	embedded := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateEmbedded, Sequence: 4}
	if got, _ = merge(got, embedded); got.State != pipeline.StateEmbedded || got.TagsDigest != "d1" {
		t.Fatalf("then embedded: %+v", got)
	}
	if _, changed := merge(got, indexed); changed {
		t.Fatal("a late commit changed the embedded state")
	}
	// A tag change read later, written as the state it read (or an earlier one).
	retagged := pipeline.ObjectState{Sequencer: "0A", State: pipeline.StatePending, TagsDigest: "d2"}
	if got, changed = merge(got, retagged); !changed || got.State != pipeline.StateEmbedded || got.TagsDigest != "d2" {
		t.Fatalf("retagged: %v %+v", changed, got)
	}
	if got, _ = merge(got, pipeline.ObjectState{Sequencer: "0B", State: pipeline.StatePending}); got.TagsDigest != "" {
		t.Fatalf("a newer event kept the older one's digest: %+v", got)
	}
	if got, changed = merge(got, pipeline.ObjectState{Sequencer: "0A", State: pipeline.StateEmbedded, TagsDigest: "d3"}); changed || got.TagsDigest != "" {
		t.Fatalf("an older event's digest was recorded over a newer event: %v %+v", changed, got)
	}
}
