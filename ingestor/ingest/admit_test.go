package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/event"
)

// TestLargeObjectsWaitForRoom: objects are read only while their sizes fit
// -object-bytes-in-flight together; one declared over it takes all of it,
// and one of unknown size or over -max-object-bytes (refused unread) is not
// held back.
func TestLargeObjectsWaitForRoom(t *testing.T) {
	in := New(Config{MaxObjectBytes: 100, ObjectBytesInFlight: 100}, nil, nil, nil, nil, nil, nil, nil)
	enter := func(key string, size int64) func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		release, err := in.admit(ctx, event.Record{Key: key, Size: size})
		if err != nil {
			t.Fatalf("%s (%d bytes) was not let in: %v", key, size, err)
		}
		return release
	}
	waits := func(key string, size int64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if release, err := in.admit(ctx, event.Record{Key: key, Size: size}); err == nil {
			release()
			t.Fatalf("%s (%d bytes) was let in without room", key, size)
		}
	}
	first := enter("a", 80)
	waits("b", 80)
	enter("small", 20)()
	enter("unknown size", 0)()
	enter("over the object limit", 500)() // refused unread: takes no room
	first()
	in.cfg.MaxObjectBytes = 1000 // a bound below the object limit (not from the flags)
	huge := enter("huge", 500)   // over the bound: takes all of it
	waits("c", 1)
	huge()
	enter("b", 80)()
}
