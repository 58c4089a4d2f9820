package index

// A commit. File versions of one project that wait for its commit lock at
// the same time are committed together, at one sequence (group commit).
// Commits are serialised per project, and each costs a lock, an intent, a
// publish and several writes whatever its size; sharing them lets a
// project take many small uploads a second instead of one commit's worth.
//
// This file is the commit's only orchestrator: commitGroup takes the
// steps in order (begin, decide, repair, publish), and each step calls
// down into the layer that keeps state in NATS KV (state_kv.go) or the one
// that reads and writes Weaviate (store_weaviate.go) and comes back.
//
//   - begin: the project is locked (in this process and across indexers),
//     what an interrupted commit left is undone (settle, recover) and the
//     next sequence is intended before any of its objects is written. A
//     crash before publishing leaves objects above the watermark, which
//     the next commit rolls back before it intends its own sequence; a
//     crash after publishing may lose the mirror's write, caught up there
//     too, or the documents' write, which repairDocuments makes once the
//     events are delivered again.
//   - decide: what becomes of each event. An event is applied unless it
//     was committed already (Duplicate) or a newer event of its file was
//     (Stale); a committed one may also have lost its document (repaired)
//     or be torn by a Weaviate crash (its objects deleted by id and
//     committed again, store_weaviate.go).
//   - publish: once its objects are written at the intended sequence, the
//     sequence is published (readers switch to them at once); the
//     documents and object states follow, and the vectors of stale
//     versions never committed are dropped (commitvectors.go).

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
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
	// members are the versions of fv's members (members.go), committed
	// with it; each has fv's pendingVersion as its container.
	members   []*pendingVersion
	container *pendingVersion
	// had is the format of the file's document before this commit, and
	// mainHad, for a branch's first version of a path, main's (set by
	// decide; members.go).
	had, mainHad string
	// committed is the sequence a version to repair was committed at.
	committed int64
	// newest is set by decide for the newest version of its file in the group.
	newest bool
	// torn is set by decide for a committed version whose objects are to
	// be deleted by id and committed again (once its set is decided).
	torn bool
}

// size is how many file versions committing p commits: p and its members.
func (p *pendingVersion) size() int { return 1 + len(p.members) }

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
	for _, m := range fv.Members {
		p.members = append(p.members, &pendingVersion{fv: m, terms: termsOf(m), container: p})
	}
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
	// A container and its members count as what they are, many versions,
	// and are never split: one set over MaxGroup is committed alone.
	n, size := 1, q.waiting[0].size()
	for n < len(q.waiting) && size+q.waiting[n].size() <= w.maxGroup {
		size += q.waiting[n].size()
		n++
	}
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
//
// A container's members are committed beside it as versions of their own
// (members.go); the set's outcome is the container's, and an error of any
// of them is the container's error, so the message is delivered again.
func (w *Writer) commitGroup(ctx context.Context, group []*pendingVersion) {
	defer concludeSets(group)
	var all []*pendingVersion
	for _, p := range group {
		all = append(append(all, p), p.members...)
	}
	ctx, h, seq, err := w.begin(ctx, group[0].fv.Object.Project)
	if err != nil {
		concludeAll(all, "", err)
		return
	}
	defer h.unlock()
	w.decideGroup(ctx, h, all, seq-1)
	decideSets(group)
	w.deleteTorn(ctx, h, all)
	now := w.now().UTC().Format(time.RFC3339Nano)
	w.repairDocuments(ctx, h, all, seq-1, now)
	w.publishVersions(ctx, h, all, seq, now)
	w.dropStaleVectors(ctx, h.project, all)
}

// decideSets makes each container's set one decision: when one of its
// versions failed to be decided, the set fails with it; when the container
// is stale, so are its members; when it is to be committed, so are its
// members that only a delete made on another key's account found stale (a
// branch's member hidden by main's commit), and each member takes a later
// read of the container's tags than its own (an access change applied
// while the set was on its way, inheritLabels).
func decideSets(group []*pendingVersion) {
	for _, c := range group {
		if len(c.members) == 0 {
			continue
		}
		set := append([]*pendingVersion{c}, c.members...)
		var failed error
		for _, p := range set {
			if p.finished && p.err != nil && failed == nil {
				failed = p.err
			}
		}
		apply := !c.finished && !c.repair
		for _, p := range c.members {
			if apply && p.finished && p.err == nil && p.out == Stale && p.newest {
				p.finished, p.out = false, ""
			}
		}
		for _, p := range set {
			switch {
			case p.finished:
			case failed != nil:
				p.conclude("", failed)
			case c.finished && c.out == Stale:
				p.conclude(Stale, nil)
			case p != c && c.labels.readAt.After(p.labels.readAt):
				p.labels = inheritLabels(c.labels, p.fv)
			}
		}
	}
}

