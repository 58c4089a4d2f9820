package index

// The layer of a commit that keeps state in NATS KV: each project's
// published sequence (the authority readers' watermark mirrors), the
// sequence its committer intends to write and the fence that committer
// claimed (Sequences), the commit leases that serialise committers across
// indexers (Leases), the marks of embedded versions (EmbeddedMarks) and
// the objects' states (States: once a commit, a delete or a file's
// vectors are visible, the state of its object is recorded, in
// shared/freshness, and the time it took to become searchable observed).
// The commit (commit.go) calls it and comes back; it never writes Weaviate
// (store_weaviate.go).

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/tick"
)

// CommitsBucket is the NATS KV bucket holding each project's published
// commit sequence. It is the authority: a Weaviate read that comes back empty
// while a restarted weaviate-server is still loading its shards must never
// look like "sequence 0", or the rollback of unpublished commits would delete
// published ones. Weaviate's ProjectState object mirrors it for readers.
const CommitsBucket = pipeline.CommitsBucket

// Sequences stores published sequences.
type Sequences interface {
	Get(ctx context.Context, project string) (seq int64, found bool, err error)
	// Set raises the sequence to seq; it never lowers it.
	Set(ctx context.Context, project string, seq int64) error
	// Intend records that objects of commit seq are about to be written;
	// Intent returns the last sequence intended (0 when none was recorded).
	// A commit intended above the published sequence may have left objects
	// behind, and only then does the next commit have to roll back.
	Intend(ctx context.Context, project string, seq int64) error
	Intent(ctx context.Context, project string) (int64, error)
	// Claim makes the caller the project's committer in the store itself:
	// it rewrites the published sequence unchanged and returns the entry's
	// new revision, the commit's fence. A committer paused past its lease
	// while another claimed and committed then finds its fence gone.
	Claim(ctx context.Context, project string, published int64) (fence uint64, err error)
	// Publish raises the sequence to seq by compare-and-set on fence:
	// ErrFenced when another committer claimed since.
	Publish(ctx context.Context, project string, seq int64, fence uint64) error
	// Check returns ErrFenced when another committer claimed since fence.
	Check(ctx context.Context, project string, fence uint64) error
}

// ErrFenced means another indexer claimed the project since this commit
// began: this one's lease passed (the process was paused or cut off past
// it), so it must publish and write nothing more.
var ErrFenced = errors.New("commit fenced: another indexer has claimed the project since this commit began")

// IntentsBucket holds the last commit sequence each project's committer
// was about to write (see Sequences.Intend).
const IntentsBucket = "strata_commit_intents"

// KVSequences keeps sequences in NATS KV.
type KVSequences struct{ kv, intents jetstream.KeyValue }

// OpenSequences creates or opens the bucket.
func OpenSequences(ctx context.Context, js jetstream.JetStream, replicas int) (*KVSequences, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: CommitsBucket,
		Description: "Strata: published commit sequence per project", History: 1, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", CommitsBucket, err)
	}
	intents, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: IntentsBucket,
		Description: "Strata: commit sequence being written per project", History: 1, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", IntentsBucket, err)
	}
	return &KVSequences{kv: kv, intents: intents}, nil
}

// Intend implements Sequences.
func (k *KVSequences) Intend(ctx context.Context, project string, seq int64) error {
	if _, err := k.intents.Put(ctx, project, binary.BigEndian.AppendUint64(nil, uint64(seq))); err != nil {
		return fmt.Errorf("record intent %d of %s: %w", seq, project, err)
	}
	return nil
}

// Intent implements Sequences.
func (k *KVSequences) Intent(ctx context.Context, project string) (int64, error) {
	e, err := k.intents.Get(ctx, project)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read intent of %s: %w", project, err)
	}
	if len(e.Value()) != 8 {
		return 0, fmt.Errorf("intent of %s: corrupt value", project)
	}
	return int64(binary.BigEndian.Uint64(e.Value())), nil
}

