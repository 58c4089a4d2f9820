package schema

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFailoverSkipsDeadNodes: a node that refuses connections is skipped
// (the request, body included, goes to the next), the node that answered is
// tried first from then on, and a node that answers with an error keeps the
// request.
func TestFailoverSkipsDeadNodes(t *testing.T) {
	var hits atomic.Int64
	alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/fail" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		w.Write(append([]byte("got "), b...))
	}))
	defer alive.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadHost := strings.TrimPrefix(dead.URL, "http://")
	dead.Close() // its port now refuses connections

	f := newFailover([]string{deadHost, strings.TrimPrefix(alive.URL, "http://")})
	c := &http.Client{Transport: f}
	for i := range 3 {
		resp, err := c.Post("http://"+deadHost+"/v1/batch", "text/plain", strings.NewReader("payload"))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "got payload" {
			t.Fatalf("request %d answered %q", i, b)
		}
	}
	if f.good.Load() != 1 {
		t.Fatal("the node that answered must be tried first")
	}
	req, _ := http.NewRequest(http.MethodPut, "http://"+deadHost+"/fail", nil)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("a write answered with an error status is an answer, not a dead node: %v %v", resp, err)
	}
	resp.Body.Close()
	if hits.Load() != 4 {
		t.Fatalf("the live node served %d requests, want 4", hits.Load())
	}
	allDead := &http.Client{Transport: newFailover([]string{deadHost})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second) // reads are retried until their deadline
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://"+deadHost+"/", nil)
	if _, err := allDead.Do(req); err == nil || !strings.Contains(err.Error(), deadHost) {
		t.Fatalf("with every node gone the error must name them: %v", err)
	}
}