// deleteTorn deletes by id the objects of the versions of group decide
// found torn and that are still to be committed (their sets decided), so
// they are committed again. When that fails, the version's whole set
// fails with it.
func (w *Writer) deleteTorn(ctx context.Context, h *hold, group []*pendingVersion) {
	for _, p := range group {
		if !p.torn || p.finished {
			continue
		}
		err := h.fenced(ctx, "write")
		if err == nil {
			err = w.deleteVersionObjects(ctx, p.fv)
		}
		if err == nil {
			continue
		}
		c := p
		if p.container != nil {
			c = p.container
		}
		for _, q := range append([]*pendingVersion{c}, c.members...) {
			if !q.finished {
				q.conclude("", err)
			}
		}
	}
}

// concludeSets gives each container of group the first error of its
// members, if it has none of its own.
func concludeSets(group []*pendingVersion) {
	for _, c := range group {
		for _, m := range c.members {
			if m.err != nil && c.err == nil {
				c.out, c.err = "", fmt.Errorf("member %s: %w", m.fv.Object.Path, m.err)
			}
		}
	}
}

// perFileParallel bounds the per-file reads and state writes of one
// commit that run at once.
const perFileParallel = 8

// begin locks the project, undoes what an interrupted commit left behind,
// and returns the next sequence. The caller must call the hold's unlock.
func (w *Writer) begin(ctx context.Context, project string) (held context.Context, h *hold, next int64, err error) {
	if err := w.ensureTenant(ctx, project); err != nil {
		return nil, nil, 0, err
	}
	ctx, h, err = w.lock(ctx, project)
	if err != nil {
		return nil, nil, 0, err
	}
	wm, err := w.settle(ctx, h)
	if err == nil {
		err = h.intend(ctx, wm+1)
	}
	if err != nil {
		h.unlock()
		return nil, nil, 0, err
	}
	return ctx, h, wm + 1, nil
}

// settle returns the watermark of the project h holds, claims the project
// at it (the commit's fence) and then undoes what an interrupted commit
// left behind.
func (w *Writer) settle(ctx context.Context, h *hold) (watermark int64, err error) {
	wm, err := w.Watermark(ctx, h.project)
	if err != nil {
		return 0, err
	}
	if err := h.claim(ctx, wm); err != nil {
		return 0, err
	}
	if err := w.recover(ctx, h, wm); err != nil {
		return 0, err
	}
	return wm, nil
}

// recover undoes what an interrupted commit left: objects above the
// watermark and a lost mirror write. It runs on this process's first commit
// of a project and whenever an intent lies above the watermark; otherwise
// the last commit completed and there is nothing to undo.
func (w *Writer) recover(ctx context.Context, h *hold, wm int64) error {
	project := h.project
	intent, err := w.seqs.Intent(ctx, project)
	if err != nil {
		return err
	}
	if _, seen := w.checked.Load(project); seen && intent <= wm {
		return nil
	}
	// Deleting above the watermark is right only while no other indexer
	// has published since this commit's claim.
	if err := h.fenced(ctx, "rollback"); err != nil {
		return err
	}
	if err := w.rollback(ctx, project, wm); err != nil {
		return err
	}
	if wm > 0 {
		if err := w.mirror(ctx, project, wm); err != nil { // catches up a mirror write lost in a crash
			return err
		}
	}
	w.checked.Store(project, struct{}{})
	return nil
}

// Watermark returns the project's published commit sequence (0 before the first commit).
// The authority is the Sequences store; an index written before it existed
// is read from its ProjectState once and then recorded there.
func (w *Writer) Watermark(ctx context.Context, project string) (int64, error) {
	seq, found, err := w.seqs.Get(ctx, project)
	if err != nil || found {
		return seq, err
	}
	props, err := w.object(ctx, schema.ProjectStateClass, project, ids.Project(project))
	if err != nil || props == nil {
		return 0, err
	}
	return int64(wvquery.Float(props, "sequence")), nil
}

