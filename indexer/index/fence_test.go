package index

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// handLease is a commit lease the test expires by hand, and another holder
// may acquire it. Unaware, a holder paused past its lease does not know it
// lost it (its renewals were paused too, and its until says so): the
// fence alone must stop it. Aware, its until says the lease passed, as a
// real lease's does once the time is gone.
type handLease struct {
	sem    chan struct{}
	mu     sync.Mutex
	gen    int // acquisitions so far
	holder int // the acquisition holding the lease, 0 when free or expired
	aware  bool
}

func newHandLease() *handLease { return &handLease{sem: make(chan struct{}, 1)} }

func (l *handLease) Acquire(ctx context.Context, _ string) (func(), func() time.Time, error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	l.mu.Lock()
	l.gen++
	mine := l.gen
	l.holder = mine
	l.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.holder == mine { // not expired under it
				l.holder = 0
				<-l.sem
			}
		})
	}
	until := func() time.Time {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.aware && l.holder != mine {
			return time.Time{}
		}
		return time.Now().Add(time.Hour)
	}
	return release, until, nil
}

// expire frees the lease under its holder, as its TTL would.
func (l *handLease) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder = 0
	<-l.sem
}

// pausedRace is a commit of stale.md by a holder paused (as SIGSTOP would)
// at one of its steps, past its lease, while another indexer takes the
// lease and commits fresh.md: what the paused holder got when it woke.
type pausedRace struct {
	err          error // the paused holder's, when it woke
	other        *Writer
	wv           *weaviate.Client
	stale, fresh pipeline.FileVersion
}

// racePausedHolder runs a pausedRace in project p, after a base commit.
func racePausedHolder(t *testing.T, p, step string, aware bool) pausedRace {
	t.Helper()
	paused, _ := newWriter(t)
	other, wv := newWriter(t)
	lease := newHandLease()
	lease.aware = aware
	paused.SetCommitLocks(lease)
	other.SetCommitLocks(lease)
	ctx := context.Background()
	if _, err := other.ApplyFileVersion(ctx, version(p, "base.md", "e0", "10", "base")); err != nil {
		t.Fatal(err)
	}
	asleep, wake := make(chan struct{}), make(chan struct{})
	var once sync.Once
	paused.pauseHook = func(s string) {
		if s == step {
			once.Do(func() { close(asleep); <-wake })
		}
	}
	r := pausedRace{other: other, wv: wv,
		stale: version(p, "stale.md", "e1", "20", "written by the paused holder"),
		fresh: version(p, "fresh.md", "e2", "30", "written by the other holder")}
	done := make(chan error, 1)
	go func() {
		_, err := paused.ApplyFileVersion(ctx, r.stale)
		done <- err
	}()
	<-asleep
	lease.expire()
	if _, err := other.ApplyFileVersion(ctx, r.fresh); err != nil {
		t.Fatal(err)
	}
	close(wake)
	r.err = <-done
	return r
}

// leftNothing checks that only the other holder's commit is visible, at
// the next sequence, and nothing of the paused holder's at or above it.
func (r pausedRace) leftNothing(t *testing.T, p string) {
	t.Helper()
	wm := watermark(t, r.other, p)
	if wm != 2 {
		t.Fatalf("watermark %d, want 2: the base commit and the other holder's", wm)
	}
	if got := visible(t, r.wv, p, r.stale.FileID, wm); len(got) != 0 {
		t.Fatalf("the paused holder's file is visible: %v", got)
	}
	if got := visible(t, r.wv, p, r.stale.FileID, wm+1); len(got) != 0 {
		t.Fatalf("the paused holder left objects above the watermark: %v", got)
	}
	if got := visible(t, r.wv, p, r.fresh.FileID, wm); got[r.fresh.FileVersionID] != 1 {
		t.Fatalf("the other holder's commit: %v", got)
	}
}

// TestAHolderPausedPastItsLeaseLeavesNothing: a commit paused past its
// lease, unaware of it (its renewals were paused too), after reading the
// watermark and before claiming it, before writing its objects or before
// publishing them, publishes nothing and leaves nothing visible when it
// wakes: its fence is gone.
func TestAHolderPausedPastItsLeaseLeavesNothing(t *testing.T) {
	for _, step := range []string{"claim", "write", "publish"} {
		t.Run(step, func(t *testing.T) {
			p := "paused-at-" + step
			r := racePausedHolder(t, p, step, false)
			if !errors.Is(r.err, ErrFenced) {
				t.Fatalf("the paused holder woke and got %v, want ErrFenced", r.err)
			}
			r.leftNothing(t, p)
		})
	}
}

// TestAHolderPausedAfterItsFenceCheckSendsNothing: a commit paused after
// its fence check passed and before its write was sent, past its lease,
// sends nothing when it wakes: its lease may have passed
// (schema.HeldUntil). Without that guard its objects would land at the
// sequence the other holder published, visible.
func TestAHolderPausedAfterItsFenceCheckSendsNothing(t *testing.T) {
	p := "paused-after-check"
	r := racePausedHolder(t, p, "write checked", true)
	if !errors.Is(r.err, schema.ErrLeasePassed) {
		t.Fatalf("the paused holder woke and got %v, want schema.ErrLeasePassed", r.err)
	}
	r.leftNothing(t, p)
}
