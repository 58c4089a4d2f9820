package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

// TestAFileOverTheMessageLimitIsFoundWhole (issue 52 item 4): a file whose
// structure and vectors are over the message limit travels by reference
// (the bodies bucket) from the ingestor to the embedder and the indexer,
// and is found whole: its last paragraph by keyword, every chunk embedded.
// The limit is set to 64 KiB here so a 290 KB file crosses it, as a long
// manual crosses the server's 8 MiB.
func TestAFileOverTheMessageLimitIsFoundWhole(t *testing.T) {
	limit := []string{"STRATA_MAX_MESSAGE_BYTES=65536"}
	h := startWith(t, map[string][]string{"ingestor": limit, "embedder": limit})
	var doc strings.Builder
	doc.WriteString("# Plant maintenance manual\n")
	for part := 1; part <= 160; part++ {
		fmt.Fprintf(&doc, "\n## Part %d\n\n", part)
		for p := 1; p <= 8; p++ {
			fmt.Fprintf(&doc, "Paragraph %d of part %d: check valve %d-%d for wear, record its pressure in the log, and replace the gasket when the reading drifts more than %d percent. ", p, part, part, p, p+part)
			fmt.Fprintf(&doc, "The inspector signs the page once pump %d and its filter have been flushed.\n\n", part*10+p)
		}
	}
	doc.WriteString("\n## Last page\n\nThe final inspection ends with the quillborrow seal on the cabinet door.\n")
	if doc.Len() < 4*65536 {
		t.Fatalf("the manual is %d bytes, not far over the limit", doc.Len())
	}
	h.put("acme/manuals/plant.md", doc.String())
	h.settleWithin(3 * time.Minute)

	out := h.waitFor("the last page's word found", "search_keyword", map[string]any{"query": "quillborrow"}, func(out map[string]any, _ string) bool {
		return len(results(out)) == 1
	})
	if hit := results(out)[0]; hit["document_path"] != "manuals/plant.md" || !strings.Contains(fmt.Sprint(hit["content"]), "quillborrow") {
		t.Fatalf("the last page's hit: %v", hit)
	}
	status := h.waitFor("every chunk of the manual embedded", "status", map[string]any{}, func(out map[string]any, _ string) bool {
		for _, p := range out["projects"].([]any) {
			ps := p.(map[string]any)
			if ps["project"] == "acme" && ps["chunkCount"].(float64) > 50 && ps["embeddedChunkCount"] == ps["chunkCount"] {
				return true
			}
		}
		return false
	})
	t.Logf("projects: %v", status["projects"])

	// Both the file version and its vectors went by reference.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := h.js.ObjectStore(ctx, pipeline.BodiesBucket)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var chunks, vectors int
	for _, o := range objects {
		switch {
		case strings.HasPrefix(o.Name, pipeline.ChunksSubjectFor("acme")+"/"):
			chunks++
		case strings.HasPrefix(o.Name, pipeline.EmbeddingsSubjectFor("acme")+"/"):
			vectors++
		}
	}
	if chunks != 1 || vectors != 1 {
		t.Fatalf("bodies by reference: %d file versions and %d vectors, want 1 each (%d objects)", chunks, vectors, len(objects))
	}
}
