package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
)

// TestClusterSurvivesNodeAndReplicaLoss runs a 3-node NATS cluster (streams
// and KV buckets with 3 replicas), two replicas of every worker and two
// queryd replicas. Mid-ingest, one NATS node and one replica of each worker
// are killed with SIGKILL. Every uploaded file ends indexed exactly once,
// and both queryd replicas answer throughout.
func TestClusterSurvivesNodeAndReplicaLoss(t *testing.T) {
	h := startShaped(t, nil, func(o *localstack.Options) { o.NATSCluster = true })
	st, ctx := h.stack, context.Background()
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
					time.Sleep(500 * time.Millisecond) // a client's back-off between attempts (30 s in all)
				}
				if err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
				}
				done.Add(1)
				time.Sleep(30 * time.Millisecond) // spread the uploads out, so the kills come in the middle of them
			}
		}()
	}
	waitUntil(t, fmt.Sprintf("a third of the %d uploads done before the kills", n), 90*time.Second, func() (bool, string) {
		return done.Load() >= n/3, fmt.Sprintf("%d done", done.Load())
	})
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

// TestReplicatedWeaviateKeepsReading runs Weaviate as 3 nodes with every
// collection replicated twice. After files are indexed, one Weaviate node
// is killed with SIGKILL: every tool read still answers, complete (queryd
// reads one replica; the indexer wrote to all before publishing).
func TestReplicatedWeaviateKeepsReading(t *testing.T) {
	h := startShaped(t, nil, func(o *localstack.Options) { o.WeaviateCluster = true })
	st := h.stack
	const n = 20
	for i := range n {
		h.put(fmt.Sprintf("acme/replicated/f%03d.md", i), fmt.Sprintf("# File %d\n\nreplicaword file%03d body\n", i, i))
	}
	h.expectExactly(n, 3*time.Minute, func(i int) (string, string) {
		return fmt.Sprintf("replicated/f%03d.md", i), fmt.Sprintf("file%03d", i)
	})
	h.waitEmbedded(n)
	reads := everyRead(h, "replicated/f007.md", "file007")
	victim := replicaPeer(t, st, "acme")
	t.Logf("killing weaviate node%d, which holds a replica of acme's chunks, with SIGKILL", victim+2)
	readsAfterKill(t, h, reads, st.Servers.WeaviatePeers[victim])
	h.expectExactly(n, time.Minute, func(i int) (string, string) {
		return fmt.Sprintf("replicated/f%03d.md", i), fmt.Sprintf("file%03d", i)
	})
	for _, tool := range []string{"search_keyword", "search_knowledge", "hybrid_search"} {
		out, errText := h.call(tool, map[string]any{"query": "replicaword file007", "top_k": 20})
		if errText != "" || len(results(out)) == 0 {
			t.Fatalf("%s with a node down: %v %s", tool, out, errText)
		}
	}
}

// TestWeaviateFirstNodeLoss kills the Weaviate node that every service
// names first in -weaviate-host: queryd and the indexer move to the other
// nodes, and every read tool answers completely from the first call.
func TestWeaviateFirstNodeLoss(t *testing.T) {
	h := startShaped(t, nil, func(o *localstack.Options) { o.WeaviateCluster = true })
	const n = 10
	for i := range n {
		h.put(fmt.Sprintf("acme/first/f%03d.md", i), fmt.Sprintf("# File %d\n\nfirstnodeword file%03d body\n", i, i))
	}
	h.expectExactly(n, 3*time.Minute, func(i int) (string, string) {
		return fmt.Sprintf("first/f%03d.md", i), fmt.Sprintf("file%03d", i)
	})
	h.waitEmbedded(n)
	reads := everyRead(h, "first/f003.md", "file003")
	t.Log("killing weaviate node1, the first of every service's -weaviate-host, with SIGKILL")
	readsAfterKill(t, h, reads, h.stack.Servers.Weaviate)
}

