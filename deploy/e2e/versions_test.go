package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/freshness"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

func (h *harness) release(project, branch, version string) pipeline.ReleaseReply {
	h.t.Helper()
	nc := h.js.Conn()
	body, _ := json.Marshal(pipeline.ReleaseRequest{Project: project, Branch: branch, Version: version})
	msg, err := nc.Request(pipeline.ReleaseCreateSubject, body, 10*time.Second)
	if err != nil {
		h.t.Fatalf("release request: %v", err)
	}
	var r pipeline.ReleaseReply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		h.t.Fatalf("release reply %s: %v", msg.Data, err)
	}
	return r
}

func contents(out map[string]any) string {
	var parts []string
	for _, c := range chunksOf(out) {
		parts = append(parts, c["content"].(string))
	}
	return strings.Join(parts, "|")
}

// TestReleasesAndBranches: a release made with a NATS request reads exactly
// what was visible then, after three overwrites and a delete; branches
// overlay main.
func TestReleasesAndBranches(t *testing.T) {
	h := start(t)
	h.put("acme/guide.md", "# Guide\n\nalpha release text\n")
	h.put("acme/keep.md", "# Keep\n\nmain copy\n")
	h.put("acme/other.md", "# Other\n\nonly on main\n")
	h.settle()
	// Versions that wait together commit at one sequence (group commit), so
	// three files may take fewer than three: the release pins the watermark.
	visible := int64(h.watermark("acme"))
	rel := h.release("acme", "", "v1.0.0")
	if rel.Error != "" || rel.Release == nil || rel.Release.ReleaseID != ids.Release("acme", "", "v1.0.0") || visible < 1 || rel.Release.Sequence != visible {
		t.Fatalf("release: %+v %+v (watermark %d)", rel, rel.Release, visible)
	}
	for _, v := range []string{"beta", "gamma", "delta"} {
		h.put("acme/guide.md", "# Guide\n\n"+v+" text\n")
		h.settle()
	}
	h.remove("acme/guide.md")
	h.settle()

	guide := map[string]any{"project_reference": "acme", "file_path": "guide.md"}
	if _, errText := h.call("list_file_chunks", guide); !strings.Contains(errText, "file not found") {
		t.Fatalf("latest must not show the deleted file: %q", errText)
	}
	for _, args := range []map[string]any{
		{"project_reference": "acme", "file_path": "guide.md", "release_version": "v1.0.0"},
		{"project_reference": "acme", "file_path": "guide.md", "release_id": rel.Release.ReleaseID},
	} {
		out, errText := h.call("list_file_chunks", args)
		if errText != "" || !strings.Contains(contents(out), "alpha release text") {
			t.Fatalf("release read %v: %v %q", args, out, errText)
		}
	}
	if dup := h.release("acme", "", "v1.0.0"); !strings.Contains(dup.Error, "already exists") {
		t.Fatalf("duplicate version must be refused: %+v", dup)
	}
	if _, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "guide.md", "release_version": "v9"}); !strings.Contains(errText, "release not found") {
		t.Fatalf("unknown release: %q", errText)
	}

	// Branch feature-1: a changed file, a new file, and a file deleted on the branch.
	h.put("acme@feature-1/keep.md", "# Keep\n\nbranch copy\n")
	h.put("acme@feature-1/new.md", "# New\n\nonly on the branch\n")
	h.put("acme@feature-1/other.md", "# Other\n\nbranch version before delete\n")
	h.settle()
	h.remove("acme@feature-1/other.md")
	h.settle()

	out, _ := h.call("list_branches", map[string]any{"project_reference": "acme"})
	branchID := ids.Branch("acme", "feature-1")
	if b, _ := json.Marshal(out); !strings.Contains(string(b), branchID) || !strings.Contains(string(b), `"name":"main"`) {
		t.Fatalf("list_branches: %s", b)
	}
	read := func(path string, branch any) (string, string) {
		out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path, "branch_id": branch})
		return contents(out), errText
	}
	for _, c := range []struct {
		path   string
		branch any
		want   string // content, or an error text
	}{
		{"keep.md", branchID, "branch copy"},
		{"keep.md", nil, "main copy"},
		{"new.md", branchID, "only on the branch"},
		{"new.md", nil, "file not found"},
		{"other.md", branchID, "file not found"}, // deleted on the branch hides main's copy
		{"other.md", nil, "only on main"},
		{"guide.md", branchID, "file not found"}, // deleted on main, unchanged on the branch
	} {
		got, errText := read(c.path, c.branch)
		if !strings.Contains(got+errText, c.want) {
			t.Errorf("%s on branch %v: got %q %q, want %q", c.path, c.branch, got, errText, c.want)
		}
	}
	// A release of the branch pins the branch view.
	brel := h.release("acme", "feature-1", "b1")
	if brel.Error != "" || brel.Release.BranchID != branchID {
		t.Fatalf("branch release: %+v", brel)
	}
	h.put("acme@feature-1/keep.md", "# Keep\n\nbranch copy two\n")
	h.settle()
	out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "keep.md", "branch_id": branchID, "release_version": "b1"})
	if errText != "" || !strings.Contains(contents(out), "branch copy") || strings.Contains(contents(out), "two") {
		t.Fatalf("branch release read: %v %q", out, errText)
	}

	// Freshness: each object's last event is recorded with its state and commit.
	fr, err := freshness.Open(context.Background(), h.js, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fr.Get(context.Background(), "acme", "acme/keep.md")
	if err != nil || st == nil || (st.State != pipeline.StateIndexed && st.State != pipeline.StateEmbedded) || st.Sequence == 0 {
		t.Fatalf("freshness of acme/keep.md: %+v %v", st, err)
	}
	st, _ = fr.Get(context.Background(), "acme", "acme/guide.md")
	if st == nil || st.State != pipeline.StateDeleted {
		t.Fatalf("freshness of deleted acme/guide.md: %+v", st)
	}
}
