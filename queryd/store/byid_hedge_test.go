package store

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// byIDNode is a fake Weaviate node: REST reads by id stall while stallREST
// is set (as they wait on a killed Raft leader), else answer; GraphQL
// answers the same object. It counts both and the REST reads abandoned.
type byIDNode struct {
	stallREST             atomic.Bool
	rest, gql, abandoned  atomic.Int64
	srv                   *httptest.Server
	done                  chan struct{}
	project, id, restText string
}

func newByIDNode(t *testing.T) *byIDNode {
	n := &byIDNode{done: make(chan struct{}), project: "hedge"}
	n.id = ids.Chunk(ids.FileVersion(ids.File(n.project, "", "a.md"), "e", "s"), 0)
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/objects/"):
			n.rest.Add(1)
			if n.stallREST.Load() {
				select {
				case <-r.Context().Done():
					n.abandoned.Add(1)
				case <-n.done:
				}
				return
			}
			if !strings.HasSuffix(r.URL.Path, "/"+n.id) {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"class": schema.ChunkClass, "id": n.id, "tenant": n.project,
				"properties": map[string]any{"content": "from rest", "valid_from": 1}})
		case r.Method == http.MethodPost && r.URL.Path == "/v1/graphql":
			n.gql.Add(1)
			json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"Get": map[string]any{schema.ChunkClass: []any{
				map[string]any{"content": "from graphql", "valid_from": 1, "_additional": map[string]any{"id": n.id}}}}}})
		default:
			w.Write([]byte(`{"version":"1.35.2"}`)) // ready, meta
		}
	}))
	t.Cleanup(n.srv.Close)
	t.Cleanup(func() { close(n.done) })
	return n
}

func (n *byIDNode) store(t *testing.T, hedge time.Duration) *Store {
	wv, err := schema.NewClient(strings.TrimPrefix(n.srv.URL, "http://"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	return New(wv).SetByIDHedge(hedge)
}

// TestReadByIDLeavesAHeldREST: a REST read by id that does not answer
// within the hedge delay is answered by the filtered query, and the REST
// read is abandoned; the next reads by id skip REST (restHeldFor).
func TestReadByIDLeavesAHeldREST(t *testing.T) {
	n := newByIDNode(t)
	n.stallREST.Store(true)
	s := n.store(t, 10*time.Millisecond)
	for i := range 3 {
		o, err := s.objectByID(asSystem(), schema.ChunkClass, n.project, n.id)
		if err != nil || o == nil || wvquery.Str(o.Properties.(map[string]any), "content") != "from graphql" || string(o.ID) != n.id {
			t.Fatalf("read %d: %+v %v", i, o, err)
		}
	}
	if n.rest.Load() != 1 || n.gql.Load() != 3 {
		t.Fatalf("%d REST and %d GraphQL reads; want REST tried once, then skipped", n.rest.Load(), n.gql.Load())
	}
	deadline := time.Now().Add(10 * time.Second)
	for n.abandoned.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n.abandoned.Load() != 1 {
		t.Fatal("the held REST read was not cancelled")
	}
	// After restHeldFor, REST is asked first again.
	s.byID.heldTill.Store(0)
	n.stallREST.Store(false)
	if o, err := s.objectByID(asSystem(), schema.ChunkClass, n.project, n.id); err != nil || wvquery.Str(o.Properties.(map[string]any), "content") != "from rest" {
		t.Fatalf("REST once it answers again: %+v %v", o, err)
	}
}

// TestReadByIDAnsweredByREST: a REST read by id that answers (an object, or
// a 404 for a missing one) is the answer; no filtered query is sent.
func TestReadByIDAnsweredByREST(t *testing.T) {
	n := newByIDNode(t)
	s := n.store(t, time.Minute)
	o, err := s.objectByID(asSystem(), schema.ChunkClass, n.project, n.id)
	if err != nil || o == nil || wvquery.Str(o.Properties.(map[string]any), "content") != "from rest" {
		t.Fatalf("%+v %v", o, err)
	}
	missing := ids.Chunk(ids.Project("nope"), 1)
	if o, err := s.objectByID(asSystem(), schema.ChunkClass, n.project, missing); err != nil || o != nil {
		t.Fatalf("a missing object: %+v %v", o, err)
	}
	if n.gql.Load() != 0 || n.rest.Load() != 2 {
		t.Fatalf("%d REST and %d GraphQL reads; want 2 and 0", n.rest.Load(), n.gql.Load())
	}
}
