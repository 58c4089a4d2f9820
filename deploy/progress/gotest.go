package progress

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-kb/strata/shared/tick"
)

// GoTest runs `go test -json` as a step: packages done out of the total with
// the time left (from the durations of the last run, kept in TimesPath), every
// test's output in the log, and only the failed tests' output on screen.
type GoTest struct {
	Dir       string   // where go runs
	Flags     []string // go test flags, e.g. -count=1 -timeout 45m
	Patterns  []string // packages, e.g. work
	TimesPath string   // package durations of the last run ("" keeps none)
	// Tally, when set, gets each top-level test's passes and failures
	// after the run (go tool task flaky runs a package -count times).
	Tally io.Writer
}

// Run runs the tests; an error names the failed packages.
func (g GoTest) Run(ctx context.Context, st *Step) error {
	st.Say("listing packages")
	list := exec.CommandContext(ctx, "go", append([]string{"list"}, g.Patterns...)...)
	list.Dir = g.Dir
	out, err := list.Output()
	if err != nil {
		return fmt.Errorf("go list %s: %w", strings.Join(g.Patterns, " "), err)
	}
	packages := strings.Fields(string(out))
	run := newTestRun(packages, loadTimes(g.TimesPath), runtime.GOMAXPROCS(0), time.Now)
	st.Say(run.line())
	// The time left shown on the step's line comes from the run.
	defer tick.Every(time.Second, func() bool { st.Say(run.line()); return true })()

	cmd := exec.CommandContext(ctx, "go", append(append([]string{"test", "-json"}, g.Flags...), g.Patterns...)...)
	cmd.Dir = g.Dir
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, st.Raw())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("go test: %w", err)
	}
	readErr := run.consume(stdout, st.Raw())
	waitErr := cmd.Wait()
	saveTimes(g.TimesPath, run.elapsed)
	if g.Tally != nil {
		run.writeTally(g.Tally)
	}
	st.Say("")
	failed := run.failedPackages()
	if len(failed) > 0 || waitErr != nil || readErr != nil {
		report := run.failureReport()
		if report == "" || len(failed) == 0 {
			report += stderr.String()
		}
		st.ShowOnFailure(report)
		if len(failed) > 0 {
			return fmt.Errorf("%d of %d packages failed: %s", len(failed), len(packages), strings.Join(failed, ", "))
		}
		return fmt.Errorf("go test: %w", errorsJoin(waitErr, readErr))
	}
	st.Done(run.summary())
	return nil
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// testEvent is one line of `go test -json` (cmd/test2json), or of the build
// events it carries (go help buildjson).
type testEvent struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

// testRun follows one `go test -json` stream.
type testRun struct {
	now      func() time.Time
	parallel int
	last     map[string]float64 // seconds each package took last time

	mu       sync.Mutex
	packages []string
	started  map[string]time.Time
	elapsed  map[string]float64          // packages finished, with their time
	result   map[string]string           // pass, fail or skip
	testOut  map[string]*strings.Builder // "pkg test" -> its output
	failures []string                    // "pkg test" keys of failed tests, in order
	pkgOut   map[string]*strings.Builder
	buildOut map[string]*strings.Builder
	tally    map[string]*[2]int // "pkg Test" -> passes, failures (top-level tests)
	begun    time.Time
}

func newTestRun(packages []string, last map[string]float64, parallel int, now func() time.Time) *testRun {
	return &testRun{now: now, parallel: max(parallel, 1), last: last, packages: packages, begun: now(),
		started: map[string]time.Time{}, elapsed: map[string]float64{}, result: map[string]string{},
		testOut: map[string]*strings.Builder{}, pkgOut: map[string]*strings.Builder{}, buildOut: map[string]*strings.Builder{},
		tally: map[string]*[2]int{}}
}

// consume reads the JSON stream, writing each test's output to raw (the
// exact -v output) and keeping what a failure report needs.
func (r *testRun) consume(stream io.Reader, raw io.Writer) error {
	sc := bufio.NewScanner(stream)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e testEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(raw, sc.Text()) // not an event: keep it as it came
			continue
		}
		if e.Output != "" {
			_, _ = io.WriteString(raw, e.Output)
		}
		r.add(e)
	}
	return sc.Err()
}

func builder(m map[string]*strings.Builder, k string) *strings.Builder {
	b, ok := m[k]
	if !ok {
		b = &strings.Builder{}
		m[k] = b
	}
	return b
}

func (r *testRun) add(e testEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case e.Action == "build-output":
		builder(r.buildOut, e.ImportPath).WriteString(e.Output)
	case e.Action == "start" && e.Test == "":
		r.started[e.Package] = r.now()
	case e.Action == "output" && e.Test != "":
		builder(r.testOut, e.Package+" "+e.Test).WriteString(e.Output)
	case e.Action == "output":
		builder(r.pkgOut, e.Package).WriteString(e.Output)
	case e.Action == "fail" && e.Test != "":
		r.failures = append(r.failures, e.Package+" "+e.Test)
		r.count(e, 1)
	case e.Action == "pass" && e.Test != "":
		r.count(e, 0)
	case (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") && e.Test == "":
		r.result[e.Package] = e.Action
		r.elapsed[e.Package] = e.Elapsed
	}
}

// count tallies a top-level test's result (i: 0 passed, 1 failed).
func (r *testRun) count(e testEvent, i int) {
	if strings.Contains(e.Test, "/") {
		return
	}
	k := e.Package + " " + e.Test
	if r.tally[k] == nil {
		r.tally[k] = &[2]int{}
	}
	r.tally[k][i]++
}