// Claim implements Sequences.
func (k *KVSequences) Claim(ctx context.Context, project string, published int64) (uint64, error) {
	for range 20 {
		e, err := k.kv.Get(ctx, project)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			rev, err := k.kv.Create(ctx, project, binary.BigEndian.AppendUint64(nil, uint64(published)))
			if err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return rev, wrapClaim(project, err)
			}
		case err != nil:
			return 0, wrapClaim(project, err)
		default:
			// A sequence other than the one this commit read was published
			// since (by an indexer that took the lease while this one was
			// paused): this commit must not go on.
			if len(e.Value()) != 8 || int64(binary.BigEndian.Uint64(e.Value())) != published {
				return 0, fmt.Errorf("claim sequence of %s at %d: %w", project, published, ErrFenced)
			}
			// The value stays as it is; only its revision moves, and
			// becomes the fence.
			rev, err := k.kv.Update(ctx, project, e.Value(), e.Revision())
			if err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return rev, wrapClaim(project, err)
			}
		}
	}
	return 0, fmt.Errorf("claim sequence of %s: too much contention", project)
}

func wrapClaim(project string, err error) error {
	if err != nil {
		return fmt.Errorf("claim sequence of %s: %w", project, err)
	}
	return nil
}

// Publish implements Sequences.
func (k *KVSequences) Publish(ctx context.Context, project string, seq int64, fence uint64) error {
	_, err := k.kv.Update(ctx, project, binary.BigEndian.AppendUint64(nil, uint64(seq)), fence)
	switch {
	case errors.Is(err, jetstream.ErrKeyExists):
		return fmt.Errorf("publish %d of %s: %w", seq, project, ErrFenced)
	case err != nil:
		return fmt.Errorf("publish sequence of %s: %w", project, err)
	}
	return nil
}

// Check implements Sequences.
func (k *KVSequences) Check(ctx context.Context, project string, fence uint64) error {
	e, err := k.kv.Get(ctx, project)
	if err != nil {
		return fmt.Errorf("check the fence of %s: %w", project, err)
	}
	if e.Revision() != fence {
		return fmt.Errorf("%s: %w", project, ErrFenced)
	}
	return nil
}

// Get implements Sequences.
func (k *KVSequences) Get(ctx context.Context, project string) (int64, bool, error) {
	e, err := k.kv.Get(ctx, project)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read sequence of %s: %w", project, err)
	}
	if len(e.Value()) != 8 {
		return 0, false, fmt.Errorf("sequence of %s: corrupt value", project)
	}
	return int64(binary.BigEndian.Uint64(e.Value())), true, nil
}

// Set implements Sequences with compare-and-set, so it only ever rises.
func (k *KVSequences) Set(ctx context.Context, project string, seq int64) error {
	val := binary.BigEndian.AppendUint64(nil, uint64(seq))
	for range 20 {
		e, err := k.kv.Get(ctx, project)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			if _, err := k.kv.Create(ctx, project, val); err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return err
			}
		case err != nil:
			return fmt.Errorf("publish sequence of %s: %w", project, err)
		default:
			if int64(binary.BigEndian.Uint64(e.Value())) >= seq {
				return nil
			}
			if _, err := k.kv.Update(ctx, project, val, e.Revision()); err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return err
			}
		}
	}
	return fmt.Errorf("publish sequence of %s: too much contention", project)
}

// LocksBucket holds the per-project commit leases of indexer replicas.
const LocksBucket = "strata_commit_locks"

// Leases serialise commits of a project across indexer processes: a commit
// holds the project's lease from reading the watermark to publishing the
// next sequence, so two replicas never commit the same sequence. A lease
// is a KV entry that expires after ttl unless its holder renews it; a
// crashed holder's lease therefore frees itself, and the next holder rolls
// back what the crashed commit left unpublished.
type Leases struct {
	kv     jetstream.KeyValue
	holder string
	ttl    time.Duration
}