// decideGroup decides what becomes of each version of group, whose commit
// follows watermark: it concludes the versions that are stale, duplicates
// or failed, and marks those whose document to repair; the others are to
// be committed. Of two events of one file in group the older is stale (or,
// the same version, a duplicate).
func (w *Writer) decideGroup(ctx context.Context, h *hold, group []*pendingVersion, watermark int64) {
	project := h.project
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
			d.verdict, d.err = w.decide(ctx, project, p.fv.FileID, o.Sequencer, p.fv.FileVersionID, watermark)
			// An access change applied while fv was on its way wins over fv's older read.
			p.labels = d.doc.labelsFor(p.fv)
			p.replaces = d.doc.exists && !d.doc.deleted
			p.had, p.newest = d.doc.format, true
			if d.err == nil && !d.doc.exists && o.Branch != "" && !isMember(o.Path) {
				p.mainHad, d.err = w.mainFormat(ctx, project, o.Path)
			}
		}
	})
	for i, p := range group {
		if n := newest[p.fv.FileID]; n != p {
			out := Stale
			if n.fv.FileVersionID == p.fv.FileVersionID {
				out = Duplicate
			}
			p.conclude(out, nil)
			continue
		}
		out, done, err := decisions[i].out, decisions[i].done, decisions[i].err
		switch {
		case err != nil:
			p.conclude("", err)
		case done && out == repairDocument:
			p.repair, p.committed = true, decisions[i].seq
		case done && out == tornVersion:
			p.torn = true // committed again once its objects are gone (deleteTorn)
		case done && out == Duplicate:
			// A redelivery, maybe of a commit whose vectors could not be
			// looked up or given their readers (markEmbedded): again, and
			// for the current version the embedded state with them.
			doc := decisions[i].doc
			if doc.fileVersionID == p.fv.FileVersionID && p.fv.Status == pipeline.StatusIndexed {
				p.conclude(out, w.markEmbedded(ctx, p.fv, doc.labels, doc.commitSeq))
			} else {
				p.conclude(out, w.syncVectorReaders(ctx, project, textFilter("file_version_id", p.fv.FileVersionID), doc.labels))
			}
		case done:
			p.conclude(out, nil)
		}
	}
}

// verdict is decide's answer about an event.
type verdict struct {
	out  Outcome
	done bool    // false: apply the event
	doc  current // the file's document as decide read it
	seq  int64   // the sequence the event was committed at, when it was
}

// repairDocument is decide's answer for a committed event whose document
// write was lost: rewrite the document, commit nothing.
const repairDocument Outcome = "repair-document"

// tornVersion is decide's answer for a committed version whose chunks a
// filtered read does not all find: delete its objects by id and commit it
// again.
const tornVersion Outcome = "torn-version"

// decide says whether an event was committed already (its Version exists at
// or below the watermark: Duplicate) or is older than the file's current
// event (Stale). done=false means apply it.
//
// A Duplicate whose document is behind (a crash after publishing, before the
// document was written) is reported as repairDocument.
//
// The Version is looked up by its object id, which is the file_version_id
// of the commit that wrote it; an access change's Version repeats the
// file_version_id under an id of its own (access.go), so it is never taken
// for the file version's commit.
func (w *Writer) decide(ctx context.Context, project, fileID, sequencer, versionID string, watermark int64) (verdict, error) {
	cur, err := w.document(ctx, project, fileID)
	if err != nil {
		return verdict{}, err
	}
	newer := cur.exists && pipeline.CompareSequencers(cur.sequencer, sequencer) > 0
	v, err := w.object(ctx, schema.VersionClass, project, versionID)
	if err != nil {
		return verdict{}, err
	}
	switch {
	case newer:
		return verdict{Stale, true, cur, 0}, nil
	case v != nil && int64(wvquery.Float(v, "valid_from")) <= watermark:
		// Committed, by its Version found by id; readers find chunks by
		// filters, which a weaviate-server killed inside a batch may have
		// left without some objects' index entries (a torn version, store_weaviate.go).
		if whole, err := w.chunksFound(ctx, project, versionID, int(wvquery.Float(v, "chunk_count"))); err != nil || !whole {
			return verdict{tornVersion, err == nil, cur, 0}, err
		}
		if !cur.exists || cur.fileVersionID != versionID {
			return verdict{repairDocument, true, cur, int64(wvquery.Float(v, "valid_from"))}, nil
		}
		return verdict{Duplicate, true, cur, 0}, nil
	}
	return verdict{doc: cur}, nil
}

