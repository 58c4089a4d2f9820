package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/pipeline"
)

// TestClusterSurvivesNodeAndReplicaLoss runs a 3-node NATS cluster (streams
// and KV buckets with 3 replicas), two replicas of every worker and two
// queryd replicas. Mid-ingest, one NATS node and one replica of each worker
// are killed with SIGKILL. Every uploaded file ends indexed exactly once,
// and both queryd replicas answer throughout.
func TestClusterSurvivesNodeAndReplicaLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test starts the whole stack; skipped with -short")
	}
	ports, err := localstack.FreePorts()
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	ctx := context.Background()
	st, err := localstack.Up(ctx, localstack.Options{Root: root, StateDir: t.TempDir(), Ports: ports, Progress: logWriter{t}, NATSCluster: true,
		ServiceEnv: map[string][]string{"queryd": {"STRATA_TOOL_BUDGET=0"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Stop(15 * time.Second)
		dumpLogsOnFailure(t, st)
	})
	h := harnessFor(t, st)
	for _, name := range []string{pipeline.ObjectsStream, pipeline.ChunksStream, pipeline.EmbeddingsStream, "KV_" + pipeline.ObjectStateBucket, "KV_strata_commits"} {
		s, err := h.js.Stream(ctx, name)
		if err != nil || s.CachedInfo().Config.Replicas != 3 {
			t.Fatalf("stream %s must have 3 replicas: %v", name, err)
		}
	}
	for _, svc := range []string{"indexer", "embedder", "ingestor"} {
		if _, err := st.StartReplica(ctx, svc, 2); err != nil {
			t.Fatalf("second %s: %v", svc, err)
		}
	}
	q2, err := st.StartReplica(ctx, "queryd", 2)
	if err != nil {
		t.Fatal(err)
	}
	second := connect(t, "http://"+q2+"/mcp", st.Env.APIKey)

	// Both queryd replicas are asked all along; every answer must come.
	stopAsking := make(chan struct{})
	var asked, failed atomic.Int64
	var firstFailure atomic.Value
	var askers sync.WaitGroup
	for _, c := range []interface {
		CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
	}{h.mcp, second} {
		askers.Add(1)
		go func() {
			defer askers.Done()
			for {
				select {
				case <-stopAsking:
					return
				case <-time.After(200 * time.Millisecond):
				}
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "search_keyword", map[string]any{"query": "clusterword"}
				res, err := c.CallTool(ctx, req)
				asked.Add(1)
				if err != nil || res.IsError {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%v %+v", err, res))
				}
			}
		}()
	}

	const n = 120
	var uploads sync.WaitGroup
	var done atomic.Int64
	errs := make(chan error, n)
	for w := range 8 {
		uploads.Add(1)
		go func() {
			defer uploads.Done()
			for i := w; i < n; i += 8 {
				body := fmt.Sprintf("# File %d\n\nclusterword file%03d body\n", i, i)
				key := fmt.Sprintf("acme/cluster/f%03d.md", i)
				var err error
				for attempt := 0; attempt < 60; attempt++ {
					if _, err = h.s3.PutObject(ctx, localstack.Bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err == nil {
						break
					}
					time.Sleep(500 * time.Millisecond)
				}
				if err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
				}
				done.Add(1)
				time.Sleep(30 * time.Millisecond)
			}
		}()
	}
	for done.Load() < n/3 {
		time.Sleep(50 * time.Millisecond)
	}
	t.Log("killing one NATS node and the second replica of each worker with SIGKILL")
	st.Servers.NATSPeers[1].Kill()
	for _, svc := range []string{"ingestor", "embedder", "indexer"} {
		st.Process(svc + "-2").Kill()
	}
	uploads.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h.expectExactly(n, 4*time.Minute, func(i int) (string, string) {
		return fmt.Sprintf("cluster/f%03d.md", i), fmt.Sprintf("file%03d", i)
	})
	close(stopAsking)
	askers.Wait()
	if asked.Load() < 10 || failed.Load() > 0 {
		t.Fatalf("queryd replicas: %d of %d calls failed while a NATS node and worker replicas were down; first: %v", failed.Load(), asked.Load(), firstFailure.Load())
	}
	t.Logf("queryd replicas answered all %d calls", asked.Load())
}
