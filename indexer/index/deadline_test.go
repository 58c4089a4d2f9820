package index

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
)

// fakeWeaviate is a node that answers the client's start-up reads and hands
// every write to write; it counts writes by path.
type fakeWeaviate struct {
	srv    *httptest.Server
	done   chan struct{} // closed when the test ends: stalled writes return
	mu     sync.Mutex
	writes map[string]int
}

func newFakeWeaviate(t *testing.T, write func(w http.ResponseWriter, r *http.Request, n int)) *fakeWeaviate {
	f := &fakeWeaviate{writes: map[string]int{}, done: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"version":"1.35.2"}`)) // /v1/.well-known/ready, /v1/meta
			return
		}
		f.mu.Lock()
		f.writes[r.URL.Path]++
		n := f.writes[r.URL.Path]
		f.mu.Unlock()
		select {
		case <-f.done:
		default:
			write(w, r.WithContext(ctxOr(r.Context(), f.done)), n)
		}
	}))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.done) })
	return f
}

func (f *fakeWeaviate) host() string { return strings.TrimPrefix(f.srv.URL, "http://") }

func (f *fakeWeaviate) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes[path]
}

// ctxOr is ctx, also done when done is closed.
func ctxOr(ctx context.Context, done <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx
}

// stall holds a write until the client gives up on it.
func stall(w http.ResponseWriter, r *http.Request, _ int) { <-r.Context().Done() }

// TestWritesLeaveAStalledNodeAndRetryALostLeader: with a short write
// deadline, a batch and a merge that the first node holds (as the node
// that became Raft leader holds writes sent to the dead one) are written by
// the second; a batch whose objects the second node first refuses because
// the leader was lost is sent again with those objects only.
func TestWritesLeaveAStalledNodeAndRetryALostLeader(t *testing.T) {
	stalled := newFakeWeaviate(t, stall)
	var sent [][]string // ids of each batch the live node was sent
	var mu sync.Mutex
	live := newFakeWeaviate(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == http.MethodPatch {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var body struct {
			Objects []models.Object `json:"objects"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var ids []string
		out := make([]map[string]any, len(body.Objects))
		for i, o := range body.Objects {
			ids = append(ids, string(o.ID))
			out[i] = map[string]any{"class": o.Class, "id": o.ID, "result": map[string]any{}}
			if n == 1 && i%2 == 1 { // the first time, every other object is refused
				out[i]["result"] = map[string]any{"errors": map[string]any{"error": []map[string]any{{
					"message": `fetch tenant status for class "Chunk": failed to execute query: leader not found`}}}}
			}
		}
		mu.Lock()
		sent = append(sent, ids)
		mu.Unlock()
		json.NewEncoder(w).Encode(out)
	})
	wv, err := schema.NewClientWith(stalled.host()+","+live.host(), "", "", schema.ClientOptions{WriteTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := &Writer{wv: wv, batchParallel: 1}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const project = "deadlines"
	fv := ids.FileVersion(ids.File(project, "", "a.md"), "e", "s")
	var objs []*models.Object
	for i := range 4 {
		objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, i)), Tenant: project,
			Properties: map[string]any{"index": i}})
	}
	if err := w.batch(ctx, objs); err != nil {
		t.Fatal(err)
	}
	if stalled.count("/v1/batch/objects") != 1 {
		t.Fatalf("the stalled node was sent %d batches, want 1 (then left)", stalled.count("/v1/batch/objects"))
	}
	if len(sent) != 2 || len(sent[0]) != 4 || strings.Join(sent[1], ",") != string(objs[1].ID)+","+string(objs[3].ID) {
		t.Fatalf("live node was sent %v; want all 4 objects, then the 2 refused", sent)
	}

	live.mu.Lock()
	live.writes = map[string]int{}
	live.mu.Unlock()
	wv, err = schema.NewClientWith(stalled.host()+","+live.host(), "", "", schema.ClientOptions{WriteTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w.wv = wv
	ids := []string{string(objs[0].ID), string(objs[1].ID)}
	if err := w.merge(ctx, schema.ChunkClass, project, ids, map[string]any{"readers": []string{"everyone"}}); err != nil {
		t.Fatal(err)
	}
	merged := 0
	for _, id := range ids {
		merged += live.count("/v1/objects/" + schema.ChunkClass + "/" + id)
	}
	if merged != 2 {
		t.Fatalf("the live node merged %d objects, want 2", merged)
	}
}

// TestBatchRefusedUntilTheEndFails: objects still refused after every retry
// fail the write, naming the reason.
func TestBatchRefusedUntilTheEndFails(t *testing.T) {
	var refusals atomic.Int64
	node := newFakeWeaviate(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		refusals.Add(1)
		json.NewEncoder(w).Encode([]map[string]any{{"class": "Chunk", "id": "x", "result": map[string]any{"errors": map[string]any{
			"error": []map[string]any{{"message": "failed to execute query: leader not found"}}}}}})
	})
	wv, err := schema.NewClient(node.host(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &Writer{wv: wv, batchParallel: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = w.batch(ctx, []*models.Object{{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(ids.Project("p"), 0)), Tenant: "p"}})
	if err == nil || !strings.Contains(err.Error(), "leader not found") {
		t.Fatalf("want the refusal, got %v", err)
	}
	if refusals.Load() < 2 {
		t.Fatalf("sent %d times, want it sent again", refusals.Load())
	}
}
