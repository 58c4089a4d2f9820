package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/testservers"
)

// TestServersRestartedWhileIngesting kills nats-server, minio and
// weaviate-server with SIGKILL one after the other while files are being
// uploaded and ingested, restarts each on its data, and checks that the index
// ends with exactly the uploaded files. Uploads that fail while MinIO is down
// are retried, as any S3 client would. A PUT that MinIO answered just before
// it was killed may never have its notification queued: the ingestor's
// reconcile pass (every 5 s here) finds such objects.
func TestServersRestartedWhileIngesting(t *testing.T) {
	h := startWith(t, map[string][]string{"ingestor": {"STRATA_RECONCILE_INTERVAL=5s", "STRATA_RECONCILE_MIN_AGE=2s"}})
	ctx := context.Background()
	const n = 60
	var wg sync.WaitGroup
	var done atomic.Int64
	errs := make(chan error, n)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				body := fmt.Sprintf("# File %d\n\nrestartword%03d body\n", i, i)
				key := fmt.Sprintf("acme/restart/f%03d.md", i)
				var err error
				for attempt := 0; attempt < 120; attempt++ {
					if _, err = h.s3.PutObject(ctx, localstack.Bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err == nil {
						break
					}
					time.Sleep(500 * time.Millisecond) // a client's back-off between attempts (60 s in all)
				}
				if err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
				}
				done.Add(1)
				time.Sleep(50 * time.Millisecond) // spread the uploads out, so the kills come in the middle of them
			}
		}()
	}
	// Each server is killed a further sixth of the uploads on: 10, 20, 30 done.
	for i, name := range []string{testservers.NATSServer.Name, testservers.MinIO.Name, testservers.Weaviate.Name} {
		want := int64(i+1) * n / 6
		waitUntil(t, fmt.Sprintf("%d of the %d uploads done before killing %s", want, n, name), 90*time.Second, func() (bool, string) {
			return done.Load() >= want, fmt.Sprintf("%d done", done.Load())
		})
		t.Logf("killing %s with SIGKILL and restarting it after %d uploads", name, done.Load())
		if err := h.stack.Servers.Restart(ctx, name); err != nil {
			t.Fatalf("restart %s: %v", name, err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h.expectExactly(n, 4*time.Minute, func(i int) (string, string) {
		return fmt.Sprintf("restart/f%03d.md", i), fmt.Sprintf("restartword%03d", i)
	})
}
