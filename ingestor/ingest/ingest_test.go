package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/tokens"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

type fakeStore struct {
	objects  map[string][]byte
	err      error
	tags     map[string]map[string]string // by key
	metadata map[string]map[string]string // by key
	tagsErr  error
}

func (f fakeStore) Get(_ context.Context, _, key, _ string, maxBytes int64) (Fetched, error) {
	if f.err != nil {
		return Fetched{}, f.err
	}
	b, ok := f.objects[key]
	if !ok {
		return Fetched{}, ErrGone
	}
	if int64(len(b)) > maxBytes {
		return Fetched{}, ErrTooLarge
	}
	return Fetched{Data: b, Metadata: f.metadata[key]}, nil
}

func (f fakeStore) Metadata(_ context.Context, _, key, _, _ string) (map[string]string, error) {
	if f.err != nil {
		return nil, f.err
	}
	if _, ok := f.objects[key]; !ok {
		return nil, ErrGone
	}
	return f.metadata[key], nil
}

func (f fakeStore) Tags(_ context.Context, _, key, _ string) (map[string]string, error) {
	if f.tagsErr != nil {
		return nil, f.tagsErr
	}
	if f.err != nil {
		return nil, f.err
	}
	if _, ok := f.objects[key]; !ok {
		return nil, ErrGone
	}
	return f.tags[key], nil
}

type published struct {
	subject, msgID string
	headers        map[string]string
	data           []byte
}

type fakePub struct{ msgs []published }

type fakeStates struct{ states []pipeline.ObjectState }

func (f *fakeStates) Put(_ context.Context, st pipeline.ObjectState) error {
	f.states = append(f.states, st)
	return nil
}

func (f *fakeStates) Get(_ context.Context, project, key string) (*pipeline.ObjectState, error) {
	for i := len(f.states) - 1; i >= 0; i-- {
		if f.states[i].Project == project && f.states[i].Key == key {
			return &f.states[i], nil
		}
	}
	return nil, nil
}

type fakeAssets struct{ keys []string }

func (f *fakeAssets) PutAsset(_ context.Context, key string, _ []byte, _ string) (string, error) {
	f.keys = append(f.keys, key)
	return "assets/" + key, nil
}

func registry() Extractor { return detect.NewRegistry(pdf.Poppler{}) }

func limits() extract.Limits {
	lim := extract.DefaultLimits()
	lim.Timeout = 20 * time.Second
	return lim
}

func (f *fakePub) Publish(_ context.Context, subject, msgID string, headers map[string]string, data []byte) error {
	f.msgs = append(f.msgs, published{subject, msgID, headers, data})
	return nil
}

func eventJSON(name, key string, size int) []byte {
	return fmt.Appendf(nil, `{"EventName":%q,"Records":[{"eventName":%q,"eventTime":"2026-11-22T00:00:00Z","s3":{"bucket":{"name":"strata"},"object":{"key":%q,"size":%d,"eTag":"etag1","sequencer":"0A"}}}]}`,
		name, name, url.QueryEscape(key), size)
}

func newIngestor(t *testing.T, objects map[string][]byte) (*Ingestor, *fakePub) {
	t.Helper()
	c, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	pub := &fakePub{}
	return New(Config{MaxObjectBytes: 8 << 10, TargetTokens: 64, Limits: limits()}, fakeStore{objects: objects},
		&fakeAssets{}, registry(), pub, &fakeStates{}, c, slog.New(slog.NewTextHandler(io.Discard, nil))), pub
}

func decode(t *testing.T, p published) pipeline.FileVersion {
	t.Helper()
	var fv pipeline.FileVersion
	if err := json.Unmarshal(p.data, &fv); err != nil {
		t.Fatal(err)
	}
	return fv
}

