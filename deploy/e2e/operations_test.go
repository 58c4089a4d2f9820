package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/shared/pipeline"
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

// TestReindexAndRedrive performs, through nats.go, what the README's `nats`
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

	publish := func(subject string, body any) {
		b, _ := json.Marshal(body)
		if _, err := h.js.Publish(ctx, subject, b); err != nil {
			t.Fatal(err)
		}
	}
	// nats pub strata.reindex.acme '{}'
	publish("strata.reindex.acme", pipeline.ReindexRequest{})
	h.events++
	h.settle()
	time.Sleep(500 * time.Millisecond)
	h.settle()
	if got := h.watermark("acme"); got != before {
		t.Fatalf("an unforced reindex of unchanged files committed something: watermark %v -> %v", before, got)
	}
	// nats pub strata.reindex.acme '{"force":true}'
	publish("strata.reindex.acme", pipeline.ReindexRequest{Force: true})
	h.events += 1 + 2 // the request and the two re-emitted events
	h.settle()
	if got := h.watermark("acme"); got != before+2 {
		t.Fatalf("a forced reindex must re-process both files: watermark %v -> %v", before, got)
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
