package index

// Object states (freshness): once a commit, a delete or a file's vectors
// are visible, the state of its object is recorded (shared/freshness) and
// the time it took to become searchable observed.

import (
	"context"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

// States records object freshness (freshness.Store); nil records nothing.
type States interface {
	Put(ctx context.Context, st pipeline.ObjectState) error
}

// FreshnessObserver records how long uploads took to become searchable
// (metrics.Freshness).
type FreshnessObserver interface {
	ObserveSearchable(search string, took time.Duration)
}

func (w *Writer) recordState(ctx context.Context, o pipeline.Object, state, errText string, seq int64, versionID string, extracted time.Time) {
	now := w.now().UTC()
	stages := pipeline.StageTimes{Uploaded: o.EventTime, Seen: o.SeenAt, Extracted: extracted}
	search := "keyword"
	if state == pipeline.StateEmbedded {
		stages.Embedded, search = now, "vector"
	} else {
		stages.Committed = now
	}
	if w.fresh != nil && state != pipeline.StateFailed && state != pipeline.StateDeleted && !o.EventTime.IsZero() {
		w.fresh.ObserveSearchable(search, now.Sub(o.EventTime))
	}
	if w.states == nil {
		return
	}
	st := pipeline.ObjectState{Key: o.Key, Project: o.Project, ETag: o.ETag, VersionID: o.VersionID, Sequencer: o.Sequencer,
		State: state, Error: errText, Sequence: seq, FileVersionID: versionID, UpdatedAt: now, Stages: stages}
	if err := w.states.Put(ctx, st); err != nil {
		// The commit is done; freshness catches up with the next event of the key.
		w.log.Warn("record freshness", "key", o.Key, "err", err)
	}
}
