package index

// A commit. File versions of one project that wait for its commit lock at
// the same time are committed together, at one sequence (group commit).
// Commits are serialised per project, and each costs a lock, an intent, a
// publish and several writes whatever its size; sharing them lets a
// project take many small uploads a second instead of one commit's worth.
// The steps, each in a file of its own, are listed in the package doc.

import (
	"context"
	"sync"
	"time"

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
	// terms are fv's chunks' terms, found before the version waits.
	terms []chunkTerms
	// wake is sent once: when the version is finished, or when it must lead.
	wake     chan struct{}
	finished bool
	out      Outcome
	err      error
	// labels are who may read the version and its metadata as its commit records them (set by decide).
	labels labels
	// repair is set by decide for a version committed already whose
	// document write was lost: only its document is written again.
	repair bool
	// replaces is set by decide when the file has a version this commit
	// replaces (its rows are closed after the publish, validity.go).
	replaces bool
}

// conclude sets p's outcome.
func (p *pendingVersion) conclude(out Outcome, err error) { p.out, p.err, p.finished = out, err, true }

// concludeAll sets the outcome of every version of ps.
func concludeAll(ps []*pendingVersion, out Outcome, err error) {
	for _, p := range ps {
		p.conclude(out, err)
	}
}

// ApplyFileVersion commits fv as the file's current version, together with
// the project's other versions waiting at the same moment.
func (w *Writer) ApplyFileVersion(ctx context.Context, fv pipeline.FileVersion) (Outcome, error) {
	// Stemming is the commit's costliest work of its own: done here, by
	// each caller at once, instead of under the project's lock.
	p := &pendingVersion{fv: fv, terms: termsOf(fv), wake: make(chan struct{}, 1)}
	v, _ := w.queues.LoadOrStore(fv.Object.Project, &commitQueue{})
	q := v.(*commitQueue)
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
// sequence and sets every version's outcome. Each step concludes the
// versions it is the last step for, so the next finds its own among those
// left unconcluded.
func (w *Writer) commitGroup(ctx context.Context, group []*pendingVersion) {
	project := group[0].fv.Object.Project
	seq, unlock, err := w.begin(ctx, project)
	if err != nil {
		concludeAll(group, "", err)
		return
	}
	defer unlock()
	w.decideGroup(ctx, project, group, seq-1)
	now := w.now().UTC().Format(time.RFC3339Nano)
	w.repairDocuments(ctx, project, group, seq-1, now)
	w.publishVersions(ctx, project, group, seq, now)
}

// perFileParallel bounds the per-file reads and state writes of one
// commit that run at once.
const perFileParallel = 8