// writeTally writes each top-level test's passes and failures, the flaky
// ones (some of each) and the failing ones first.
func (r *testRun) writeTally(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.tally))
	for k := range r.tally {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if fa, fb := r.tally[a][1] > 0, r.tally[b][1] > 0; fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	flaky := 0
	for _, k := range keys {
		t := r.tally[k]
		mark := ""
		switch {
		case t[1] > 0 && t[0] > 0:
			mark, flaky = "  FLAKY", flaky+1
		case t[1] > 0:
			mark = "  FAILS"
		}
		fmt.Fprintf(w, "%-90s %3d passed %3d failed%s\n", k, t[0], t[1], mark)
	}
	fmt.Fprintf(w, "%d tests, %d flaky\n", len(keys), flaky)
}

// line is the live state: packages finished, running, and the time left
// estimated from the last run's durations of the packages not yet finished.
func (r *testRun) line() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := fmt.Sprintf("%d/%d packages", len(r.result), len(r.packages))
	var running []string
	for p := range r.started {
		if _, finished := r.result[p]; !finished {
			running = append(running, p[strings.LastIndex(p, "/")+1:])
		}
	}
	slices.Sort(running)
	if n := len(running); n > 0 {
		s += ", running " + strings.Join(running[:min(n, 3)], " ")
		if n > 3 {
			s += fmt.Sprintf(" +%d", n-3)
		}
	}
	if f := r.failedLocked(); len(f) > 0 {
		s += fmt.Sprintf(", %d FAILED", len(f))
	}
	if left, ok := r.leftLocked(); ok {
		if left >= time.Second {
			s += ", about " + Duration(left) + " left (from the last run)"
		} else if len(running) > 0 {
			s += ", taking longer than the last run"
		}
	}
	return s
}

// leftLocked: the longest package still to finish, or the remaining work
// spread over the parallel test binaries, whichever is longer.
func (r *testRun) leftLocked() (time.Duration, bool) {
	if len(r.last) == 0 {
		return 0, false
	}
	var sum, longest float64
	for _, p := range r.packages {
		if _, finished := r.result[p]; finished {
			continue
		}
		rem := r.last[p]
		if at, ok := r.started[p]; ok {
			rem = max(rem-r.now().Sub(at).Seconds(), 0)
		}
		sum += rem
		longest = max(longest, rem)
	}
	return time.Duration(max(longest, sum/float64(r.parallel)) * float64(time.Second)), true
}

func (r *testRun) failedPackages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failedLocked()
}

func (r *testRun) failedLocked() []string {
	var out []string
	for p, res := range r.result {
		if res == "fail" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// failureReport is every failed test's output, then each failed package's
// own output (its FAIL line, a panic, a timeout) and any build output.
func (r *testRun) failureReport() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, k := range r.failures {
		if out := r.testOut[k]; out != nil {
			b.WriteString(out.String())
		}
	}
	for _, p := range r.failedLocked() {
		if out := r.pkgOut[p]; out != nil {
			b.WriteString(out.String())
		}
	}
	paths := make([]string, 0, len(r.buildOut))
	for p := range r.buildOut {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		b.WriteString(r.buildOut[p].String())
	}
	// Last, each failed test's last words: its assertion, and where its
	// stage logs were kept, even when the output above is clipped.
	if len(r.failures) > 0 {
		b.WriteString("\nFailed tests, each with the last lines it printed:\n")
		for _, k := range r.failures {
			fmt.Fprintf(&b, "--- %s\n", k)
			if out := r.testOut[k]; out != nil {
				for _, l := range lastLines(out.String(), failureLines) {
					fmt.Fprintf(&b, "    %s\n", strings.TrimSpace(l))
				}
			}
		}
	}
	return b.String()
}

// failureLines is how many of a failed test's last lines the summary keeps.
const failureLines = 4

// lastLines is out's last n lines that say something: not the go test
// result lines ("--- FAIL", "=== RUN") nor blank ones. A test that dumps its
// services' logs after its assertion ("--- indexer log (last 3000 bytes):")
// has its summary end before the first dump, so the assertion and where
// the whole logs were kept stay in view.
func lastLines(out string, n int) []string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, dumpedLogMarker) {
			lines = lines[:i]
			break
		}
	}
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "=== ") {
			continue
		}
		keep = append(keep, lines[i])
	}
	slices.Reverse(keep)
	return keep
}

// dumpedLogMarker heads each log tail the end-to-end tests dump on failure
// (deploy/e2e's dumpLogsOnFailure: "--- <service> log (last 3000 bytes):").
const dumpedLogMarker = " log (last "

func (r *testRun) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := map[string]int{}
	for _, res := range r.result {
		counts[res]++
	}
	return fmt.Sprintf("%d packages: %d passed, %d without tests, in %s",
		len(r.result), counts["pass"], counts["skip"], Duration(r.now().Sub(r.begun)))
}

func loadTimes(path string) map[string]float64 {
	times := map[string]float64{}
	if path == "" {
		return times
	}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &times)
	}
	return times
}

// saveTimes merges this run's durations into the file, for the next run's estimate.
func saveTimes(path string, elapsed map[string]float64) {
	if path == "" || len(elapsed) == 0 {
		return
	}
	times := loadTimes(path)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	for p, s := range elapsed {
		times[p] = s
	}
	b, _ := json.MarshalIndent(times, "", "  ")
	_ = os.WriteFile(path, b, 0o644)
}
