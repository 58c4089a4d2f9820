package chaos

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeReplicas answers attempts by replica: an error, nil, or (block) no
// answer until the attempt is cancelled. It records the replicas tried
// and whether a blocked attempt saw its cancellation.
type fakeReplicas struct {
	mu        sync.Mutex
	tried     []int
	cancelled int
	answer    func(attempt, replica int) (err error, block bool)
}

func (f *fakeReplicas) try(ctx context.Context, replica int) error {
	f.mu.Lock()
	n := len(f.tried)
	f.tried = append(f.tried, replica)
	f.mu.Unlock()
	err, block := f.answer(n, replica)
	if !block {
		return err
	}
	<-ctx.Done()
	f.mu.Lock()
	f.cancelled++
	f.mu.Unlock()
	return ctx.Err()
}

var errReset = errors.New(`Post "http://127.0.0.1:1/mcp": EOF`)

func TestServeRead(t *testing.T) {
	long := time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name       string
		deadline   time.Time
		hedgeAfter time.Duration
		answer     func(attempt, replica int) (error, bool)
		want       readOutcome
		tried      []int
		cancelled  int
		errors     int
	}{
		{
			name: "the first replica answers", deadline: long, hedgeAfter: time.Hour,
			answer: func(int, int) (error, bool) { return nil, false },
			want:   readOutcome{Served: true}, tried: []int{1},
		},
		{
			name: "a failed attempt goes to the other replica at once", deadline: long, hedgeAfter: time.Hour,
			answer: func(_, replica int) (error, bool) {
				if replica == 1 {
					return errReset, false
				}
				return nil, false
			},
			want: readOutcome{Served: true, ServedBy: 1}, tried: []int{1, 0}, errors: 1,
		},
		{
			name: "a slow attempt is hedged on the other replica, and cancelled when the hedge answers", deadline: long, hedgeAfter: 10 * time.Millisecond,
			answer: func(_, replica int) (error, bool) { return nil, replica == 1 },
			want:   readOutcome{Served: true, ServedBy: 1, Hedged: true}, tried: []int{1, 0}, cancelled: 1,
		},
		{
			name: "without hedging a slow attempt runs into the deadline", deadline: time.Now().Add(50 * time.Millisecond), hedgeAfter: 0,
			answer: func(_, replica int) (error, bool) { return nil, replica == 1 },
			want:   readOutcome{Slow: true}, tried: []int{1}, cancelled: 1, errors: 1,
		},
		{
			name: "an attempt failing while the hedge runs waits for the hedge", deadline: long, hedgeAfter: 10 * time.Millisecond,
			answer: func(attempt, _ int) (error, bool) {
				if attempt == 0 {
					time.Sleep(30 * time.Millisecond) // fails after the hedge was sent
					return errReset, false
				}
				time.Sleep(60 * time.Millisecond)
				return nil, false
			},
			want: readOutcome{Served: true, ServedBy: 1, Hedged: true}, tried: []int{1, 0}, errors: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeReplicas{answer: tc.answer}
			got := serveRead(context.Background(), tc.deadline, 2, 1, tc.hedgeAfter, nil, f.try)
			if got.Served != tc.want.Served || got.ServedBy != tc.want.ServedBy || got.Hedged != tc.want.Hedged || got.Slow != tc.want.Slow {
				t.Errorf("outcome = %+v, want %+v", got, tc.want)
			}
			if !slices.Equal(f.tried, tc.tried) {
				t.Errorf("replicas tried = %v, want %v", f.tried, tc.tried)
			}
			if f.cancelled != tc.cancelled {
				t.Errorf("%d attempts saw their cancellation, want %d (serveRead must wait for every attempt)", f.cancelled, tc.cancelled)
			}
			if len(got.Errors) != tc.errors {
				t.Errorf("errors %q, want %d (an attempt cancelled by the answer is none)", got.Errors, tc.errors)
			}
		})
	}
}

func TestServeReadRefusedEverywhere(t *testing.T) {
	f := &fakeReplicas{answer: func(int, int) (error, bool) { return errReset, false }}
	got := serveRead(context.Background(), time.Now().Add(300*time.Millisecond), 2, 0, 10*time.Millisecond, nil, f.try)
	if got.Served || got.Slow {
		t.Errorf("outcome = %+v, want refused (not served, not slow)", got)
	}
	// Both replicas at once, then one attempt per 100 ms pause: never a spin.
	if n := len(f.tried); n < 2 || n > 6 {
		t.Errorf("%d attempts in 300 ms, want both replicas and then at most one per 100 ms", n)
	}
	if len(got.Errors) != len(f.tried) {
		t.Errorf("%d errors for %d attempts", len(got.Errors), len(f.tried))
	}
	if f.tried[0] != 0 || f.tried[1] != 1 {
		t.Errorf("replicas tried = %v, want 0 then 1 first", f.tried)
	}
}

func TestServeReadHedgesWithinBudget(t *testing.T) {
	slowFirst := func(_, replica int) (error, bool) { return nil, replica == 0 }
	spent := newHedgeBudget(0.5, 2)
	spent.tokens = 0
	f := &fakeReplicas{answer: slowFirst}
	got := serveRead(context.Background(), time.Now().Add(100*time.Millisecond), 2, 0, 10*time.Millisecond, spent, f.try)
	if got.Hedged || got.Served || !got.Slow {
		t.Errorf("with no hedge left: outcome = %+v, want the first attempt alone, slow", got)
	}
	// That read earned half a token, the next one the other half.
	f = &fakeReplicas{answer: slowFirst}
	got = serveRead(context.Background(), time.Now().Add(time.Minute), 2, 0, 10*time.Millisecond, spent, f.try)
	if !got.Hedged || !got.Served || got.ServedBy != 1 {
		t.Errorf("with a hedge earned: outcome = %+v, want served by the hedge", got)
	}
}

func TestHedgeBudget(t *testing.T) {
	b := newHedgeBudget(0.25, 2)
	if !b.spend() || !b.spend() || b.spend() {
		t.Fatal("a new budget holds burst (2) hedges, then none")
	}
	for range 3 {
		b.read()
	}
	if b.spend() {
		t.Error("3 reads at a share of 0.25 earned a hedge")
	}
	b.read()
	if !b.spend() {
		t.Error("4 reads at a share of 0.25 did not earn a hedge")
	}
	for range 100 {
		b.read()
	}
	if !b.spend() || !b.spend() || b.spend() {
		t.Error("saved tokens are not capped at burst (2)")
	}
}

// TestServeReadCutByItsDeadlineIsSlow: an attempt whose answer is cut off
// by the read's deadline mid-body fails with a closed connection, not with
// the deadline; it was slow, not refused.
func TestServeReadCutByItsDeadlineIsSlow(t *testing.T) {
	cut := errors.New("transport error: failed to decode response: read tcp: use of closed network connection")
	try := func(ctx context.Context, _ int) error {
		<-ctx.Done()
		return cut
	}
	got := serveRead(context.Background(), time.Now().Add(50*time.Millisecond), 2, 0, 0, nil, try)
	if got.Served || !got.Slow {
		t.Fatalf("outcome = %+v, want slow (cut by the deadline), not refused", got)
	}
}