func TestFileVersions(t *testing.T) {
	tests := []struct {
		key, content string
		status       string
		format       string
		errContains  string
		chunks       int
	}{
		{key: "acme/docs/guide.md", content: "# Title\n\nBody text.\n\n## Two\n\nMore.", status: pipeline.StatusIndexed, format: "markdown", chunks: 2},
		{key: "acme/notes.txt", content: "plain words\n\nsecond paragraph", status: pipeline.StatusIndexed, format: "text", chunks: 1},
		{key: "acme/README", content: "no extension, still text", status: pipeline.StatusIndexed, format: "text", chunks: 1},
		{key: "acme/empty.md", content: "", status: pipeline.StatusFailed, errContains: "empty file"},
		{key: "acme/fake.md", content: "\x00\x01binary", status: pipeline.StatusFailed, errContains: "binary or invalid UTF-8"},
		{key: "acme/latin1.txt", content: "caf\xe9", status: pipeline.StatusFailed, errContains: "invalid UTF-8"},
		{key: "acme/photo.png", content: "\x89PNG\r\n\x1a\n\x00\x00", status: pipeline.StatusFailed, errContains: "corrupt"},
		{key: "acme/archive.bin", content: "\x7fELF\x02\x01\x00\x00binary", status: pipeline.StatusUnsupported, format: "binary", errContains: "unsupported file type"},
		{key: "acme/legacy.doc", content: legacyDoc(t), status: pipeline.StatusUnsupported, format: "binary", errContains: "legacy Office"},
		{key: "acme/page.html", content: "<html><body><h1>Hi</h1><p>there</p></body></html>", status: pipeline.StatusIndexed, format: "html", chunks: 1},
		{key: "acme/huge.md", content: strings.Repeat("a", 9000), status: pipeline.StatusFailed, errContains: "over the 8192 byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			in, pub := newIngestor(t, map[string][]byte{tt.key: []byte(tt.content)})
			if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", tt.key, len(tt.content))); err != nil {
				t.Fatal(err)
			}
			if len(pub.msgs) != 1 {
				t.Fatalf("%d messages", len(pub.msgs))
			}
			m := pub.msgs[0]
			fv := decode(t, m)
			if m.subject != "strata.chunks.acme" || m.headers[pipeline.HeaderKind] != pipeline.KindFileVersion || m.msgID != fv.FileVersionID {
				t.Fatalf("published on %s kind %s id %s", m.subject, m.headers[pipeline.HeaderKind], m.msgID)
			}
			if fv.Status != tt.status || fv.Format != tt.format || len(fv.Chunks) != tt.chunks || !strings.Contains(fv.Error, tt.errContains) {
				t.Fatalf("status %q format %q chunks %d error %q", fv.Status, fv.Format, len(fv.Chunks), fv.Error)
			}
			path := strings.TrimPrefix(tt.key, "acme/")
			if fv.FileID != ids.File("acme", "", path) || fv.Object.Path != path || !ids.Valid(fv.FileVersionID) {
				t.Fatalf("ids: %+v", fv)
			}
			for i, c := range fv.Chunks {
				if c.ID != ids.Chunk(fv.FileVersionID, i) || c.Index != i || c.SectionID == "" {
					t.Fatalf("chunk %d: %+v", i, c)
				}
			}
		})
	}
}

func TestSameContentSameIDs(t *testing.T) {
	objects := map[string][]byte{"acme/a.md": []byte("# A\n\ntext")}
	in, pub := newIngestor(t, objects)
	ev := eventJSON("s3:ObjectCreated:Put", "acme/a.md", 9)
	for i := range 2 {
		// The replay comes after the copy window: within it, a copy of an
		// event published here is skipped (TestASecondCopyOfAnEventWaitsForTheFirst).
		in.now = func() time.Time { return time.Now().Add(time.Duration(i) * (CopyWindow + time.Minute)) }
		if err := in.HandleEvent(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(pub.msgs) != 2 {
		t.Fatalf("%d file versions published for an event and its replay", len(pub.msgs))
	}
	a, b := decode(t, pub.msgs[0]), decode(t, pub.msgs[1])
	if a.FileVersionID != b.FileVersionID || a.Chunks[0].ID != b.Chunks[0].ID || pub.msgs[0].msgID != pub.msgs[1].msgID {
		t.Fatal("a replayed event must produce the same ids and message id")
	}
}

func TestDeleteAndSuperseded(t *testing.T) {
	in, pub := newIngestor(t, map[string][]byte{})
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectRemoved:Delete", "acme@feature-1/x.md", 0)); err != nil {
		t.Fatal(err)
	}
	var d pipeline.FileDeleted
	if len(pub.msgs) != 1 || pub.msgs[0].headers[pipeline.HeaderKind] != pipeline.KindFileDeleted {
		t.Fatalf("%+v", pub.msgs)
	}
	_ = json.Unmarshal(pub.msgs[0].data, &d)
	if d.FileID != ids.File("acme", "feature-1", "x.md") || d.Object.Branch != "feature-1" || d.Object.Sequencer != "0A" {
		t.Fatalf("%+v", d)
	}
	// The object changed or vanished since the event: skip it, a newer event follows.
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", "acme/gone.md", 3)); err != nil || len(pub.msgs) != 1 {
		t.Fatalf("superseded event: err %v, %d messages", err, len(pub.msgs))
	}
}

