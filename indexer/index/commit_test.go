package index

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestGroupCommit: versions of one project applied at once share commits.
// Every file's newest version is visible, an older event of a file in the
// same group is stale, a repeated event is a duplicate, and the watermark
// counts commits, not files.
func TestGroupCommit(t *testing.T) {
	w, wv := newWriter(t)
	const project, files = "groupcommit", 24
	ctx := context.Background()
	// A first commit creates the tenant and takes the lock, so the rest queue up behind one another.
	if out, err := w.ApplyFileVersion(ctx, version(project, "first.md", "e0", "01", "first")); err != nil || out != Applied {
		t.Fatalf("first: %s %v", out, err)
	}
	fvs := []struct {
		path, etag, seq string
	}{{"twice.md", "old", "10"}, {"twice.md", "new", "11"}, {"again.md", "a", "12"}, {"again.md", "a", "12"}}
	for i := range files {
		fvs = append(fvs, struct{ path, etag, seq string }{fmt.Sprintf("f%02d.md", i), "e", fmt.Sprintf("%02X", 0x20+i)})
	}
	outcomes := make([]Outcome, len(fvs))
	var wg sync.WaitGroup
	for i, f := range fvs {
		wg.Go(func() {
			out, err := w.ApplyFileVersion(ctx, version(project, f.path, f.etag, f.seq, "words of "+f.path+" "+f.etag))
			if err != nil {
				t.Errorf("%s %s: %v", f.path, f.etag, err)
			}
			outcomes[i] = out
		})
	}
	wg.Wait()
	count := map[Outcome]int{}
	for _, o := range outcomes {
		count[o]++
	}
	// twice.md's old event is stale if it met the new one in a group or came
	// after it; applied if it came first. again.md's copy is a duplicate.
	if count[Applied]+count[Stale] != files+3 || count[Duplicate] != 1 {
		t.Fatalf("outcomes %v (want %d applied or stale and 1 duplicate)", count, files+3)
	}
	wm := watermark(t, w, project)
	if wm >= int64(1+count[Applied]) {
		t.Errorf("watermark %d after %d applied versions: no commit was shared", wm, count[Applied])
	}
	for _, f := range fvs {
		if f.etag == "old" {
			continue
		}
		v := version(project, f.path, f.etag, f.seq)
		if got := visible(t, wv, project, v.FileID, wm); got[v.FileVersionID] != 1 {
			t.Errorf("%s: visible at %d: %v, want its version %s", f.path, wm, got, v.FileVersionID)
		}
	}
}
