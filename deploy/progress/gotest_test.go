package progress

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeModule writes a module with a passing package, a failing one and one
// without tests.
func writeModule(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":             "module example.com/m\n\ngo 1.24\n",
		"good/good.go":       "package good\n\nfunc One() int { return 1 }\n",
		"good/good_test.go":  "package good\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) { t.Log(\"passing test's log\"); if One() != 1 { t.Fatal(\"no\") } }\n",
		"bad/bad.go":         "package bad\n",
		"bad/bad_test.go":    "package bad\n\nimport \"testing\"\n\nfunc TestFine(t *testing.T) { t.Log(\"fine test's log\") }\n\nfunc TestBroken(t *testing.T) { t.Fatal(\"broken: want 2, got 3\") }\n",
		"notests/notests.go": "package notests\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGoTestShowsOnlyFailedTests runs real `go test -json` on a small module.
func TestGoTestShowsOnlyFailedTests(t *testing.T) {
	dir := writeModule(t)
	var out syncBuffer
	s, err := NewSteps(&out, false, filepath.Join(t.TempDir(), "test.log"), 1)
	if err != nil {
		t.Fatal(err)
	}
	times := filepath.Join(t.TempDir(), "cache", "times.json")
	err = s.Run("go test", func(st *Step) error {
		return GoTest{Dir: dir, Flags: []string{"-count=1"}, Patterns: []string{"./..."}, TimesPath: times}.Run(context.Background(), st)
	})
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "1 of 3 packages failed: example.com/m/bad") {
		t.Fatalf("err %v", err)
	}
	got := out.String()
	if !strings.Contains(got, "--- FAIL: TestBroken") || !strings.Contains(got, "broken: want 2, got 3") ||
		!strings.Contains(got, "FAIL\texample.com/m/bad") || strings.Contains(got, "passing test's log") || strings.Contains(got, "fine test's log") {
		t.Fatalf("screen:\n%s", got)
	}
	log, _ := os.ReadFile(s.LogPath())
	if !strings.Contains(string(log), "passing test's log") || !strings.Contains(string(log), "--- FAIL: TestBroken") {
		t.Fatalf("the log must keep every test's output:\n%s", log)
	}
	var saved map[string]float64
	if b, err := os.ReadFile(times); err != nil || json.Unmarshal(b, &saved) != nil || len(saved) != 3 {
		t.Fatalf("durations saved for the next estimate: %s %v", times, saved)
	}
}

func TestGoTestSummary(t *testing.T) {
	dir := writeModule(t)
	var out syncBuffer
	s, err := NewSteps(&out, false, filepath.Join(t.TempDir(), "test.log"), 1)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run("go test", func(st *Step) error {
		return GoTest{Dir: dir, Patterns: []string{"./good", "./notests"}}.Run(context.Background(), st)
	})
	s.Close()
	if err != nil || !strings.Contains(out.String(), "[1/1] go test: 2 packages: 1 passed, 1 without tests, in ") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}

// TestTimeLeftComesFromTheLastRun: the longest package still running, or
// the remaining work spread over the parallel binaries.
func TestTimeLeftComesFromTheLastRun(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	last := map[string]float64{"a": 600, "b": 60, "c": 60, "d": 60}
	r := newTestRun([]string{"a", "b", "c", "d"}, last, 2, clock)
	r.add(testEvent{Action: "start", Package: "a"})
	now = now.Add(100 * time.Second)
	r.add(testEvent{Action: "pass", Package: "b", Elapsed: 50})
	// a has 500 s left; c and d 120 s over 2 binaries: a is the long pole.
	if got := r.line(); !strings.Contains(got, "1/4 packages, running a, about 8m20s left (from the last run)") {
		t.Fatalf("line %q", got)
	}
	r.add(testEvent{Action: "fail", Package: "c", Test: "TestX"})
	r.add(testEvent{Action: "fail", Package: "c"})
	if got := r.line(); !strings.Contains(got, "2/4 packages, running a, 1 FAILED") {
		t.Fatalf("line %q", got)
	}
	r.add(testEvent{Action: "pass", Package: "d", Elapsed: 60})
	now = now.Add(time.Hour) // a, the last one running, is past its last time
	if got := r.line(); !strings.Contains(got, "3/4 packages, running a, 1 FAILED, taking longer than the last run") {
		t.Fatalf("line %q", got)
	}
	first := newTestRun([]string{"a"}, nil, 2, clock)
	if got := first.line(); strings.Contains(got, "left") {
		t.Fatalf("no history, no estimate: %q", got)
	}
}

