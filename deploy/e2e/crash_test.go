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
	"github.com/strata-kb/strata/shared/pipeline"
)

// TestWorkersKilledMidBatch uploads a batch, kills the ingestor (on live
// events, then on durable ones), the indexer and the embedder with SIGKILL
// while it is being processed, restarts them (and the ingestor once more
// gracefully), and checks
// that the index holds exactly the uploaded files' contents: nothing lost,
// nothing duplicated.
func TestWorkersKilledMidBatch(t *testing.T) {
	h := start(t)
	const burst = 120
	ctx := context.Background()
	// A burst of uploads from 8 clients, so work queues up in every stage,
	// then a trickle until every worker was killed: a stage that drained
	// the burst before its turn (the ingestor's durable copies come within
	// 3 s) still has work to be killed in.
	var wg sync.WaitGroup
	var next atomic.Int64
	stop := make(chan struct{})
	errs := make(chan error, 8)
	upload := func() {
		i := int(next.Add(1) - 1)
		body := fmt.Sprintf("# File %d\n\ncrashword%04d body\n", i, i)
		if _, err := h.s3.PutObject(ctx, localstack.Bucket, fmt.Sprintf("acme/batch/f%04d.md", i), strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Load() < burst {
				upload()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if next.Load() >= burst {
					upload()
				}
			}
		}
	}()
	killWhenBusy := func(name, stream, consumer string) {
		t.Helper()
		c, err := h.js.Consumer(ctx, stream, consumer)
		if err != nil {
			t.Fatal(err)
		}
		// Polled often: work queued in a stage does not stay long.
		var queued string
		waitEvery(t, name+" to have work queued to be killed in", 5*time.Millisecond, 60*time.Second, func() (bool, string) {
			ci, err := c.Info(ctx)
			if err != nil {
				return false, err.Error()
			}
			queued = fmt.Sprintf("%d pending, %d in flight", ci.NumPending, ci.NumAckPending)
			return ci.NumPending+uint64(ci.NumAckPending) > 0, queued
		})
		t.Logf("killing %s with SIGKILL: %s", name, queued)
		h.stack.Process(name).Kill()
		if err := h.stack.StartService(ctx, name); err != nil {
			t.Fatalf("restart %s: %v", name, err)
		}
	}
	// First mid-burst, while the ingestor works on live events (not kept
	// anywhere: their durable copies must carry them), then on the durable path.
	var live float64
	waitEvery(t, "the ingestor to process 5 live events", 5*time.Millisecond, 60*time.Second, func() (bool, string) {
		live = metric(t, h.stack.Ports().Ingestor, `strata_ingestor_live_events_total{outcome="processed"}`)
		return live >= 5, fmt.Sprintf("%v processed", live)
	})
	t.Logf("killing ingestor with SIGKILL after %v live events", live)
	h.stack.Process("ingestor").Kill()
	if err := h.stack.StartService(ctx, "ingestor"); err != nil {
		t.Fatalf("restart ingestor: %v", err)
	}
	killWhenBusy("indexer", pipeline.ChunksStream, pipeline.IndexerChunksConsumer)
	killWhenBusy("ingestor", pipeline.ObjectsStream, pipeline.IngestorConsumer)
	// The embedder (no provider configured) only acknowledges, too fast to catch
	// with work queued: kill it mid-burst regardless.
	h.stack.Process("embedder").Kill()
	if err := h.stack.StartService(ctx, "embedder"); err != nil {
		t.Fatalf("restart embedder: %v", err)
	}
	// A graceful restart under load: SIGTERM drains in-flight work before exiting.
	if err := h.stack.Process("ingestor").Stop(30 * time.Second); err != nil {
		t.Fatalf("graceful stop of the ingestor: %v", err)
	}
	if err := h.stack.StartService(ctx, "ingestor"); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := int(next.Load())
	h.events += uint64(n)
	t.Logf("%d files uploaded (%d in the burst)", n, burst)
	// Redelivery after a kill waits for the ack deadline (1 min) of what the dead worker held.
	h.expectExactly(n, 3*time.Minute, func(i int) (string, string) {
		return fmt.Sprintf("batch/f%04d.md", i), fmt.Sprintf("crashword%04d", i)
	})
}

