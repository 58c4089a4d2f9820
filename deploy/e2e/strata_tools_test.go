package e2e

import (
	"slices"
	"testing"
	"time"
)

// TestStrataTools exercises Strata's own tools through a real MCP client:
// object_status waiting on an upload that races it, hybrid_search with its
// fusion controls, filters and explain, the change feed since a release and
// between releases, and the failures view.
func TestStrataTools(t *testing.T) {
	h := start(t)
	for path, body := range embeddingDocs {
		h.put("acme/"+path, body)
	}
	h.put("acme/broken.pdf", "%PDF-1.7 this is not really a PDF")
	h.waitEmbedded(len(embeddingDocs))

	// Read-your-writes: the wait starts before the upload exists.
	uploaded := make(chan struct{})
	go func() {
		// Deliberately late: nothing outside queryd shows that its wait has
		// begun, so the upload comes 300 ms after the call was sent.
		time.Sleep(300 * time.Millisecond)
		h.put("acme/fresh/new.md", "# Fresh\n\nfreshlyuploadedword appears here\n")
		close(uploaded)
	}()
	st, errText := h.call("object_status", map[string]any{"key": "acme/fresh/new.md", "wait_seconds": 30})
	<-uploaded
	if errText != "" || st["searchable"] != true || st["state"] != "embedded" || st["timed_out"] != false || st["waited_ms"].(float64) <= 0 {
		t.Fatalf("object_status wait: %v %s", st, errText)
	}
	if out, _ := h.call("search_keyword", map[string]any{"query": "freshlyuploadedword"}); len(results(out)) != 1 {
		t.Fatalf("searchable means found right away: %v", out)
	}
	if st["watermark"].(float64) < st["sequence"].(float64) {
		t.Fatalf("the watermark read must include the object's commit: %v", st)
	}
	if st, _ := h.call("object_status", map[string]any{"key": "acme/never/uploaded.md"}); st["state"] != "unknown" || st["searchable"] != false {
		t.Fatalf("unknown key: %v", st)
	}
	if _, errText := h.call("object_status", map[string]any{"key": "../etc/passwd"}); errText == "" {
		t.Fatal("a hostile key must be refused")
	}
	if st, _ := h.call("object_status", map[string]any{"key": "acme/broken.pdf"}); st["state"] != "failed" || st["error"] == "" {
		t.Fatalf("failed object: %v", st)
	}

	// hybrid_search: fusion controls and explain.
	q := "forgot my password reset link"
	both, errText := h.call("hybrid_search", map[string]any{"query": q, "top_k": 3})
	if errText != "" || len(results(both)) == 0 || results(both)[0]["document_path"] != "help/password.md" || both["watermarks"].(map[string]any)["acme"] == nil {
		t.Fatalf("hybrid_search: %v %s", both, errText)
	}
	top := results(both)[0]["explain"].(map[string]any)
	if top["keyword_rank"] != 1.0 || top["vector_rank"] != 1.0 || top["vector_similarity"] == nil || top["keyword_score"] == nil {
		t.Fatalf("explain of the top hit: %v", top)
	}
	for alpha, absent := range map[float64]string{0: "vector_rank", 1: "keyword_rank"} {
		out, _ := h.call("hybrid_search", map[string]any{"query": q, "alpha": alpha, "fusion": "ranked"})
		for _, r := range results(out) {
			if r["explain"].(map[string]any)[absent] != nil {
				t.Fatalf("alpha %v: %s must be null: %v", alpha, absent, r)
			}
		}
	}
	if out, _ := h.call("hybrid_search", map[string]any{"query": q, "path_prefix": "travel/"}); len(results(out)) != 1 || results(out)[0]["document_path"] != "travel/weather.md" {
		t.Fatalf("path_prefix: %v", out)
	}
	if out, _ := h.call("hybrid_search", map[string]any{"query": q, "content_types": []string{"pdf"}}); len(results(out)) != 0 {
		t.Fatalf("content_types pdf: %v", out)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if out, _ := h.call("hybrid_search", map[string]any{"query": q, "modified_after": future}); len(results(out)) != 0 {
		t.Fatalf("modified_after the future: %v", out)
	}
	if out, _ := h.call("hybrid_search", map[string]any{"query": q, "modified_before": future, "content_types": []string{"markdown"}}); len(results(out)) == 0 {
		t.Fatalf("modified_before the future, markdown: %v", out)
	}
	for name, args := range map[string]map[string]any{
		"alpha out of range": {"query": q, "alpha": 1.5},
		"bad fusion":         {"query": q, "fusion": "max"},
		"bad time":           {"query": q, "modified_after": "yesterday"},
		"branch, no project": {"query": q, "branch_id": nil, "release_version": "v1"},
	} {
		if _, errText := h.call("hybrid_search", args); errText == "" {
			t.Errorf("%s: accepted", name)
		}
	}

	// Change feed.
	all, _ := h.call("list_changes", map[string]any{"project_reference": "acme"})
	paths := changed(all, "added")
	for _, p := range []string{"help/password.md", "travel/weather.md", "kitchen/bread.md", "fresh/new.md", "broken.pdf"} {
		if !slices.Contains(paths, p) {
			t.Fatalf("list_changes since 0 lacks %s: %v", p, all)
		}
	}
	h.release("acme", "", "v1")
	h.put("acme/travel/weather.md", "# Travel notes\n\nRain all week in Paris.\n")
	h.remove("acme/kitchen/bread.md")
	h.put("acme/later.md", "# Later\n\nadded after v1\n")
	h.settle()
	h.release("acme", "", "v2")
	since, errText := h.call("list_changes", map[string]any{"project_reference": "acme", "since_release": "v1"})
	if errText != "" || !slices.Equal(changed(since, "updated"), []string{"travel/weather.md"}) || !slices.Equal(changed(since, "deleted"), []string{"kitchen/bread.md"}) ||
		!slices.Equal(changed(since, "added"), []string{"later.md"}) {
		t.Fatalf("since v1: %v %s", since, errText)
	}
	between, errText := h.call("list_changes", map[string]any{"project_reference": "acme", "since_release": "v1", "until_release": "v2", "limit": 2})
	if errText != "" || len(between["changes"].([]any)) != 2 || between["next_cursor"] == nil {
		t.Fatalf("between releases, page 1: %v %s", between, errText)
	}
	page2, _ := h.call("list_changes", map[string]any{"project_reference": "acme", "cursor": between["next_cursor"]})
	if len(page2["changes"].([]any)) != 1 || page2["next_cursor"] != nil {
		t.Fatalf("between releases, page 2: %v", page2)
	}
	again, _ := h.call("list_changes", map[string]any{"project_reference": "acme", "since_sequence": since["next_since_sequence"]})
	if len(again["changes"].([]any)) != 0 {
		t.Fatalf("nothing changed since next_since_sequence: %v", again)
	}

	// Failures view.
	fails, _ := h.call("list_failures", map[string]any{"project_reference": "acme"})
	list := fails["failures"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["path"] != "broken.pdf" || list[0].(map[string]any)["reason"] == "" || list[0].(map[string]any)["stage"] != "extract" {
		t.Fatalf("list_failures: %v", fails)
	}
	if none, _ := h.call("list_failures", map[string]any{"path_prefix": "help/"}); len(none["failures"].([]any)) != 0 {
		t.Fatalf("path_prefix filter: %v", none)
	}
}

func changed(out map[string]any, kind string) []string {
	var paths []string
	for _, c := range out["changes"].([]any) {
		if m := c.(map[string]any); m["change"] == kind {
			paths = append(paths, m["path"].(string))
		}
	}
	slices.Sort(paths)
	return paths
}
