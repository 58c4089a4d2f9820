package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/servers"
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
					time.Sleep(500 * time.Millisecond)
				}
				if err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	for _, name := range []string{servers.NATSServer.Name, servers.MinIO.Name, servers.Weaviate.Name} {
		time.Sleep(400 * time.Millisecond)
		t.Logf("killing %s with SIGKILL and restarting it", name)
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
