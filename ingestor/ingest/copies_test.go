package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/tokens"
	"github.com/strata-kb/strata/shared/pipeline"
)

// slowReader reads every file as one paragraph once let go, counting reads.
type slowReader struct {
	reads   atomic.Int32
	started chan struct{} // a read began
	letGo   chan struct{}
}

func (r *slowReader) Extract(ctx context.Context, data []byte, _ string, _ extract.Limits) (*extract.Document, error) {
	r.reads.Add(1)
	r.started <- struct{}{}
	select {
	case <-r.letGo:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b := extract.NewBuilder("text")
	b.Add(extract.Paragraph, 0, 0, string(data))
	return b.Finish()
}

// lockedPub publishes into a list under a lock, failing while failing is set.
type lockedPub struct {
	mu      sync.Mutex
	msgs    int
	failing bool
}

func (p *lockedPub) Publish(context.Context, string, string, map[string]string, []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing {
		return errors.New("stream unavailable")
	}
	p.msgs++
	return nil
}

type lockedStates struct {
	mu sync.Mutex
	fakeStates
}

func (s *lockedStates) Put(ctx context.Context, st pipeline.ObjectState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fakeStates.Put(ctx, st)
}

func (s *lockedStates) Get(ctx context.Context, project, key string) (*pipeline.ObjectState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fakeStates.Get(ctx, project, key)
}

// TestASecondCopyOfAnEventWaitsForTheFirst: MinIO's second copy of an
// upload event, arriving while the first is being read here, waits for it
// and is not read again when the first published; when the first failed,
// the copy reads the file itself.
func TestASecondCopyOfAnEventWaitsForTheFirst(t *testing.T) {
	for _, firstFails := range []bool{false, true} {
		c, err := tokens.New()
		if err != nil {
			t.Fatal(err)
		}
		reader := &slowReader{started: make(chan struct{}, 2), letGo: make(chan struct{})}
		pub := &lockedPub{failing: firstFails}
		in := New(Config{MaxObjectBytes: 8 << 10, TargetTokens: 64, Limits: limits()},
			fakeStore{objects: map[string][]byte{"acme/scan.txt": []byte("a slow file")}},
			&fakeAssets{}, reader, pub, &lockedStates{}, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
		event := eventJSON("s3:ObjectCreated:Put", "acme/scan.txt", 11)
		live, durable := make(chan error, 1), make(chan error, 1)
		go func() { live <- in.HandleEvent(context.Background(), event) }()
		<-reader.started // the live copy is reading
		go func() { durable <- in.HandleEvent(context.Background(), event) }()
		select { // the durable copy waits: it does not start a read of its own
		case <-reader.started:
			t.Fatalf("first fails %v: the second copy read the file beside the first", firstFails)
		case err := <-durable:
			t.Fatalf("first fails %v: the second copy ended (%v) before the first", firstFails, err)
		case <-time.After(200 * time.Millisecond):
		}
		if firstFails {
			go func() {
				<-reader.started
				pub.mu.Lock()
				pub.failing = false
				pub.mu.Unlock()
				reader.letGo <- struct{}{}
			}()
		}
		reader.letGo <- struct{}{}
		if err := <-live; (err != nil) != firstFails {
			t.Fatalf("first fails %v: the first copy returned %v", firstFails, err)
		}
		if err := <-durable; err != nil {
			t.Fatalf("first fails %v: the second copy: %v", firstFails, err)
		}
		want := int32(1)
		if firstFails {
			want = 2
		}
		if got := reader.reads.Load(); got != want || pub.msgs != 1 {
			t.Fatalf("first fails %v: %d reads and %d file versions published, want %d and 1", firstFails, got, pub.msgs, want)
		}
	}
}
