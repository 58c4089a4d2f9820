package stagehealth

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestDiskFull: the refusals the engines send when out of space, as their
// clients return them, are told apart from other failures.
func TestDiskFull(t *testing.T) {
	full := []error{
		fmt.Errorf("publish file version: %w", &jetstream.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}),
		fmt.Errorf("publish: %w", jetstream.ErrJetStreamNotEnabled),
		errors.New(`write 3 file versions of acme: batch: status 500: {"error":[{"message":"shard ChunkVector_acme: store is read-only"}]}`),
		errors.New("put asset: Storage reached its minimum free drive threshold."),
		errors.New("write /data/x: no space left on device"),
	}
	for _, err := range full {
		if !DiskFull(err) {
			t.Errorf("not taken for a full disk: %v", err)
		}
	}
	other := []error{nil, errors.New("context deadline exceeded"), fmt.Errorf("fetch: %w", jetstream.ErrNoHeartbeat),
		errors.New("connection refused"), errors.New("version gone"),
		// A name in an error is no refusal: a worker would hold it in place for ever.
		errors.New(`fetch acme/read-only-notes.md: 403 Forbidden`)}
	for _, err := range other {
		if DiskFull(err) {
			t.Errorf("taken for a full disk: %v", err)
		}
	}
}

// TestObserveAndConditions: a refusal starts the condition with its time,
// more keep that time, another failure leaves it, a success ends it; the
// memory budget is over only with a limit set and passed.
func TestObserveAndConditions(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 1, 0, time.UTC)
	r := &Reporter{now: func() time.Time { return now }, report: Report{Stage: "indexer", Instance: "a"}}
	r.Observe(&jetstream.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"})
	now = now.Add(time.Minute)
	r.Observe(errors.New("store is read-only"))
	r.Observe(errors.New("timeout"))
	got := r.report.Conditions()
	if len(got) != 1 || !strings.Contains(got[0], "refused by a full disk since 12:00:01: store is read-only") {
		t.Fatalf("conditions %q", got)
	}
	r.Observe(nil)
	if c := r.report.Conditions(); len(c) != 0 {
		t.Fatalf("after a success: %q", c)
	}
	over := Report{RSSBytes: 900 << 20, MemoryLimitBytes: 512 << 20, OverMemoryBudget: true}
	if c := over.Conditions(); len(c) != 1 || !strings.Contains(c[0], "over its memory budget: 900 MiB resident, -memory-limit 512 MiB") {
		t.Fatalf("over budget: %q", c)
	}
}
