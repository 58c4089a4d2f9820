package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
)

// rssMiB reads a process's resident memory.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// TestBurstOf10000Uploads: a burst of 10,000 small uploads (20 projects, 16
// uploaders) is absorbed with bounded worker memory, lag is visible in the
// consumer-pending metric while it drains, and every file ends indexed.
func TestBurstOf10000Uploads(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	const n, projects, uploaders = 10000, 20, 16
	var wg sync.WaitGroup
	errs := make(chan error, uploaders)
	for w := range uploaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += uploaders {
				body := fmt.Sprintf("burst file %d\n", i)
				key := fmt.Sprintf("p%02d/burst/f%05d.txt", i%projects, i)
				if _, err := h.s3.PutObject(ctx, localstack.Bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	peak := map[string]float64{}
	maxLag := 0.0
	sample := func() {
		for _, name := range []string{"ingestor", "embedder", "indexer"} {
			peak[name] = max(peak[name], rssMiB(h.stack.Process(name).Pid()))
		}
		maxLag = max(maxLag, metric(t, h.stack.Ports().Indexer, "strata_indexer_consumer_pending_messages"))
	}
	uploaded := make(chan struct{})
	go func() { wg.Wait(); close(uploaded) }()
	start := time.Now()
	deadline := start.Add(20 * time.Minute)
	var total float64
	for {
		sample()
		out, _ := h.call("status", map[string]any{})
		if out != nil {
			total = out["documentCount"].(float64)
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		if total == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %v of %d files indexed after %v", total, n, time.Since(start))
		}
		time.Sleep(2 * time.Second) // the poll interval: each round samples memory and lag
	}
	<-uploaded
	t.Logf("%d files indexed in %v; peak RSS MiB %v; peak indexer lag %v messages", n, time.Since(start).Round(time.Second), peak, maxLag)
	for name, mib := range peak {
		if mib > 512 {
			t.Errorf("%s peaked at %.0f MiB resident: in-flight work is not bounded", name, mib)
		}
	}
	if maxLag == 0 {
		t.Error("the indexer's pending metric never showed the burst queued up")
	}
	// The gauge refreshes every 5 s: it shows the drained burst at its next refresh.
	waitUntil(t, "the indexer's pending gauge to show the burst drained (0)", 60*time.Second, func() (bool, string) {
		lag := metric(t, h.stack.Ports().Indexer, "strata_indexer_consumer_pending_messages")
		return lag == 0, fmt.Sprintf("lag %v after the burst drained", lag)
	})
}
