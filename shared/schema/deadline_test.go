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

// stalledNode holds every request until the client gives up on it (as the
// node that became Raft leader holds what it sent to the dead one) and
// counts them.
func stalledNode(t *testing.T) (host string, held *atomic.Int64) {
	held = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		io.ReadAll(r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), held
}

// echoNode answers every request with "ok <body>" and counts them.
func echoNode(t *testing.T) (host string, hits *atomic.Int64) {
	hits = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		w.Write(append([]byte("ok "), b...))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), hits
}

func send(t *testing.T, c *http.Client, ctx context.Context, method, url, body string) (string, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestIdempotentWriteLeavesAStalledNode: a write marked Idempotent that a
// node holds past its attempt's deadline is sent, body and all, to the next
// node, which answers; that node is asked first from then on. A write not
// so marked is never sent to a second live node: it waits on the first
// until the caller's context ends.
func TestIdempotentWriteLeavesAStalledNode(t *testing.T) {
	stalled, held := stalledNode(t)
	live, hits := echoNode(t)
	f := newFailover([]string{stalled, live})
	f.writeTimeout = 50 * time.Millisecond
	c := &http.Client{Transport: f}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	got, err := send(t, c, Idempotent(ctx), http.MethodPost, "http://"+stalled+"/v1/batch/objects", "objs")
	if err != nil || got != "ok objs" {
		t.Fatalf("idempotent write: %q %v", got, err)
	}
	if held.Load() != 1 || hits.Load() != 1 {
		t.Fatalf("stalled node asked %d times, live %d; want 1 and 1", held.Load(), hits.Load())
	}
	if f.good.Load() != 1 {
		t.Fatal("the node that answered must be asked first from then on")
	}
	got, err = send(t, c, Idempotent(ctx), http.MethodPatch, "http://"+stalled+"/v1/objects/Chunk/x", "merge")
	if err != nil || got != "ok merge" || held.Load() != 1 {
		t.Fatalf("next write went to the stalled node (%d) or failed: %q %v", held.Load(), got, err)
	}

	plain := newFailover([]string{stalled, live})
	plain.writeTimeout = 50 * time.Millisecond
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	before := hits.Load()
	if _, err := send(t, &http.Client{Transport: plain}, short, http.MethodPost, "http://"+stalled+"/v1/batch/objects", "once"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a write not marked idempotent must wait for its caller's deadline: %v", err)
	}
	if hits.Load() != before {
		t.Fatal("a write not marked idempotent went to a second live node")
	}
}

// TestIdempotentWriteRetriesALostLeader: a node that answers a write with
// Weaviate's word that the Raft leader is gone (500, or 422 for a merge)
// did not write it: an idempotent write goes to the next node. Any other
// error answer is the answer.
func TestIdempotentWriteRetriesALostLeader(t *testing.T) {
	var lost atomic.Int64
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		if r.URL.Path == "/v1/objects/Chunk/bad" {
			http.Error(w, `{"error":[{"message":"property x does not exist"}]}`, http.StatusUnprocessableEntity)
			return
		}
		lost.Add(1)
		code := http.StatusInternalServerError
		if r.Method == http.MethodPatch {
			code = http.StatusUnprocessableEntity
		}
		http.Error(w, `{"error":[{"message":"fetch tenant status for class \"Chunk\": failed to execute query: leader not found"}]}`, code)
	}))
	defer follower.Close()
	live, hits := echoNode(t)
	f := newFailover([]string{strings.TrimPrefix(follower.URL, "http://"), live})
	c := &http.Client{Transport: f}
	ctx := Idempotent(context.Background())
	for _, method := range []string{http.MethodPost, http.MethodPatch} {
		f.good.Store(0)
		if got, err := send(t, c, ctx, method, follower.URL+"/v1/objects/Chunk/x", "w"); err != nil || got != "ok w" {
			t.Fatalf("%s: %q %v", method, got, err)
		}
	}
	if lost.Load() != 2 || hits.Load() != 2 {
		t.Fatalf("follower refused %d, live node wrote %d; want 2 and 2", lost.Load(), hits.Load())
	}
	f.good.Store(0)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPatch, follower.URL+"/v1/objects/Chunk/bad", strings.NewReader("w"))
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a write refused for another reason must be answered as is: %v %v", resp, err)
	}
	resp.Body.Close()
	if hits.Load() != 2 {
		t.Fatal("a write refused for another reason was sent again")
	}
}

// TestIdempotentWriteDeadlineGrows: a write only slower than the first
// attempt's deadline ends written, as each attempt gets twice the time of
// the one before; with a fixed deadline no attempt would.
func TestIdempotentWriteDeadlineGrows(t *testing.T) {
	var attempts, written atomic.Int64
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		io.ReadAll(r.Body)
		select {
		case <-time.After(250 * time.Millisecond):
			written.Add(1)
			w.Write([]byte("done"))
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	f := newFailover([]string{strings.TrimPrefix(slow.URL, "http://")})
	f.writeTimeout = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := send(t, &http.Client{Transport: f}, Idempotent(ctx), http.MethodPost, slow.URL+"/v1/batch/objects", "w")
	if err != nil || got != "done" {
		t.Fatalf("%q %v after %d attempts", got, err, attempts.Load())
	}
	if attempts.Load() < 2 || written.Load() != 1 {
		t.Fatalf("%d attempts, %d written; want the first abandoned and one written", attempts.Load(), written.Load())
	}
}

// TestReadEndsAtItsDeadline: a read every node holds ends at the client's
// read deadline, though the caller set none.
func TestReadEndsAtItsDeadline(t *testing.T) {
	a, _ := stalledNode(t)
	b, _ := stalledNode(t)
	f := newFailover([]string{a, b})
	f.readTimeout = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := send(t, &http.Client{Transport: f}, context.Background(), http.MethodGet, "http://"+a+"/v1/objects/Chunk/x", "")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want the read's deadline, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a read held by every node did not end")
	}
}
