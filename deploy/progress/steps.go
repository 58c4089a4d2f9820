package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Steps runs a command's steps in order. Each prints one line, "[2/7] minio
// v0...: 312/1300 packages, about 4m10s left" while it runs (redrawn on a
// terminal, every Every otherwise) and "[2/7] minio v0...: done in 5m02s" when
// it ends. The raw output of every tool goes to one log file; a step that
// fails prints its part of the log in full.
type Steps struct {
	out     io.Writer
	tty     bool
	every   time.Duration
	total   int
	n       int
	log     *os.File
	logPath string
}

// NewSteps opens (truncates) the log file at logPath for a command of total steps.
func NewSteps(out io.Writer, tty bool, logPath string, total int) (*Steps, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	s := &Steps{out: out, tty: tty, every: 15 * time.Second, total: total, log: f, logPath: logPath}
	fmt.Fprintf(out, "%d steps; the full output of each goes to %s\n", total, logPath)
	return s, nil
}

// SetEvery sets how often a step's line is printed when out is not a terminal.
func (s *Steps) SetEvery(d time.Duration) { s.every = d }

// LogPath is the log file's path.
func (s *Steps) LogPath() string { return s.logPath }

// Close closes the log file.
func (s *Steps) Close() error { return s.log.Close() }

// Step is the step running: tools write to Raw, and the step says what it
// counts and what it is doing.
type Step struct {
	title  string
	start  time.Time
	offset int64
	log    io.Writer

	mu       sync.Mutex
	count    int
	expected int
	unit     string
	status   string
	partial  []byte // the unfinished last line of raw output
	lastLine string
	final    string
	failure  string // shown instead of the raw output when the step fails
	counter  func(line string) bool
}

// Run runs fn as the next step. fn gets the step: it writes tools' output to
// Raw(), may Expect a count, Say what it is doing, or mark itself Cached.
func (s *Steps) Run(title string, fn func(st *Step) error) error {
	s.n++
	off, _ := s.log.Seek(0, io.SeekCurrent)
	st := &Step{title: fmt.Sprintf("[%d/%d] %s", s.n, s.total, title), start: time.Now(), offset: off, log: s.log}
	fmt.Fprintf(s.log, "\n===== %s (%s)\n", st.title, st.start.Format(time.RFC3339))
	line := &Line{Out: s.out, TTY: s.tty, Every: s.every}
	if !s.tty {
		fmt.Fprintln(s.out, st.title) // a log's reader sees the step begin
	}
	stop := line.Run(st.line)
	err := fn(st)
	st.flush()
	took := Duration(time.Since(st.start))
	switch {
	case err != nil:
		stop(fmt.Sprintf("%s: FAILED after %s", st.title, took))
		fmt.Fprintf(s.log, "===== FAILED: %v\n", err)
		if st.failure != "" {
			fmt.Fprintf(s.out, "%s(the full output is in %s)\n", st.failure, s.logPath)
		} else {
			s.showSince(off)
		}
		return err
	case st.final != "":
		stop(st.title + ": " + st.final)
	default:
		stop(fmt.Sprintf("%s: done in %s", st.title, took))
	}
	return nil
}

// showSince prints the log from off: the failed step's whole output.
func (s *Steps) showSince(off int64) {
	f, err := os.Open(s.logPath)
	if err != nil {
		fmt.Fprintf(s.out, "(cannot read the log %s: %v)\n", s.logPath, err)
		return
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return
	}
	fmt.Fprintf(s.out, "----- output of the failed step (also in %s):\n", s.logPath)
	_, _ = io.Copy(s.out, f)
	fmt.Fprintln(s.out, "-----")
}

// Raw is where the step's tools write their output: to the log file, each
// line counted when the step counts lines (Expect with CountLines).
func (st *Step) Raw() io.Writer { return &rawWriter{st: st, log: st.log} }

type rawWriter struct {
	st  *Step
	log io.Writer
}

func (w *rawWriter) Write(p []byte) (int, error) {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	w.st.partial = append(w.st.partial, p...)
	for {
		i := bytes.IndexByte(w.st.partial, '\n')
		if i < 0 {
			break
		}
		l := string(w.st.partial[:i])
		w.st.partial = w.st.partial[i+1:]
		if t := strings.TrimSpace(l); t != "" {
			w.st.lastLine = t
			if w.st.counter != nil && w.st.counter(t) {
				w.st.count++
			}
		}
	}
	return w.log.Write(p)
}

// flush ends an unfinished last line in the log, so the next step starts on its own.
func (st *Step) flush() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.partial) > 0 {
		fmt.Fprintln(st.log)
		st.partial = nil
	}
}

// Expect sets the count the step works towards, in unit, and which raw
// lines count (nil: the step calls Add itself).
func (st *Step) Expect(n int, unit string, counts func(line string) bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expected, st.unit, st.counter = n, unit, counts
}

// Add counts n more units done.
func (st *Step) Add(n int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.count += n
}

// Say sets what the step is doing now, shown on its line.
func (st *Step) Say(status string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.status = status
}

// Cached ends the step as having had nothing to do, saying why.
func (st *Step) Cached(why string) { st.final = why }

// ShowOnFailure sets what a failure prints instead of the step's whole
// output (a test run's failed tests rather than every test's log).
func (st *Step) ShowOnFailure(text string) { st.failure = text }

// Done ends the step with a summary instead of "done in ...".
func (st *Step) Done(summary string) { st.final = summary }

// line is the step's live line.
func (st *Step) line() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	elapsed := time.Since(st.start)
	parts := []string{st.title + ":"}
	switch {
	case st.status != "":
		parts = append(parts, st.status)
	case st.expected > 0:
		done := min(st.count, st.expected)
		parts = append(parts, fmt.Sprintf("%d/%d %s", done, st.expected, st.unit))
		if left := Left(done, st.expected, elapsed); left != "" {
			parts = append(parts, left)
		}
	case st.lastLine != "":
		parts = append(parts, clip(st.lastLine, 60))
	}
	parts = append(parts, "("+Duration(elapsed)+")")
	return strings.Join(parts, " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
