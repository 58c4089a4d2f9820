package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
)

// TestLiveEvents: MinIO announces each upload twice, at once on the live
// subject and again from its durable queue. The ingestor takes the live copy
// (its metric moves), the durable copy reaches the stream and is acked
// without a second commit (the project's watermark equals its uploads),
// object_status shows every stage in order, and the indexer's
// upload-to-searchable histogram counts each upload once per search kind.
func TestLiveEvents(t *testing.T) {
	h := start(t)
	p := h.stack.Ports()
	liveBefore := metric(t, p.Ingestor, `strata_ingestor_live_events_total{outcome="processed"}`)
	keywordBefore := metric(t, p.Indexer, `strata_upload_to_searchable_seconds_count{search="keyword"}`)
	const uploads = 3
	var last map[string]any
	for i := range uploads {
		key := fmt.Sprintf("livepath/doc%d.md", i)
		body := fmt.Sprintf("# Live %d\n\nliveword%dzq is here.\n", i, i)
		info, err := h.s3.PutObject(context.Background(), localstack.Bucket, key, strings.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{ContentType: "text/markdown"})
		if err != nil {
			t.Fatal(err)
		}
		h.events++
		st, errText := h.call("object_status", map[string]any{"key": key, "etag": info.ETag, "wait_seconds": 30})
		if errText != "" || st["searchable"] != true {
			t.Fatalf("object_status of %s: %v %s", key, st, errText)
		}
		last = st
	}
	stages, _ := last["stages"].(map[string]any)
	var prev time.Time
	for _, stage := range []string{"uploaded", "seen", "extracted", "committed", "embedded"} {
		s, _ := stages[stage].(string)
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("object_status stages %v: %s is %q", stages, stage, s)
		}
		// MinIO's clock and the workers' are the same machine's here; allow for rounding.
		if at.Before(prev.Add(-time.Millisecond)) {
			t.Fatalf("stage %s at %v is before the one ahead of it (%v): %v", stage, at, prev, stages)
		}
		prev = at
	}
	h.settle() // the durable copies have reached the stream and been handled

	if v := metric(t, p.Ingestor, `strata_ingestor_live_events_total{outcome="processed"}`); v < liveBefore+uploads {
		t.Errorf("live events processed went from %v to %v, want %d more", liveBefore, v, uploads)
	}
	if v := metric(t, p.Indexer, `strata_upload_to_searchable_seconds_count{search="keyword"}`); v != keywordBefore+uploads {
		t.Errorf("upload_to_searchable keyword count went from %v to %v, want exactly %d more (one per commit)", keywordBefore, v, uploads)
	}
	st, errText := h.call("object_status", map[string]any{"key": "livepath/doc0.md"})
	if errText != "" || st["watermark"] != float64(uploads) {
		t.Fatalf("project livepath watermark %v after %d uploads and their durable copies, want %d (no second commit): %s", st["watermark"], uploads, uploads, errText)
	}
}
