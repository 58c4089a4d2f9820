package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
)

func (h *harness) watermark(project string) float64 {
	h.t.Helper()
	out, errText := h.call("status", map[string]any{})
	if errText != "" {
		h.t.Fatal(errText)
	}
	for _, p := range out["projects"].([]any) {
		if m := p.(map[string]any); m["project"] == project {
			return m["watermark"].(float64)
		}
	}
	h.t.Fatalf("project %s not in status: %v", project, out)
	return 0
}

// committedAt is the sequence at which the object's latest version was committed.
func (h *harness) committedAt(key string) float64 {
	h.t.Helper()
	st, errText := h.call("object_status", map[string]any{"key": key})
	if errText != "" {
		h.t.Fatalf("object_status %s: %s", key, errText)
	}
	seq, _ := st["sequence"].(float64)
	return seq
}

// TestReindexAndRedrive performs, through nats.go, what docs/operations.md's `nats`
// commands do: a reindex request skips unchanged files and re-processes them
// when forced; a dead letter re-driven to its original subject is processed again.
func TestReindexAndRedrive(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	h.put("acme/r1.md", "# One\n\nreindex one\n")
	h.put("acme/r2.md", "# Two\n\nreindex two\n")
	h.put("bad project/x.md", "dead-lettered: the key is outside the convention")
	h.settle()
	before := h.watermark("acme")

	publish := func(subject string, body any) uint64 {
		b, _ := json.Marshal(body)
		ack, err := h.js.Publish(ctx, subject, b)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	// nats pub strata.reindex.acme '{}'
	seq := publish("strata.reindex.acme", pipeline.ReindexRequest{})
	h.events++
	h.awaitIngested(seq) // the request handled: anything it re-emitted is processed too
	if got := h.watermark("acme"); got != before {
		t.Fatalf("an unforced reindex of unchanged files committed something: watermark %v -> %v", before, got)
	}
	// nats pub strata.reindex.acme '{"force":true}'
	publish("strata.reindex.acme", pipeline.ReindexRequest{Force: true})
	h.events += 1 + 2 // the request and the two re-emitted events
	h.settle()
	// Both files commit again; waiting together they may share one sequence.
	if got := h.watermark("acme"); got <= before || got > before+2 || h.committedAt("acme/r1.md") <= before || h.committedAt("acme/r2.md") <= before {
		t.Fatalf("a forced reindex must re-process both files: watermark %v -> %v, r1 at %v, r2 at %v",
			before, got, h.committedAt("acme/r1.md"), h.committedAt("acme/r2.md"))
	}
	if out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "r1.md"}); errText != "" || len(chunksOf(out)) != 1 {
		t.Fatalf("after reindex: %v %s", out, errText)
	}

	// Re-drive the dead letter: nats stream get DEADLETTER <seq>, then publish its
	// body to the Strata-Original-Subject header.
	dl, err := h.js.Stream(ctx, pipeline.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := dl.GetLastMsgForSubject(ctx, pipeline.DeadLetterSubjectFor("ingestor"))
	if err != nil {
		t.Fatal(err)
	}
	redrive := nats.NewMsg(msg.Header.Get("Strata-Original-Subject"))
	redrive.Data = msg.Data
	if _, err := h.js.PublishMsg(ctx, redrive); err != nil {
		t.Fatal(err)
	}
	h.events++
	h.settle()
	info, _ := dl.Info(ctx)
	if info.State.Msgs != 2 {
		t.Fatalf("the re-driven event (still an invalid key) must be processed again and dead-lettered again: %d dead letters", info.State.Msgs)
	}
}

