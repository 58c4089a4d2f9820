package chaos

import (
	"testing"
	"time"
)

func TestLongestGap(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name    string
		served  []time.Duration
		phase   time.Duration
		gap, at time.Duration
	}{
		{"none served", nil, 10 * s, 10 * s, 0},
		{"gap at the start", []time.Duration{4 * s, 5 * s, 9 * s}, 10 * s, 4 * s, 0},
		{"gap in the middle", []time.Duration{1 * s, 2 * s, 8 * s, 9 * s}, 10 * s, 6 * s, 2 * s},
		{"gap at the end", []time.Duration{1 * s, 2 * s}, 10 * s, 8 * s, 2 * s},
		{"answers after the phase are cut at its end", []time.Duration{3 * s, 12 * s}, 10 * s, 7 * s, 3 * s},
		{"out of order", []time.Duration{9 * s, 1 * s, 5 * s}, 10 * s, 4 * s, 1 * s},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &reader{servedAt: tc.served}
			gap, at := r.longestGap(tc.phase)
			if gap != tc.gap || at != tc.at {
				t.Errorf("longestGap = %s from %s, want %s from %s", gap, at, tc.gap, tc.at)
			}
		})
	}
}

func TestRefusedReads(t *testing.T) {
	r := &Result{ReadFailures: []ReadFailure{{Slow: true}, {}, {Slow: true}, {}}}
	if n := r.RefusedReads(); n != 2 {
		t.Errorf("RefusedReads = %d, want 2", n)
	}
	if w := r.ReadFailures[1].Why(); w != "refused" {
		t.Errorf("Why = %q, want refused", w)
	}
}

// TestProjectNotFoundUntilSeen: "project not found" answers a read of the
// project rightly only until a read of it was answered (writes and reads
// start together, before the project's first commit), and never a read
// that names no project.
func TestProjectNotFoundUntilSeen(t *testing.T) {
	r := &reader{}
	scoped := readCall{tool: "list_file_chunks", args: map[string]any{"project_reference": Project}}
	unscoped := readCall{tool: "status", args: map[string]any{}}
	const notFound = `project not found: "chaos"`
	if !r.rightError(scoped, notFound) {
		t.Error("before the project was seen, its absence was refused")
	}
	if r.rightError(unscoped, notFound) {
		t.Error("a read naming no project accepted project not found")
	}
	if r.rightError(scoped, "tool error: internal error") {
		t.Error("another error was accepted")
	}
	r.projectSeen.Store(true)
	if r.rightError(scoped, notFound) {
		t.Error("after the project was seen, its absence was accepted")
	}
}
