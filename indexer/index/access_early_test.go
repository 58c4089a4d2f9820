package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/worker"
)

// fakeMsg is a chunks-stream message delivered for the delivered-th time;
// only what HandleChunks reads is implemented.
type fakeMsg struct {
	jetstream.Msg
	kind      string
	body      []byte
	delivered uint64
	metaErr   error
}

func (m *fakeMsg) Headers() nats.Header {
	return nats.Header{pipeline.HeaderKind: []string{m.kind}}
}
func (m *fakeMsg) Data() []byte    { return m.body }
func (m *fakeMsg) Subject() string { return "strata.chunks.test" }
func (m *fakeMsg) Metadata() (*jetstream.MsgMetadata, error) {
	if m.metaErr != nil {
		return nil, m.metaErr
	}
	return &jetstream.MsgMetadata{NumDelivered: m.delivered, Stream: pipeline.ChunksStream}, nil
}

func tagsMsg(t *testing.T, ac pipeline.TagsChanged, delivered uint64) *fakeMsg {
	t.Helper()
	body, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeMsg{kind: pipeline.KindTagsChanged, body: body, delivered: delivered}
}

// logBuffer collects a Writer's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func capturingLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// TestAbsentAccessChangeDecision: an access change of a file without a
// document is retried (a transient error) until its last delivery, which
// is acknowledged with a warning rather than dead-lettered.
func TestAbsentAccessChangeDecision(t *testing.T) {
	ac := pipeline.TagsChanged{Object: pipeline.Object{Project: "p", Path: "team/early.md"}, FileID: "f",
		Access: pipeline.Access{Groups: []string{"legal"}, ReadAt: time.Now()}}
	for delivered := uint64(1); delivered <= pipeline.MaxDeliver+1; delivered++ {
		log, logs := capturingLogger()
		w := &Writer{log: log}
		err := w.absentAccessChange(tagsMsg(t, ac, delivered), ac)
		if delivered < pipeline.MaxDeliver {
			if err == nil || worker.IsPermanent(err) || !errors.Is(err, errNoDocumentYet) {
				t.Fatalf("delivery %d: %v, want a transient no-document error", delivered, err)
			}
			if want := "access change of team/early.md: no document yet, retrying"; err.Error() != want {
				t.Errorf("delivery %d: error %q, want %q", delivered, err, want)
			}
			if logs.String() != "" {
				t.Errorf("delivery %d logged %q; the worker logs the retry", delivered, logs)
			}
			continue
		}
		if err != nil {
			t.Fatalf("delivery %d (the last): %v, want acknowledged", delivered, err)
		}
		if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "never got a document") ||
			!strings.Contains(l, "path=team/early.md") {
			t.Errorf("delivery %d: log %q, want a warning naming the file", delivered, l)
		}
	}
	// Without metadata the worker's count decides: retry.
	w := &Writer{log: slog.New(slog.DiscardHandler)}
	msg := tagsMsg(t, ac, 0)
	msg.metaErr = errors.New("not a JetStream message")
	if err := w.absentAccessChange(msg, ac); !errors.Is(err, errNoDocumentYet) {
		t.Errorf("without metadata: %v, want a retry", err)
	}
}

