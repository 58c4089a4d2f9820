package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/ids"
)

// TestNoStaleReadAfterWatermark: queryd answers from a catalog of commits
// that follows the indexer's published sequences. Once queryd says an
// upload is searchable (object_status: its commit is at or below the
// watermark queryd reads at), every tool must answer with that version at
// once, with no retry: nothing stale, nothing of the replaced version.
func TestNoStaleReadAfterWatermark(t *testing.T) {
	h := start(t)
	const key, path = "acme/fresh/doc.md", "fresh/doc.md"
	fileID := ids.File("acme", "", path)
	var oldChunk, oldSection, oldWord string
	for round := range 4 {
		word := fmt.Sprintf("roundword%dzq", round)
		body := fmt.Sprintf("# Fresh doc\n\n## Part %d\n\nThis version says %s and nothing else.\n", round, word)
		info, err := h.s3.PutObject(context.Background(), localstack.Bucket, key, strings.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{ContentType: "text/markdown"})
		if err != nil {
			t.Fatal(err)
		}
		h.events++
		// The ETag pins the wait to this upload, not the state of the one before.
		st, errText := h.call("object_status", map[string]any{"key": key, "etag": info.ETag, "wait_seconds": 30})
		if errText != "" || st["searchable"] != true {
			t.Fatalf("round %d: object_status %v %s", round, st, errText)
		}
		seq := st["sequence"].(float64)

		// From here on, no call may see the version before.
		has := func(tool string, args map[string]any) string {
			t.Helper()
			out, errText := h.call(tool, args)
			if errText != "" {
				t.Fatalf("round %d: %s: %s", round, tool, errText)
			}
			b, _ := json.Marshal(out)
			return string(b)
		}
		fresh := func(tool string, args map[string]any) {
			t.Helper()
			text := has(tool, args)
			if !strings.Contains(text, word) || (oldWord != "" && strings.Contains(text, oldWord)) {
				t.Fatalf("round %d: %s answered with a stale version (want %s, not %q): %s", round, tool, word, oldWord, text)
			}
		}
		fresh("search_keyword", map[string]any{"query": word})
		fresh("hybrid_search", map[string]any{"query": word, "alpha": 0})
		fresh("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
		fresh("read", map[string]any{"path_part_id": fileID})

		list, _ := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
		chunks := list["data"].([]any)
		chunk := chunks[len(chunks)-1].(map[string]any)["id"].(string)
		fresh("get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": chunk})
		fresh("read_around", map[string]any{"chunk_id": chunk})
		fresh("read_around", map[string]any{"chunk_id": chunk}) // queryd has returned it now: read from its remembered place
		around, _ := h.call("read_around", map[string]any{"chunk_id": chunk})
		sec, _ := around["section"].(map[string]any)
		section, _ := sec["path_part_id"].(string)
		if section == "" {
			t.Fatalf("round %d: read_around names no section: %v", round, around)
		}
		fresh("read", map[string]any{"path_part_id": section}) // resolved from its chunks
		if info := has("get_info", map[string]any{"path_part_id": fileID}); !strings.Contains(info, chunks[0].(map[string]any)["file_version_id"].(string)) {
			t.Fatalf("round %d: get_info shows another version: %s", round, info)
		}
		if oldChunk != "" {
			if out, errText := h.call("get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": oldChunk}); !strings.Contains(errText, "chunk not found") {
				t.Fatalf("round %d: the replaced version's chunk is still served: %v %s", round, out, errText)
			}
			// queryd remembers where the old chunk lay (read_around above):
			// the place must not outlive the commit that replaced it.
			if out, errText := h.call("read_around", map[string]any{"chunk_id": oldChunk}); !strings.Contains(errText, "chunk_id not found") {
				t.Fatalf("round %d: read_around serves the replaced version's chunk: %v %s", round, out, errText)
			}
			if out, errText := h.call("read", map[string]any{"path_part_id": oldSection}); !strings.Contains(errText, "path_part_id not found") {
				t.Fatalf("round %d: read serves the replaced version's section: %v %s", round, out, errText)
			}
			if out, _ := h.call("search_keyword", map[string]any{"query": oldWord}); len(results(out)) != 0 {
				t.Fatalf("round %d: the replaced version is still found: %v", round, out)
			}
		}
		if find := has("find", map[string]any{"name": "doc.md"}); !strings.Contains(find, fileID) {
			t.Fatalf("round %d: find: %s", round, find)
		}
		if files := has("list_files", map[string]any{}); !strings.Contains(files, path) {
			t.Fatalf("round %d: list_files: %s", round, files)
		}
		if wm := h.watermark("acme"); wm < seq {
			t.Fatalf("round %d: status watermark %v below the commit %v that object_status saw", round, wm, seq)
		}
		oldChunk, oldSection, oldWord = chunk, section, word
	}
}