func TestErrorsArePermanentOrRetried(t *testing.T) {
	in, _ := newIngestor(t, nil)
	for name, ev := range map[string][]byte{
		"malformed":     []byte("{not json"),
		"traversal key": eventJSON("s3:ObjectCreated:Put", "acme/../beta/x.md", 1),
		"bidi key":      eventJSON("s3:ObjectCreated:Put", "acme/evil\u202egnp.md", 1),
		"bad project":   eventJSON("s3:ObjectCreated:Put", "not a project/x.md", 1),
	} {
		if err := in.HandleEvent(context.Background(), ev); !worker.IsPermanent(err) {
			t.Errorf("%s: err = %v, want a permanent error", name, err)
		}
	}
	c, _ := tokens.New()
	flaky := New(Config{MaxObjectBytes: 1 << 10, Limits: limits()}, fakeStore{err: errors.New("connection refused")}, &fakeAssets{}, registry(), &fakePub{}, &fakeStates{}, c, slog.New(slog.DiscardHandler))
	err := flaky.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", "acme/a.md", 1))
	if err == nil || worker.IsPermanent(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("a store outage must be retried, got %v", err)
	}
}

// MinIO announces every event twice (at once, and again from its durable
// queue): a copy of a committed event is skipped; a copy of one still pending
// is processed again, with the same message id, so the stream drops it; a
// replay long after is processed again.
func TestSecondCopyOfAnEvent(t *testing.T) {
	c, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	const key = "acme/guide.md"
	put, del := eventJSON("s3:ObjectCreated:Put", key, 6), eventJSON("s3:ObjectRemoved:Delete", key, 0)
	seenAgo := func(ago time.Duration, state, etag, sequencer string) *fakeStates {
		return &fakeStates{states: []pipeline.ObjectState{{Key: key, Project: "acme", ETag: etag, Sequencer: sequencer, State: state, Sequence: 3,
			Stages: pipeline.StageTimes{Seen: time.Now().Add(-ago)}}}}
	}
	committed := func(state, etag, sequencer string) *fakeStates { return seenAgo(3*time.Second, state, etag, sequencer) }
	tests := []struct {
		name      string
		states    *fakeStates
		event     []byte
		published int
	}{
		{"put never seen", &fakeStates{}, put, 1},
		{"put still pending", committed(pipeline.StatePending, "etag1", "0A"), put, 1},
		{"put committed", committed(pipeline.StateIndexed, "etag1", "0A"), put, 0},
		{"put committed as failed", committed(pipeline.StateFailed, "etag1", "0A"), put, 0},
		{"put embedded", committed(pipeline.StateEmbedded, "etag1", "0A"), put, 0},
		{"put with another etag", committed(pipeline.StateIndexed, "etag0", "0A"), put, 1},
		{"put after an older event", committed(pipeline.StateIndexed, "etag1", "09"), put, 1},
		{"put when the same sequencer was a delete", committed(pipeline.StateDeleted, "", "0A"), put, 1},
		{"delete committed", committed(pipeline.StateDeleted, "", "0A"), del, 0},
		{"delete after the put it removes", committed(pipeline.StateIndexed, "etag1", "09"), del, 1},
		{"put replayed long after", seenAgo(CopyWindow+time.Minute, pipeline.StateIndexed, "etag1", "0A"), put, 1},
		{"delete replayed long after", seenAgo(CopyWindow+time.Minute, pipeline.StateDeleted, "", "0A"), del, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := &fakePub{}
			in := New(Config{MaxObjectBytes: 1 << 10, TargetTokens: 64, Limits: limits()},
				fakeStore{objects: map[string][]byte{key: []byte("# Guide")}}, &fakeAssets{}, registry(), pub, tt.states, c, slog.New(slog.DiscardHandler))
			if err := in.HandleEvent(context.Background(), tt.event); err != nil {
				t.Fatal(err)
			}
			if len(pub.msgs) != tt.published {
				t.Fatalf("published %d messages, want %d", len(pub.msgs), tt.published)
			}
		})
	}
}

// The file version carries when its event was seen and extracted, and the
// pending state when the upload happened and was seen.
func TestStageTimes(t *testing.T) {
	in, pub := newIngestor(t, map[string][]byte{"acme/a.md": []byte("# A")})
	states := &fakeStates{}
	in.states = states
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", "acme/a.md", 3)); err != nil {
		t.Fatal(err)
	}
	fv := decode(t, pub.msgs[0])
	uploaded := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	if !fv.Object.EventTime.Equal(uploaded) || fv.Object.SeenAt.IsZero() || fv.ExtractedAt.Before(fv.Object.SeenAt) {
		t.Fatalf("event %v seen %v extracted %v", fv.Object.EventTime, fv.Object.SeenAt, fv.ExtractedAt)
	}
	st := states.states[0].Stages
	if !st.Uploaded.Equal(uploaded) || !st.Seen.Equal(fv.Object.SeenAt) || !st.Extracted.IsZero() {
		t.Fatalf("pending stages %+v", st)
	}
}

// legacyDoc is a Word 97-2003 file's compound file (detect's testdata).
func legacyDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../extract/detect/testdata/legacy.doc")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