// expectExactly waits until the acme project has n indexed documents, then
// checks there are exactly n, with one chunk each holding the expected word:
// nothing lost, nothing duplicated, nothing failed.
func (h *harness) expectExactly(n int, wait time.Duration, file func(i int) (path, word string)) {
	h.t.Helper()
	deadline := time.Now().Add(wait)
	var out map[string]any
	for {
		out, _ = h.call("status", map[string]any{})
		if out != nil && out["documentCount"] == float64(n) {
			break
		}
		if time.Now().After(deadline) {
			// Which files, and where each one's event stopped.
			var missing []string
			for i := range n {
				path, _ := file(i)
				if _, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path}); errText != "" {
					st, _ := h.call("object_status", map[string]any{"key": "acme/" + path})
					missing = append(missing, fmt.Sprintf("%s (%s): %v", path, errText, st))
				}
			}
			h.t.Fatalf("not all %d files indexed: %v\nmissing: %v", n, out, missing)
		}
		time.Sleep(time.Second) // the poll interval
	}
	if out["chunkCount"] != float64(n) || out["failedCount"] != 0.0 {
		h.t.Fatalf("want exactly %d documents with one chunk each and no failures, got %v", n, out)
	}
	var wrong []string
	for i := range n {
		path, word := file(i)
		out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
		cs := chunksOf(out)
		if errText != "" || len(cs) != 1 || !strings.Contains(cs[0]["content"].(string), word) {
			wrong = append(wrong, fmt.Sprintf("%s: %v %s", path, out, errText))
		}
	}
	if len(wrong) > 0 {
		h.t.Fatalf("%d of %d files wrong: %v", len(wrong), n, wrong)
	}
}

// TestAFileCutShortIsReadAloneAndRecorded: the ingestor is killed while it
// reads a large file. Delivered again, the file is read alone, in a process of its own
// with a memory budget (here -file-memory-bytes 64 MiB, which it passes), and
// is recorded as failed with that reason, once, with no crash loop; a file
// uploaded beside it is indexed.
func TestAFileCutShortIsReadAloneAndRecorded(t *testing.T) {
	// Durable events only (no live copy read a moment before): the one the
	// killed ingestor held comes back as a delivery again.
	h := startShaped(t, map[string][]string{"ingestor": {"STRATA_FILE_MEMORY_BYTES=67108864", "STRATA_LIVE_SUBJECT="}}, nil)
	// 15 MB of text, under the 16 MiB text limit: the worker's own read
	// takes a while, and a second read holds more than 64 MiB.
	var b strings.Builder
	for i := 0; b.Len() < 15<<20; i++ {
		fmt.Fprintf(&b, "Line %d of a long log with ordinary words in it.\n", i)
	}
	h.put("acme/big.txt", b.String())
	waitEvery(t, "the ingestor to begin reading big.txt", 5*time.Millisecond, 2*time.Minute, func() (bool, string) {
		out, errText := h.call("object_status", map[string]any{"key": "acme/big.txt"})
		return out != nil && out["state"] == pipeline.StatePending, fmt.Sprint(out, errText)
	})
	h.stack.Process("ingestor").Kill()
	t.Log("killed the ingestor while it read big.txt")
	if err := h.stack.StartService(context.Background(), "ingestor"); err != nil {
		t.Fatal(err)
	}
	h.put("acme/small.md", "# Small\n\nsmallword uploaded beside it\n")
	big := map[string]any{"project_reference": "acme", "file_path": "big.txt"}
	// Its events are delivered again after the ack deadline (1 min) of what the killed worker held.
	var errText string
	waitEvery(t, "big.txt recorded as failed", time.Second, 4*time.Minute, func() (bool, string) {
		var out map[string]any
		out, errText = h.call("list_file_chunks", big)
		return strings.Contains(errText, "was not indexed (failed)"), fmt.Sprint(len(chunksOf(out)), " chunks; ", errText)
	})
	if !strings.Contains(errText, "memory budget of one file") || !strings.Contains(errText, "read alone after an earlier attempt") {
		t.Fatalf("big.txt's recorded reason: %s", errText)
	}
	if out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "small.md"}); len(chunksOf(out)) != 1 {
		t.Fatalf("the file beside it: %v %s", out, errText)
	}
	select {
	case <-h.stack.Process("ingestor").Exited():
		t.Fatal("the ingestor died again: a crash loop")
	default:
	}
}
