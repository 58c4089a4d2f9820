package index

// A commit. File versions of one project that wait for its commit lock at
// the same time are committed together, at one sequence (group commit).
// Commits are serialised per project, and each costs a lock, an intent, a
// publish and several writes whatever its size; sharing them lets a
// project take many small uploads a second instead of one commit's worth.
// The steps, each in a file of its own, are listed in the package doc.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/pipeline"
)

// commitQueue holds one project's file versions waiting to be committed.
// One waiter at a time leads: it commits everything waiting (its own
// version first among them), then hands the lead to the oldest waiter left.
type commitQueue struct {
	mu      sync.Mutex
	waiting []*pendingVersion
	leading bool
}

type pendingVersion struct {
	fv pipeline.FileVersion
	// wake is sent once: when the version is finished, or when it must lead.
	wake     chan struct{}
	finished bool
	out      Outcome
	err      error
	// labels are who may read the version and its metadata as its commit records them (set by decide).
	labels labels
}

// ApplyFileVersion commits fv as the file's current version, together with
// the project's other versions waiting at the same moment.
func (w *Writer) ApplyFileVersion(ctx context.Context, fv pipeline.FileVersion) (Outcome, error) {
	v, _ := w.queues.LoadOrStore(fv.Object.Project, &commitQueue{})
	q := v.(*commitQueue)
	p := &pendingVersion{fv: fv, wake: make(chan struct{}, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, p)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		// Not on ctx: a waiter that left could be handed the lead and strand
		// the queue. The leader's commit ends, cancelled or not.
		<-p.wake
		if p.finished {
			return p.out, p.err
		}
	}
	q.mu.Lock()
	n := min(len(q.waiting), w.maxGroup)
	group := append([]*pendingVersion(nil), q.waiting[:n]...) // p is the oldest: first
	q.waiting = append(q.waiting[:0:0], q.waiting[n:]...)
	q.mu.Unlock()
	w.commitGroup(ctx, group)
	for _, g := range group[1:] {
		g.wake <- struct{}{}
	}
	q.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].wake <- struct{}{} // the oldest leads the next commit
	} else {
		q.leading = false
	}
	q.mu.Unlock()
	return p.out, p.err
}

// commitGroup commits the newest of each file's versions in group at one
// sequence and sets every version's outcome.
func (w *Writer) commitGroup(ctx context.Context, group []*pendingVersion) {
	finish := func(p *pendingVersion, out Outcome, err error) { p.out, p.err, p.finished = out, err, true }
	project := group[0].fv.Object.Project
	seq, unlock, err := w.begin(ctx, project)
	if err != nil {
		for _, p := range group {
			finish(p, "", err)
		}
		return
	}
	defer unlock()
	// Two events of one file in one group: the older is stale (or the same version, a duplicate).
	newest := map[string]*pendingVersion{}
	for _, p := range group {
		cur := newest[p.fv.FileID]
		if cur == nil || pipeline.CompareSequencers(p.fv.Object.Sequencer, cur.fv.Object.Sequencer) > 0 {
			newest[p.fv.FileID] = p
		}
	}
	// Each file's decision is two reads; they run at once, as the commit
	// lock is held meanwhile and every other writer of the project waits.
	type decision struct {
		verdict
		err error
	}
	decisions := make([]decision, len(group))
	inParallel(len(group), perFileParallel, func(i int) {
		p := group[i]
		if newest[p.fv.FileID] == p {
			o := p.fv.Object
			d := &decisions[i]
			d.verdict, d.err = w.decide(ctx, project, p.fv.FileID, o.Sequencer, p.fv.FileVersionID, seq-1)
			// An access change applied while fv was on its way wins over fv's older read.
			p.labels = d.doc.labelsFor(p.fv)
		}
	})
	var apply, repair []*pendingVersion
	for i, p := range group {
		if n := newest[p.fv.FileID]; n != p {
			out := Stale
			if n.fv.FileVersionID == p.fv.FileVersionID {
				out = Duplicate
			}
			finish(p, out, nil)
			continue
		}
		out, done, err := decisions[i].out, decisions[i].done, decisions[i].err
		switch {
		case err != nil:
			finish(p, "", err)
		case done && out == repairDocument:
			repair = append(repair, p)
		case done && out == tornVersion:
			if err := w.deleteVersionObjects(ctx, p.fv); err != nil {
				finish(p, "", err)
				continue
			}
			apply = append(apply, p)
		case done && out == Duplicate:
			// A redelivery, maybe of a commit whose vectors' readers could not be set (markEmbedded).
			finish(p, out, w.syncVectorReaders(ctx, project, textFilter("file_version_id", p.fv.FileVersionID), decisions[i].doc.labels))
		case done:
			finish(p, out, nil)
		default:
			apply = append(apply, p)
		}
	}
	now := w.now().UTC().Format(time.RFC3339Nano)
	fail := func(ps []*pendingVersion, err error) {
		for _, p := range ps {
			finish(p, "", err)
		}
	}
	if len(repair) > 0 { // committed before, but the document write was lost
		var docs []*models.Object
		for _, p := range repair {
			docs = append(docs, fileDocument(p.fv, p.labels, seq-1, now))
		}
		err := w.batch(ctx, docs)
		for _, p := range repair {
			if err != nil {
				finish(p, Duplicate, err)
				continue
			}
			// Vectors written while the document was missing have no readers.
			finish(p, Duplicate, w.syncVectorReaders(ctx, project, textFilter("file_version_id", p.fv.FileVersionID), p.labels))
		}
	}
	if len(apply) == 0 {
		return
	}
	var objs, docs []*models.Object
	for _, p := range apply {
		if err := w.prepareMetadata(ctx, &p.labels); err != nil {
			fail(apply, fmt.Errorf("metadata properties of %s: %w", project, err))
			return
		}
		objs = append(objs, versionObjects(p.fv, p.labels, seq, now)...)
		docs = append(docs, fileDocument(p.fv, p.labels, seq, now))
	}
	if err := w.batch(ctx, objs); err != nil {
		fail(apply, fmt.Errorf("write %d file versions of %s: %w", len(apply), project, err))
		return
	}
	if err := w.publish(ctx, project, seq); err != nil {
		fail(apply, fmt.Errorf("publish commit %d of %s: %w", seq, project, err))
		return
	}
	// Documents are the files' current state for listings, written once the commit is visible.
	if err := w.batch(ctx, docs); err != nil {
		fail(apply, fmt.Errorf("write %d documents of %s: %w", len(docs), project, err))
		return
	}
	// Each file's state (and, with its vectors there, embedded) is a write
	// and a read of its own: at once too.
	inParallel(len(apply), perFileParallel, func(i int) {
		p := apply[i]
		fv := p.fv
		state := pipeline.StateIndexed
		if fv.Status != pipeline.StatusIndexed {
			state = pipeline.StateFailed
		}
		w.recordState(ctx, fv.Object, state, fv.Error, seq, fv.FileVersionID, fv.ExtractedAt)
		if state == pipeline.StateIndexed {
			if err := w.markEmbedded(ctx, fv, p.labels, seq); err != nil {
				finish(p, "", err)
				return
			}
		}
		finish(p, Applied, nil)
	})
}

// perFileParallel bounds the per-file reads and state writes of one
// commit that run at once.
const perFileParallel = 8
