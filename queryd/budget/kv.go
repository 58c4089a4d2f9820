package budget

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the NATS KV bucket of the shared counters.
const Bucket = "strata_tool_budget"

// HandoverSubject prefixes the subject each replica answers handover
// requests on (core NATS request/reply; the replica's id follows).
const HandoverSubject = "strata.budget.handover."

// KV counts runs for every replica that shares a NATS KV bucket, without a
// NATS request per call.
//
// A run is counted by one replica at a time, its owner, in memory. The run's
// KV entry names the owner (and holds the count as of the last handover).
// A call of a run this replica owns is counted locally: no NATS request. A
// call of a run another replica owns asks that replica, over NATS
// request/reply, to hand it over: the owner writes its count to the entry,
// names no owner in it and stops counting the run; this replica then names
// itself in the entry (compare-and-set on the entry's revision) and counts on
// from there. So a run whose calls alternate between two replicas costs
// three NATS requests and one KV write by the old owner per call, and is
// still refused at exactly the call after its budget; a run that stays on a
// replica costs two requests at its first call and none after.
//
// A replica that stops hands its runs back (Release). A replica that dies
// loses the calls it counted since it took its runs: the next replica finds
// no one answering and continues from the entry's count, so a run that
// outlives a crash of its owner may get that many calls more (the budget
// helps an agent stop; it is not an access control). An owned run's entry is
// rewritten, with the current count, at most every quarter of the bucket's
// TTL, so it does not expire under a long run.
type KV struct {
	kv      jetstream.KeyValue
	nc      *nats.Conn
	id      string // names this replica as a run's owner
	sub     *nats.Subscription
	refresh time.Duration // an owned run's entry is rewritten when older than this
	timeout time.Duration // how long an owner has to hand a run over

	mu    sync.Mutex
	runs  map[string]*kvRun // by run
	byKey map[string]*kvRun // by KV key, for handovers
}

// kvRun is one run as this replica knows it.
type kvRun struct {
	key     string     // the run's KV key
	mu      sync.Mutex // held across a handover, so that the owner answers only once it knows
	owned   bool
	calls   int
	last    time.Time
	rev     uint64        // the revision of the entry naming this replica the owner
	written time.Time     // when that entry was written (the calls' clock)
	idle    time.Duration // the run's idle gap, for forgetting ended runs
}

// handoverTimeout bounds a handover request: an owner that does not answer
// within it is taken for dead and the run continues from its KV entry.
const handoverTimeout = 2 * time.Second

// OpenKV creates or opens the counter bucket; an entry expires ttl after its
// last write (at least the idle gap: an expired entry is a new run anyway).
// The replica answers handover requests on js's connection until Release.
func OpenKV(ctx context.Context, js jetstream.JetStream, replicas int, ttl time.Duration) (*KV, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: Bucket, Description: "Strata: tool calls per agent run",
		History: 1, TTL: ttl, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", Bucket, err)
	}
	k := &KV{kv: kv, nc: js.Conn(), id: newReplicaID(), refresh: ttl / 4, timeout: handoverTimeout,
		runs: map[string]*kvRun{}, byKey: map[string]*kvRun{}}
	k.sub, err = k.nc.Subscribe(HandoverSubject+k.id, func(m *nats.Msg) { go k.handOver(m) })
	if err != nil {
		return nil, fmt.Errorf("budget handover subscription: %w", err)
	}
	return k, nil
}

func newReplicaID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}

// Use implements Counter.
func (k *KV) Use(ctx context.Context, run string, now time.Time, idle time.Duration) (int, error) {
	r := k.run(run, now)
	key := r.key
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.owned {
		if err := k.take(ctx, key, r, now); err != nil {
			return 0, err
		}
	}
	if now.Sub(r.last) > idle {
		r.calls = 0 // the run ended: a new one starts
	}
	r.calls++
	r.last, r.idle = now, idle
	if now.Sub(r.written) > k.refresh {
		// Keep the entry from expiring under a long run (and its count close).
		rev, err := k.kv.Update(ctx, key, encode(r.calls, r.last, k.id), r.rev)
		switch {
		case err == nil:
			r.rev, r.written = rev, now
		case errors.Is(err, jetstream.ErrKeyExists):
			r.owned = false // another replica took the run, taking us for dead: it counts from the next call
		}
	}
	return r.calls, nil
}

// run is the local state of a run, made on first use. Runs idle longer than
// their gap are forgotten when there are many: their count no longer
// matters, whatever their KV entry says.
func (k *KV) run(run string, now time.Time) *kvRun {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r, ok := k.runs[run]; ok {
		return r
	}
	if len(k.runs) > 10000 {
		for id, r := range k.runs {
			if r.mu.TryLock() {
				if now.Sub(r.last) > r.idle && r.idle > 0 {
					delete(k.runs, id)
					delete(k.byKey, r.key)
				}
				r.mu.Unlock()
			}
		}
	}
	r := &kvRun{key: keyOf(run)}
	k.runs[run] = r
	k.byKey[r.key] = r
	return r
}

