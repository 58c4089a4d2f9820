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
	// RecordTags records that the index holds the read of an object's tags
	// whose digest is digest, read at readAt, unless a later one is recorded.
	RecordTags(ctx context.Context, project, objectKey, digest string, readAt time.Time) error
}

// FreshnessObserver records how long uploads took to become searchable
// (metrics.Freshness).
type FreshnessObserver interface {
	ObserveSearchable(search string, took time.Duration)
}

// recordState records how far o's event got, and its searchable latency.
//
// tags is the read of the object's tags the commit applied (zero for none:
// deletes, vectors): its digest goes with the state, for the reconcile pass
// (pipeline.ObjectState.TagsDigest). A commit that kept a later read the
// document holds records its own earlier one, which the store drops for
// the later (freshness keeps the later read, as the document does).
func (w *Writer) recordState(ctx context.Context, o pipeline.Object, state, errText string, seq int64, versionID string, extracted time.Time, tags pipeline.Access) {
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
	if tags.TagsDigest != "" {
		st.TagsDigest, st.TagsReadAt = tags.TagsDigest, tags.ReadAt
	}
	if err := w.states.Put(ctx, st); err != nil {
		// The commit is done; freshness catches up with the next event of the key.
		w.log.Warn("record freshness", "key", o.Key, "err", err)
	}
}

// recordTags records, once the document holds ac's read of the tags
// (applied now, or before: a redelivery), its digest in the object's state,
// for the reconcile pass to compare with the bucket listing. A change that
// was not applied (stale, or given up while its file had no document) is
// not recorded, so the pass still finds the difference. A failure is
// logged only: the change is done, and the pass then reads the tags once
// more (the state holds an older digest), which costs one more change.
func (w *Writer) recordTags(ctx context.Context, ac pipeline.TagsChanged) {
	if w.states == nil || ac.Access.TagsDigest == "" {
		return
	}
	if err := w.states.RecordTags(ctx, ac.Object.Project, ac.Object.Key, ac.Access.TagsDigest, ac.Access.ReadAt); err != nil {
		w.log.Warn("record the tags digest", "key", ac.Object.Key, "err", err)
	}
}