func TestTallyCountsTopLevelTests(t *testing.T) {
	r := newTestRun([]string{"p"}, nil, 1, time.Now)
	for _, e := range []testEvent{
		{Action: "pass", Package: "p", Test: "TestA"}, {Action: "fail", Package: "p", Test: "TestA"},
		{Action: "fail", Package: "p", Test: "TestA/sub"}, {Action: "pass", Package: "p", Test: "TestB"},
		{Action: "pass", Package: "p", Test: "TestB"}, {Action: "fail", Package: "p", Test: "TestC"},
		{Action: "pass", Package: "p"},
	} {
		r.add(e)
	}
	var b strings.Builder
	r.writeTally(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "p TestA ") || !strings.HasSuffix(lines[0], "1 passed   1 failed  FLAKY") ||
		!strings.HasSuffix(lines[1], "0 passed   1 failed  FAILS") || !strings.HasSuffix(lines[2], "2 passed   0 failed") || lines[3] != "3 tests, 1 flaky" {
		t.Fatalf("tally:\n%s", b.String())
	}
}

// TestFailureReportEndsWithAssertions: a failed test's last lines (its
// assertion, where its logs were kept) close the report.
func TestFailureReportEndsWithAssertions(t *testing.T) {
	r := newTestRun([]string{"p"}, nil, 1, time.Now)
	for _, e := range []testEvent{
		{Action: "output", Package: "p", Test: "TestA", Output: "=== RUN   TestA\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "    e2e_test.go:34: building\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "    e2e_test.go:393: search still finds the old version\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "    e2e_test.go:122: whole service logs kept in /tmp/x\n"},
		// The logs the test dumps after its assertion do not crowd it out.
		{Action: "output", Package: "p", Test: "TestA", Output: "    e2e_test.go:135: --- indexer log (last 3000 bytes):\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "        {\"level\":\"INFO\",\"msg\":\"committed\"}\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "        {\"level\":\"INFO\",\"msg\":\"committed\"}\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "        {\"level\":\"INFO\",\"msg\":\"committed\"}\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "        {\"level\":\"INFO\",\"msg\":\"stopped\"}\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "--- FAIL: TestA (16.00s)\n"},
		{Action: "fail", Package: "p", Test: "TestA"},
		{Action: "fail", Package: "p"},
	} {
		r.add(e)
	}
	rep := r.failureReport()
	tail := rep[strings.LastIndex(rep, "Failed tests"):]
	if !strings.Contains(tail, "--- p TestA\n") || !strings.Contains(tail, "e2e_test.go:393: search still finds the old version") ||
		!strings.Contains(tail, "logs kept in /tmp/x") || strings.Contains(tail, "--- FAIL") || strings.Contains(tail, "stopped") {
		t.Fatalf("report's summary:\n%s", tail)
	}
}

// TestFailureReportKeepsAnAssertionAfterTheKeptLogs: the chaos test says
// where it kept the logs, then fails: both stay in the summary.
func TestFailureReportKeepsAnAssertionAfterTheKeptLogs(t *testing.T) {
	got := lastLines(strings.Join([]string{
		"    chaos_test.go:51: kills 5, objects 45, lost 0",
		"    chaos_test.go:133: whole cluster logs kept in /tmp/x",
		"    chaos_test.go:54: the cluster did not survive: kills 5:",
		"        3 reads refused by both queryd replicas",
		"--- FAIL: TestChaosShort (282.90s)",
	}, "\n"), 3)
	if len(got) != 3 || !strings.Contains(got[0], "kept in /tmp/x") || !strings.Contains(got[2], "3 reads refused") {
		t.Fatalf("summary %q", got)
	}
}