// TestAccessChangeBeforeFirstCommit: a tag change read after the file was
// fetched, handled before the file's first version is committed, is Absent;
// delivered again after the commit (whose groups were read earlier), it is
// applied: the file takes the change's readers, not the commit's.
func TestAccessChangeBeforeFirstCommit(t *testing.T) {
	w, wv := newWriter(t)
	const p = "acl-early"
	t0 := time.Now().UTC()
	v1 := withAccess(version(p, "early.md", "e1", "10", "one", "two"), t0, "eng") // fetched at t0
	change := accessChange(v1, t0.Add(2*time.Second), "legal")                    // tags changed while it was extracted
	mustChange(t, w, change, Absent)
	if doc, err := w.document(context.Background(), p, v1.FileID); err != nil || doc.exists {
		t.Fatalf("an absent change wrote a document: %+v %v", doc, err)
	}
	mustApply(t, w, v1, Applied)
	mustVectors(t, w, vectorsOf(v1, testModel, 3))
	wantReaders(t, wv, p, v1.FileID, []string{"eng"}, nil)
	wm := watermark(t, w, p)

	mustChange(t, w, change, Applied) // the redelivery
	wantReaders(t, wv, p, v1.FileID, []string{"legal"},
		map[string]int{schema.SectionClass: 1, schema.ChunkClass: 2, schema.VersionClass: 2, schema.ChunkVectorClass: 2})
	if got := committedReaders(t, wv, p, v1.FileID); !slices.Equal(got, []string{"eng", "legal"}) {
		t.Errorf("Versions' committed readers %q, want eng (the commit), then legal (the change)", got)
	}
	if got := watermark(t, w, p); got != wm+1 {
		t.Errorf("watermark %d after the change, want %d", got, wm+1)
	}
	if doc := documentOf(t, p, v1.FileID); !doc.labels.readAt.Equal(change.Access.ReadAt) {
		t.Errorf("document access read at %s, want the change's %s", doc.labels.readAt, change.Access.ReadAt)
	}
	mustChange(t, w, change, Duplicate) // a further redelivery does nothing
}

// TestHandleAccessChangeBeforeFirstCommit: the same race through
// HandleChunks, as the worker delivers it: the early change is sent back
// for redelivery, applied on a delivery after the commit; a change of a
// file that never gets a document is acknowledged on its last delivery.
func TestHandleAccessChangeBeforeFirstCommit(t *testing.T) {
	_, wv := newWriter(t)
	log, logs := capturingLogger()
	w := New(Config{Weaviate: sharedClient, Sequences: sharedSeqs, Log: log})
	ctx := context.Background()
	const p = "acl-early-handler"
	t0 := time.Now().UTC()
	v1 := withAccess(version(p, "early.md", "e1", "10", "one", "two"), t0, "eng")
	change := accessChange(v1, t0.Add(2*time.Second), "legal")

	err := w.HandleChunks(ctx, tagsMsg(t, change, 1))
	if err == nil || worker.IsPermanent(err) || !errors.Is(err, errNoDocumentYet) {
		t.Fatalf("first delivery before the commit: %v, want a transient no-document error", err)
	}
	mustVectors(t, w, vectorsOf(v1, testModel, 3)) // the embedder may be first
	body, _ := json.Marshal(v1)
	if err := w.HandleChunks(ctx, &fakeMsg{kind: pipeline.KindFileVersion, body: body, delivered: 1}); err != nil {
		t.Fatalf("file version: %v", err)
	}
	if err := w.HandleChunks(ctx, tagsMsg(t, change, 2)); err != nil {
		t.Fatalf("redelivery after the commit: %v", err)
	}
	wantReaders(t, wv, p, v1.FileID, []string{"legal"}, map[string]int{schema.ChunkClass: 2, schema.VersionClass: 2, schema.ChunkVectorClass: 2})
	if l := logs.String(); !strings.Contains(l, `msg="access change applied"`) {
		t.Errorf("no applied change logged: %s", l)
	}

	// A file that never gets a document: retried, then acknowledged.
	never := accessChange(withAccess(version(p, "never.md", "n1", "11", "x"), t0, "eng"), t0.Add(time.Second), "legal")
	for d := uint64(1); d < pipeline.MaxDeliver; d++ {
		if err := w.HandleChunks(ctx, tagsMsg(t, never, d)); !errors.Is(err, errNoDocumentYet) {
			t.Fatalf("delivery %d of a change of a file without a document: %v, want a retry", d, err)
		}
	}
	if err := w.HandleChunks(ctx, tagsMsg(t, never, pipeline.MaxDeliver)); err != nil {
		t.Fatalf("last delivery: %v, want acknowledged", err)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "path=never.md") {
		t.Errorf("no warning for the change given up: %s", l)
	}
	if doc, err := w.document(ctx, p, never.FileID); err != nil || doc.exists {
		t.Errorf("the given-up change wrote a document: %+v %v", doc, err)
	}
}
