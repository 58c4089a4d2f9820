package stage

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/metrics"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/service"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// TestRunServesHealthAndRunsEveryLoop starts a stage of two loops the way
// the indexer does: Running is told the health endpoint's address, which
// answers /readyz and /metrics (with both loops' stages), both loops handle
// their stream's messages, and Run returns once ctx ends, after Stopped.
func TestRunServesHealthAndRunsEveryLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server; skipped with -short")
	}
	url := serverstest.NATS(t)
	deps := service.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New()}
	common := &config.Common{NATSURL: url, HTTPAddr: "127.0.0.1:0", KVReplicas: 1}
	addrs := make(chan string, 1)
	stopped := false
	st, err := Connect(Config{Name: "stagetest", Common: common, Concurrency: 2, MaxAckPending: 4,
		Running: func(httpAddr string) { addrs <- httpAddr },
		Stopped: func() { stopped = true }}, deps)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := &Loop{Metric: "stagetest", Worker: "stagetest", Stream: pipeline.ChunksStream, Consumer: "stagetest-chunks"}
	second := &Loop{Metric: "stagetest_vectors", Worker: "stagetest-vectors", Stream: pipeline.EmbeddingsStream, Consumer: "stagetest-vectors"}
	for _, l := range []*Loop{first, second} {
		if err := st.Consume(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	handle := func(_ context.Context, msg jetstream.Msg) error {
		mu.Lock()
		defer mu.Unlock()
		seen[msg.Subject()] = true
		return nil
	}
	first.Handle, second.Handle = handle, handle
	for _, subject := range []string{pipeline.ChunksSubjectFor("acme"), pipeline.EmbeddingsSubjectFor("acme")} {
		if _, err := st.JS.Publish(ctx, subject, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx, first, second) }()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("Run returned before Running: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Running never called")
	}
	for _, path := range []string{"/readyz", "/metrics"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
		if path == "/metrics" && (!strings.Contains(string(body), "strata_stagetest_processing_seconds") || !strings.Contains(string(body), "strata_stagetest_vectors_processing_seconds")) {
			t.Fatalf("/metrics names neither loop's stage:\n%s", body)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handled %v, want a message of each stream", seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
	if !stopped {
		t.Fatal("Stopped was not called")
	}
}
