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
