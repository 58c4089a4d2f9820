package index

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/strata-kb/strata/shared/tick"
)

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
// released; lost reports (non-blocking) whether a renewal failed, in which
// case the caller must not publish.
func (l *Leases) Acquire(ctx context.Context, project string) (release func(), lost func() bool, err error) {
	backoff := 5 * time.Millisecond
	for {
		rev, err := l.kv.Create(ctx, project, []byte(l.holder))
		if err == nil {
			return l.hold(project, rev)
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

func (l *Leases) hold(project string, rev uint64) (func(), func() bool, error) {
	var mu sync.Mutex
	lostLease := false
	// Renew the lease until it is released, or lost (then no more).
	stopRenewing := tick.Every(l.ttl/3, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
		next, err := l.kv.Update(ctx, project, []byte(l.holder), rev)
		cancel()
		mu.Lock()
		if err != nil {
			lostLease = true
		} else {
			rev = next
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
	lost := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return lostLease
	}
	return release, lost, nil
}

// CommitLocks serialise a project's commits across indexer processes (Leases).
type CommitLocks interface {
	Acquire(ctx context.Context, project string) (release func(), lost func() bool, err error)
}