// OpenLeases creates or opens the lease bucket; holder names this process.
func OpenLeases(ctx context.Context, js jetstream.JetStream, replicas int, holder string, ttl time.Duration) (*Leases, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: LocksBucket,
		Description: "Strata: per-project commit leases of indexer replicas", History: 1, TTL: ttl,
		Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", LocksBucket, err)
	}
	return &Leases{kv: kv, holder: holder, ttl: ttl}, nil
}

// Acquire waits until it holds project's lease (or ctx ends) and returns
// the release function. The lease is renewed in the background until
// released; until reports (non-blocking) the time until which it surely
// holds: a third of the TTL short of the TTL after the last renewal that
// succeeded was sent (so it is never later than the bucket's expiry,
// counted from the renewal's arrival, whatever the holder's pauses), the
// zero time once a renewal failed. Past it the caller must not write or
// publish.
func (l *Leases) Acquire(ctx context.Context, project string) (release func(), until func() time.Time, err error) {
	backoff := 5 * time.Millisecond
	for {
		sent := time.Now()
		rev, err := l.kv.Create(ctx, project, []byte(l.holder))
		if err == nil {
			return l.hold(project, rev, sent)
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, nil, fmt.Errorf("commit lease of %s: %w", project, err)
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("commit lease of %s: %w", project, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

func (l *Leases) hold(project string, rev uint64, sent time.Time) (func(), func() time.Time, error) {
	var mu sync.Mutex
	sure := l.ttl - l.ttl/3
	validUntil := sent.Add(sure)
	// Renew the lease until it is released, or lost (then no more).
	stopRenewing := tick.Every(l.ttl/3, func() bool {
		sent := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
		next, err := l.kv.Update(ctx, project, []byte(l.holder), rev)
		cancel()
		mu.Lock()
		if err != nil {
			validUntil = time.Time{}
		} else {
			rev, validUntil = next, sent.Add(sure)
		}
		mu.Unlock()
		return err == nil
	})
	var once sync.Once
	release := func() {
		once.Do(func() {
			stopRenewing()
			mu.Lock()
			defer mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// Purge only our own entry: a lease that expired may be someone else's now.
			_ = l.kv.Delete(ctx, project, jetstream.LastRevision(rev))
		})
	}
	until := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return validUntil
	}
	return release, until, nil
}

// CommitLocks serialise a project's commits across indexer processes (Leases).
type CommitLocks interface {
	Acquire(ctx context.Context, project string) (release func(), until func() time.Time, err error)
}

// EmbeddedMarks records that a file version's vectors of a model are written
// (pipeline.EmbeddedBucket), so readers count embedded chunks without a scan.
type EmbeddedMarks interface {
	Mark(ctx context.Context, m pipeline.EmbeddedMark) error
}

// KVEmbeddedMarks keeps the marks in NATS KV.
type KVEmbeddedMarks struct{ kv jetstream.KeyValue }

// OpenEmbeddedMarks creates or opens the bucket.
func OpenEmbeddedMarks(ctx context.Context, js jetstream.JetStream, replicas int) (*KVEmbeddedMarks, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pipeline.EmbeddedBucket,
		Description: "Strata: file versions whose vectors of a model are written", History: 1, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", pipeline.EmbeddedBucket, err)
	}
	return &KVEmbeddedMarks{kv: kv}, nil
}

// Mark implements EmbeddedMarks. A replay puts the same value again.
func (k *KVEmbeddedMarks) Mark(ctx context.Context, m pipeline.EmbeddedMark) error {
	val, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := k.kv.Put(ctx, pipeline.EmbeddedKey(m.Project, m.FileVersionID, m.Model), val); err != nil {
		return fmt.Errorf("mark %s embedded with %s: %w", m.FileVersionID, m.Model, err)
	}
	return nil
}

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
	if isMember(o.Path) {
		return // a member has no object of its own: its container's state is the object's (members.go)
	}
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

// hold is a project held by one commit of this writer: alone in this
// process (a mutex) and across indexers (the commit lease), and, once the
// commit claimed it, by the fence it claimed in the sequence store. It
// carries what the commit's steps in NATS KV need (claim, intend, fenced,
// publishSequence), so no commit's lease or fence is kept writer-wide.
type hold struct {
	w       *Writer
	project string
	// until is the lease's (Leases.Acquire); nil when this process commits alone.
	until   func() time.Time
	fence   uint64
	claimed bool
	release func()
}

// lock makes the caller the only committer of project: in this process
// (a mutex) and across processes (the commit lease). Writes made with the
// context it returns are sent only while the lease surely holds
// (schema.HeldUntil): one paused past it sends nothing when it wakes.
// The caller must call the hold's unlock.
func (w *Writer) lock(ctx context.Context, project string) (held context.Context, h *hold, err error) {
	m, _ := w.projects.LoadOrStore(project, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	h = &hold{w: w, project: project, release: mu.Unlock}
	if w.locks == nil {
		return ctx, h, nil
	}
	release, until, err := w.locks.Acquire(ctx, project)
	if err != nil {
		mu.Unlock()
		return nil, nil, err
	}
	h.until = until
	h.release = func() {
		release()
		mu.Unlock()
	}
	return schema.HeldUntil(ctx, until), h, nil
}

// unlock releases the project: the lease, then this process's mutex.
func (h *hold) unlock() { h.release() }

// intend records that objects of commit seq are about to be written. It
// comes before any of them is: a crash from here on leaves an intent above
// the watermark for the next commit to see.
func (h *hold) intend(ctx context.Context, seq int64) error {
	return h.w.seqs.Intend(ctx, h.project, seq)
}

// claim makes this commit the project's committer in the sequence store
// at watermark published (Sequences.Claim) and keeps the fence for its
// writes and its publish. It comes before anything the commit deletes or
// writes, the roll-back of an interrupted commit included.
func (h *hold) claim(ctx context.Context, published int64) error {
	if h.w.pauseHook != nil {
		h.w.pauseHook("claim")
	}
	fence, err := h.w.seqs.Claim(ctx, h.project, published)
	if err != nil {
		return err
	}
	h.fence, h.claimed = fence, true
	return nil
}

// fenced returns ErrFenced when another indexer claimed the project since
// this commit's claim: nothing more of this commit may be written. Checked
// before each write of objects, so a holder paused past its lease writes
// nothing once it wakes (publish is fenced in the store itself).
func (h *hold) fenced(ctx context.Context, step string) error {
	if h.w.pauseHook != nil {
		h.w.pauseHook(step)
	}
	if !h.claimed {
		return fmt.Errorf("%s: no fence: the commit did not claim its project", h.project)
	}
	if err := h.w.seqs.Check(ctx, h.project, h.fence); err != nil {
		return err
	}
	if h.w.pauseHook != nil { // a pause between the check and the write: the lease guard's case
		h.w.pauseHook(step + " checked")
	}
	return nil
}

// publishSequence raises the project's published sequence to seq by
// compare-and-set on the commit's fence, unless the commit's lease may
// have passed; it counts the commit (Commits).
func (h *hold) publishSequence(ctx context.Context, seq int64) error {
	if h.until != nil && !time.Now().Before(h.until()) {
		// Another indexer may hold the project now; its next commit rolls this one back.
		return fmt.Errorf("publish %d of %s: %w", seq, h.project, schema.ErrLeasePassed)
	}
	if h.w.pauseHook != nil {
		h.w.pauseHook("publish")
	}
	if !h.claimed {
		return fmt.Errorf("publish %d of %s: no fence: the commit did not claim its project", seq, h.project)
	}
	if err := h.w.seqs.Publish(ctx, h.project, seq, h.fence); err != nil {
		return err
	}
	h.w.published.Add(1)
	return nil
}