// TestDeadLetterRedriveAfterFix: with weaviate-server down, the indexer's
// attempts at a file are exhausted and the file version is dead-lettered;
// once weaviate-server is back (the fix), re-driving the dead letter indexes
// the file normally.
func TestDeadLetterRedriveAfterFix(t *testing.T) {
	st := upWith(t, t.TempDir(), nil, false, map[string][]string{
		"queryd": {"STRATA_TOOL_BUDGET=0"}, "indexer": {"STRATA_RETRY_DELAYS=50ms"}})
	t.Cleanup(func() { st.Stop(15 * time.Second); dumpLogsOnFailure(t, st) })
	h := harnessFor(t, st)
	ctx := context.Background()
	if err := st.Servers.Weaviate.Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	h.put("acme/later.md", "# Later\n\nredriven after the fix\n")
	dl, err := h.js.Stream(ctx, pipeline.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	var msg *jetstream.RawStreamMsg
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if msg, err = dl.GetLastMsgForSubject(ctx, pipeline.DeadLetterSubjectFor("indexer")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the indexer never dead-lettered the file while weaviate-server was down: %v", err)
		}
	}
	if msg.Header.Get("Strata-Delivered") != strconv.Itoa(pipeline.MaxDeliver) || msg.Header.Get("Strata-Error") == "" {
		t.Fatalf("dead letter headers: %v", msg.Header)
	}
	if err := st.Servers.Restart(ctx, testservers.Weaviate.Name); err != nil { // the fix
		t.Fatal(err)
	}
	redrive := nats.NewMsg(msg.Header.Get("Strata-Original-Subject"))
	redrive.Data = msg.Data
	redrive.Header.Set(pipeline.HeaderKind, msg.Header.Get(pipeline.HeaderKind))
	if _, err := h.js.PublishMsg(ctx, redrive); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the re-driven file indexed", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "later.md"},
		func(out map[string]any, _ string) bool {
			return strings.Contains(contents(out), "redriven after the fix")
		})
}

// TestLostNotificationsAreReconciled: with the bucket notification switched
// off, an upload and a delete produce no events at all (as when MinIO dies
// between answering and queueing). The ingestor's periodic reconcile pass
// finds both: the new file is indexed and the deleted one disappears.
func TestLostNotificationsAreReconciled(t *testing.T) {
	h := startWith(t, map[string][]string{"ingestor": {"STRATA_RECONCILE_INTERVAL=2s", "STRATA_RECONCILE_MIN_AGE=1s"}})
	ctx := context.Background()
	h.put("acme/kept.md", "# Kept\n\nreconcilekept\n")
	h.put("acme/removed.md", "# Removed\n\nreconcileremoved\n")
	h.put("acme@feature/branchfile.md", "# Branch\n\nreconcilebranch\n")
	h.settle()
	if err := h.s3.RemoveAllBucketNotification(ctx, localstack.Bucket); err != nil {
		t.Fatal(err)
	}
	h.put("acme/unnoticed.md", "# Unnoticed\n\nreconcileunnoticed\n")
	h.put("acme@feature/unnoticed.md", "# Unnoticed on a branch\n\nreconcilebranchunnoticed\n")
	h.remove("acme/removed.md")
	h.events -= 3 // none of them reaches the stream
	if err := bucket.Ensure(ctx, h.s3, localstack.Bucket, bucket.NATSTargetARN(testservers.MinIONotifyID, ""), bucket.NATSTargetARN(testservers.MinIOLiveNotifyID, "")); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the unnoticed upload to be indexed", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "unnoticed.md"},
		func(out map[string]any, _ string) bool {
			cs := chunksOf(out)
			return len(cs) == 1 && strings.Contains(cs[0]["content"].(string), "reconcileunnoticed")
		})
	h.waitFor("the unnoticed branch upload to be indexed", "list_file_chunks",
		map[string]any{"project_reference": "acme", "file_path": "unnoticed.md", "branch_id": ids.Branch("acme", "feature")},
		func(out map[string]any, _ string) bool { return len(chunksOf(out)) == 1 })
	h.waitFor("the unnoticed delete to remove the file", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "removed.md"},
		func(_ map[string]any, errText string) bool { return errText != "" })
	if out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "kept.md"}); errText != "" || len(chunksOf(out)) != 1 {
		t.Fatalf("an unchanged file must stay indexed: %v %s", out, errText)
	}
}