// TestWeaviateLeaderLoss kills the node that leads Weaviate's Raft group:
// reads by id and tenant listings ask the leader, so on every node they
// wait for a new one to be elected; every read tool still answers
// completely from the first call, within its deadline.
func TestWeaviateLeaderLoss(t *testing.T) {
	h := startShaped(t, nil, func(o *localstack.Options) { o.WeaviateCluster = true })
	const n = 10
	for i := range n {
		h.put(fmt.Sprintf("acme/leader/f%03d.md", i), fmt.Sprintf("# File %d\n\nleaderword file%03d body\n", i, i))
	}
	h.expectExactly(n, 3*time.Minute, func(i int) (string, string) {
		return fmt.Sprintf("leader/f%03d.md", i), fmt.Sprintf("file%03d", i)
	})
	h.waitEmbedded(n)
	reads := everyRead(h, "leader/f004.md", "file004")
	leader, err := localstack.WeaviateLeader(context.Background(), h.stack)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killing weaviate node%d, the Raft leader, with SIGKILL", leader+1)
	readsAfterKill(t, h, reads, h.stack.Servers.WeaviateNodes()[leader])
}

// readsAfterKill kills p and then calls every read tool once, each within
// readDeadline, each answer complete; it logs the time from the kill to the
// last answer ("kill->complete", collected in docs/bench/weaviate-failover.md).
func readsAfterKill(t *testing.T, h *harness, reads []mcpclient.ReadCall, p *testservers.Process) {
	t.Helper()
	p.Kill()
	killed := time.Now()
	for _, r := range reads {
		ctx, cancel := context.WithTimeout(context.Background(), readDeadline)
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = r.Tool, r.Args
		started := time.Now()
		res, err := h.mcp.CallTool(ctx, req)
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("%s after the kill: %v %v (%s)", r.Tool, err, res, time.Since(started))
		}
		if text := res.Content[0].(mcp.TextContent).Text; !strings.Contains(text, r.Want) {
			t.Fatalf("%s after the kill answered without %q: %s", r.Tool, r.Want, text)
		}
	}
	t.Logf("kill->complete %s: every read tool (%d) answered completely", time.Since(killed).Round(time.Millisecond), len(reads))
}

// readDeadline bounds each read tool's answer after a node loss.
const readDeadline = 10 * time.Second

// everyRead lists a call of every read tool about path (whose text holds
// word), with the ids it needs read before any node is lost.
func everyRead(h *harness, path, word string) []mcpclient.ReadCall {
	h.t.Helper()
	list, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
	if errText != "" || len(chunksOf(list)) == 0 {
		h.t.Fatalf("list_file_chunks %s: %v %s", path, list, errText)
	}
	first := chunksOf(list)[0]
	return mcpclient.EveryRead("acme", path, word, first["id"].(string), first["file_id"].(string))
}

// replicaPeer finds a Weaviate node other than the first (which the
// services talk to) that holds a replica of project's Chunk shard, as an
// index into WeaviatePeers.
func replicaPeer(t *testing.T, st *localstack.Stack, project string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+st.Env.WeaviateHost+"/v1/nodes?output=verbose", nil)
	req.Header.Set("Authorization", "Bearer "+st.Env.WeaviateWriterKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var nodes struct {
		Nodes []struct {
			Name   string `json:"name"`
			Shards []struct {
				Class string `json:"class"`
				Name  string `json:"name"`
			} `json:"shards"`
		} `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&nodes); err != nil {
		t.Fatal(err)
	}
	holders := 0
	victim := -1
	for _, n := range nodes.Nodes {
		for _, sh := range n.Shards {
			if sh.Class == "Chunk" && sh.Name == project {
				holders++
				if n.Name == "node2" || n.Name == "node3" {
					victim = int(n.Name[4]-'0') - 2
				}
			}
		}
	}
	if holders != 2 || victim < 0 {
		t.Fatalf("want %s's chunks on 2 nodes (replication factor 2), one of them a peer: %d holders, %+v", project, holders, nodes)
	}
	return victim
}