// TestHedgedReadsTakeTheFirstAnswer: a read that a node holds too long is
// sent to the next node too, and the first answer wins; writes never are.
func TestHedgedReadsTakeTheFirstAnswer(t *testing.T) {
	release := make(chan struct{})
	var slowWrites atomic.Int64
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			slowWrites.Add(1)
			w.Write([]byte("slow"))
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Write([]byte("slow"))
	}))
	defer slow.Close()
	defer close(release)
	var fastWrites atomic.Int64
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			fastWrites.Add(1)
		}
		b, _ := io.ReadAll(r.Body)
		w.Write(append([]byte("fast "), b...))
	}))
	defer fast.Close()
	c := &http.Client{Transport: newFailover([]string{strings.TrimPrefix(slow.URL, "http://"), strings.TrimPrefix(fast.URL, "http://")})}
	resp, err := c.Post(slow.URL+"/v1/graphql", "application/json", strings.NewReader(`{"query":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `fast {"query":"x"}` {
		t.Fatalf("the hedged read answered %q", b)
	}
	req, _ := http.NewRequest(http.MethodPut, slow.URL+"/v1/objects/x", strings.NewReader("w"))
	c2 := &http.Client{Transport: newFailover([]string{strings.TrimPrefix(slow.URL, "http://"), strings.TrimPrefix(fast.URL, "http://")})}
	resp, err = c2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if slowWrites.Load() != 1 || fastWrites.Load() != 0 {
		t.Fatalf("a write went to %d slow and %d fast nodes; want the first only", slowWrites.Load(), fastWrites.Load())
	}
}

// TestReadsRetryUntilALeaderIsBack models a Raft leader's SIGKILL: one node
// holds reads forever (they wait on the dead leader's connection), one
// answers 500 until a new leader is elected, one is gone. A read still
// answers, from the first node that can serve it once the leader is back.
func TestReadsRetryUntilALeaderIsBack(t *testing.T) {
	var electedAt atomic.Int64
	electedAt.Store(time.Now().Add(1500 * time.Millisecond).UnixNano())
	beforeElection := func() bool { return time.Now().UnixNano() < electedAt.Load() }
	var held atomic.Int64
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !beforeElection() {
			w.Write([]byte("ok from the new leader"))
			return
		}
		held.Add(1)
		<-r.Context().Done()
	}))
	defer stuck.Close()
	var asked atomic.Int64
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if beforeElection() {
			code := http.StatusInternalServerError
			if strings.HasSuffix(r.URL.Path, "/tenants") { // as Weaviate answers a tenant listing
				code = http.StatusUnprocessableEntity
			}
			http.Error(w, `{"error":[{"message":"failed to execute query: rpc error: code = Canceled desc = grpc: the client connection is closing"}]}`, code)
			return
		}
		w.Write([]byte("ok from a follower"))
	}))
	defer follower.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadHost := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()

	c := &http.Client{Transport: newFailover([]string{strings.TrimPrefix(stuck.URL, "http://"), deadHost, strings.TrimPrefix(follower.URL, "http://")})}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, stuck.URL+"/v1/objects/ProjectState/x?tenant=acme", nil)
	started := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(b), "ok") {
		t.Fatalf("answered %d %q", resp.StatusCode, b)
	}
	if took := time.Since(started); took > 3*time.Second {
		t.Fatalf("answered %s after the election, want within a retry pause", took-1500*time.Millisecond)
	}
	if held.Load() == 0 {
		t.Fatal("the first node must have been asked first")
	}

	// With no node able to answer before the deadline, the last answer is
	// returned, so the caller sees Weaviate's reason; a tenant listing's
	// 422 that says the leader was lost is asked again too.
	c = &http.Client{Transport: newFailover([]string{deadHost, strings.TrimPrefix(follower.URL, "http://")})}
	electedAt.Store(time.Now().Add(time.Hour).UnixNano())
	for path, code := range map[string]int{"/v1/schema": http.StatusInternalServerError, "/v1/schema/Chunk/tenants": http.StatusUnprocessableEntity} {
		before := asked.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, follower.URL+path, nil)
		resp, err = c.Do(req)
		if err != nil {
			t.Fatalf("%s: want the last answer, got %v", path, err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code || !strings.Contains(string(b), "connection is closing") {
			t.Fatalf("%s answered %d %q", path, resp.StatusCode, b)
		}
		if asked.Load()-before < 2 {
			t.Fatalf("%s was asked %d times, want it asked again", path, asked.Load()-before)
		}
	}
}

// TestSchemaReadsAskedAgainReadTheNodesOwnCopy: a schema read held by a
// node (waiting on a dead Raft leader) is asked again, of the same node
// when it is the only one, with consistency: false, which the node answers
// from its own copy of the schema.
func TestSchemaReadsAskedAgainReadTheNodesOwnCopy(t *testing.T) {
	var local atomic.Int64
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("consistency") != "false" {
			<-r.Context().Done() // as if waiting on the dead leader
			return
		}
		local.Add(1)
		w.Write([]byte(`[{"name":"acme"}]`))
	}))
	defer node.Close()
	c := &http.Client{Transport: newFailover([]string{strings.TrimPrefix(node.URL, "http://")})}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, node.URL+"/v1/schema/Chunk/tenants", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `[{"name":"acme"}]` || local.Load() != 1 {
		t.Fatalf("answered %q after %d local reads", b, local.Load())
	}
	// An object read is never changed: consistency is a schema read's header.
	req, _ = http.NewRequest(http.MethodGet, node.URL+"/v1/objects/Chunk/x", nil)
	if isSchemaRead(req) {
		t.Fatal("an object read is not a schema read")
	}
}

// TestWritesUnderAPassedLeaseAreNotSent: a write made under a lease
// (HeldUntil) goes out while the lease holds, and is not sent at all,
// idempotent retries included, once it may have passed.
func TestWritesUnderAPassedLeaseAreNotSent(t *testing.T) {
	var hits atomic.Int64
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	defer node.Close()
	c := &http.Client{Transport: newFailover([]string{strings.TrimPrefix(node.URL, "http://")})}
	var until atomic.Pointer[time.Time]
	held := HeldUntil(context.Background(), func() time.Time { return *until.Load() })
	send := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, node.URL+"/v1/batch/objects", strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	later := time.Now().Add(time.Minute)
	until.Store(&later)
	if err := send(held); err != nil || hits.Load() != 1 {
		t.Fatalf("a write under a lease that holds: %v, %d sent", err, hits.Load())
	}
	for _, passed := range []time.Time{time.Now().Add(-time.Millisecond), {}} {
		until.Store(&passed)
		for _, ctx := range []context.Context{held, Idempotent(held)} {
			if err := send(ctx); !errors.Is(err, ErrLeasePassed) {
				t.Fatalf("a write under a lease passed at %v: %v", passed, err)
			}
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("%d writes sent, want 1", hits.Load())
	}
	if LeasePassed(context.Background()) {
		t.Fatal("a context without a lease taken for one that passed")
	}
}
