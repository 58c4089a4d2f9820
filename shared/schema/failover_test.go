package schema

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
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
	resp, err := c.Get("http://" + deadHost + "/fail")
	if err != nil || resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("an error status is an answer, not a dead node: %v %v", resp, err)
	}
	resp.Body.Close()
	if hits.Load() != 4 {
		t.Fatalf("the live node served %d requests, want 4", hits.Load())
	}
	allDead := &http.Client{Transport: newFailover([]string{deadHost})}
	if _, err := allDead.Get("http://" + deadHost + "/"); err == nil || !strings.Contains(err.Error(), deadHost) {
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