// repairDocuments writes the documents of the versions of group that
// decide found committed at or below watermark without their document (a
// crash after publishing), and concludes them: Duplicate, as nothing is
// committed.
func (w *Writer) repairDocuments(ctx context.Context, h *hold, group []*pendingVersion, watermark int64, now string) {
	var repair []*pendingVersion
	var docs, memberDocs []*models.Object
	for _, p := range group {
		if !p.finished && p.repair {
			repair = append(repair, p)
			if p.container != nil {
				memberDocs = append(memberDocs, fileDocument(p.fv, p.labels, watermark, now))
			} else {
				docs = append(docs, fileDocument(p.fv, p.labels, watermark, now))
			}
		}
	}
	if len(repair) == 0 {
		return
	}
	// The tombstones of the members a commit deleted were lost with its
	// documents; the container's Document is written last again.
	for _, p := range repair {
		if p.container != nil || isMember(p.fv.Object.Path) || !mayHaveMembers(p) {
			continue
		}
		tombstones, err := w.deletedAt(ctx, p.fv.Object, p.committed, now)
		if err != nil {
			concludeAll(repair, Duplicate, fmt.Errorf("members of %s: %w", p.fv.Object.Path, err))
			return
		}
		memberDocs = append(memberDocs, tombstones...)
	}
	err := h.fenced(ctx, "write")
	if err == nil {
		err = w.batch(ctx, memberDocs)
	}
	if err == nil {
		err = w.batch(ctx, docs)
	}
	for _, p := range repair {
		if err != nil {
			p.conclude(Duplicate, err)
			continue
		}
		// Vectors written while the document was missing have no readers.
		p.conclude(Duplicate, w.syncVectorReaders(ctx, h.project, textFilter("file_version_id", p.fv.FileVersionID), p.labels))
	}
}

// publishVersions commits at seq the versions of group still to commit
// (those neither decide nor the repair concluded), and concludes them: it
// writes their objects, publishes seq, and then writes their documents and
// records their states.
func (w *Writer) publishVersions(ctx context.Context, h *hold, group []*pendingVersion, seq int64, now string) {
	project := h.project
	var apply []*pendingVersion
	for _, p := range group {
		if !p.finished {
			apply = append(apply, p)
		}
	}
	if len(apply) == 0 {
		return
	}
	fail := func(err error) { concludeAll(apply, "", err) }
	gone, err := w.goneMembersOf(ctx, apply, seq)
	if err != nil {
		fail(err)
		return
	}
	// A container's Document is written after its members' and their
	// tombstones: it is what a redelivery checks (repairDocument).
	var objs, docs, memberDocs []*models.Object
	for i, p := range apply {
		if err := w.prepareMetadata(ctx, &p.labels); err != nil {
			fail(fmt.Errorf("metadata properties of %s: %w", project, err))
			return
		}
		objs = append(objs, versionObjects(p.fv, p.labels, seq, now, p.terms)...)
		if p.container != nil {
			memberDocs = append(memberDocs, fileDocument(p.fv, p.labels, seq, now))
		} else {
			docs = append(docs, fileDocument(p.fv, p.labels, seq, now))
		}
		versions, tombstones := memberDeletes(p.fv.Object, gone[i], seq, now)
		objs, memberDocs = append(objs, versions...), append(memberDocs, tombstones...)
	}
	if err := h.fenced(ctx, "write"); err != nil {
		fail(err)
		return
	}
	if err := w.batch(ctx, objs); err != nil {
		fail(fmt.Errorf("write %d file versions of %s: %w", len(apply), project, err))
		return
	}
	if err := w.publish(ctx, h, seq); err != nil {
		fail(fmt.Errorf("publish commit %d of %s: %w", seq, project, err))
		return
	}
	// Documents are the files' current state for listings, written once the commit is visible.
	if err := w.batch(ctx, memberDocs); err != nil {
		fail(fmt.Errorf("write %d member documents of %s: %w", len(memberDocs), project, err))
		return
	}
	if err := w.batch(ctx, docs); err != nil {
		fail(fmt.Errorf("write %d documents of %s: %w", len(docs), project, err))
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
		w.recordState(ctx, fv.Object, state, fv.Error, seq, fv.FileVersionID, fv.ExtractedAt, fv.Access)
		if p.replaces {
			w.closeReplacedOrWarn(ctx, project, fv.FileID, seq)
		}
		for _, g := range gone[i] {
			if g.own {
				w.closeReplacedOrWarn(ctx, project, g.fileID, seq)
			}
		}
		if state == pipeline.StateIndexed {
			if err := w.markEmbedded(ctx, fv, p.labels, seq); err != nil {
				p.conclude("", err)
				return
			}
		}
		p.conclude(Applied, nil)
	})
}

// publish makes seq visible: first in the authoritative store
// (publishSequence, state_kv.go), then in the ProjectState mirror that
// queryd reads (store_weaviate.go).
func (w *Writer) publish(ctx context.Context, h *hold, seq int64) error {
	if w.publishHook != nil {
		return w.publishHook()
	}
	if err := h.publishSequence(ctx, seq); err != nil {
		return err
	}
	return w.mirror(ctx, h.project, seq)
}

// Commits is how many commits this writer has made visible: one per
// sequence, which may hold many file versions (commit.go).
func (w *Writer) Commits() int64 { return w.published.Load() }