// take makes this replica the run's owner, from its KV entry and, when
// another replica owns it, what that replica hands over. r.mu is held.
func (k *KV) take(ctx context.Context, key string, r *kvRun, now time.Time) error {
	for range 20 {
		e, err := k.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			rev, err := k.kv.Create(ctx, key, encode(0, time.Time{}, k.id))
			switch {
			case err == nil:
				r.own(0, time.Time{}, rev, now)
				return nil
			case errors.Is(err, jetstream.ErrKeyExists): // another replica made it first: again
				continue
			default:
				return fmt.Errorf("count run: %w", err)
			}
		}
		if err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		calls, last, owner := decode(e.Value())
		rev := e.Revision()
		if owner != "" && owner != k.id {
			handed, err := k.askHandover(ctx, owner, key)
			if err != nil {
				return fmt.Errorf("count run: %w", err)
			}
			if handed != nil { // the owner wrote its count back
				calls, last, rev = handed.calls, handed.last, handed.rev
			} // else it does not count the run (any more), or is gone: the entry has the count
		}
		newRev, err := k.kv.Update(ctx, key, encode(calls, last, k.id), rev)
		switch {
		case err == nil:
			r.own(calls, last, newRev, now)
			return nil
		case errors.Is(err, jetstream.ErrKeyExists): // the entry changed meanwhile: again
			continue
		default:
			return fmt.Errorf("count run: %w", err)
		}
	}
	return errors.New("count run: too much contention")
}

func (r *kvRun) own(calls int, last time.Time, rev uint64, now time.Time) {
	r.owned, r.calls, r.last, r.rev, r.written = true, calls, last, rev, now
}

// handover is what an owner answers: the revision of the entry it wrote
// back, and the run's count.
type handover struct {
	rev   uint64
	calls int
	last  time.Time
}

// askHandover asks owner to hand the run over. It returns nil when the owner
// does not count the run, does not answer or is gone.
func (k *KV) askHandover(ctx context.Context, owner, key string) (*handover, error) {
	rctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	msg, err := k.nc.RequestWithContext(rctx, HandoverSubject+owner, []byte(key))
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, nil // the owner is gone: take over from the entry
	case err != nil && ctx.Err() == nil && rctx.Err() != nil:
		return nil, nil // the owner did not answer in time: take it for dead
	case err != nil:
		return nil, err
	case len(msg.Data) < 8:
		return nil, nil
	}
	calls, last, _ := decode(msg.Data[8:])
	return &handover{rev: binary.BigEndian.Uint64(msg.Data[:8]), calls: calls, last: last}, nil
}

// handOver answers a handover request for one of this replica's runs: it
// writes the run's count back to its entry, naming no owner, stops counting
// it and answers with the entry's new revision and the count; or answers
// empty when it does not count the run.
func (k *KV) handOver(m *nats.Msg) {
	key := string(m.Data)
	k.mu.Lock()
	r := k.byKey[key]
	k.mu.Unlock()
	if r == nil {
		_ = m.Respond(nil)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.owned {
		_ = m.Respond(nil)
		return
	}
	r.owned = false
	ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
	defer cancel()
	entry := encode(r.calls, r.last, "")
	rev, err := k.kv.Update(ctx, key, entry, r.rev)
	if err != nil {
		_ = m.Respond(nil) // the entry is no longer ours (or KV failed): the asker goes by the entry
		return
	}
	_ = m.Respond(append(binary.BigEndian.AppendUint64(nil, rev), entry...))
}

// Release hands every run this replica counts back to KV (their counts, no
// owner) and stops answering handover requests; call it when the replica
// stops serving.
func (k *KV) Release(ctx context.Context) {
	k.mu.Lock()
	runs := make([]*kvRun, 0, len(k.runs))
	for _, r := range k.runs {
		runs = append(runs, r)
	}
	k.mu.Unlock()
	for _, r := range runs {
		r.mu.Lock()
		if r.owned {
			r.owned = false
			_, _ = k.kv.Update(ctx, r.key, encode(r.calls, r.last, ""), r.rev)
		}
		r.mu.Unlock()
	}
	_ = k.sub.Unsubscribe()
}

// keyOf is a KV-safe key for a run id of any characters.
func keyOf(run string) string {
	sum := sha256.Sum256([]byte(run))
	return hex.EncodeToString(sum[:16])
}

// encode stores the count, the time of the last call and the owner's id.
func encode(n int, last time.Time, owner string) []byte {
	b := make([]byte, 0, 16+len(owner))
	b = binary.BigEndian.AppendUint64(b, uint64(n))
	var nanos int64
	if !last.IsZero() {
		nanos = last.UnixNano()
	}
	b = binary.BigEndian.AppendUint64(b, uint64(nanos))
	return append(b, owner...)
}

func decode(b []byte) (int, time.Time, string) {
	if len(b) < 16 { // an older entry (count only): its run is over
		return 0, time.Time{}, ""
	}
	var last time.Time
	if nanos := int64(binary.BigEndian.Uint64(b[8:16])); nanos != 0 {
		last = time.Unix(0, nanos)
	}
	return int(binary.BigEndian.Uint64(b[:8])), last, string(b[16:])
}
