package progress

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer: the step's line is drawn from another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStepsCountLinesAndKeepRawOutputInTheLog(t *testing.T) {
	var out syncBuffer
	logPath := filepath.Join(t.TempDir(), "logs", "up.log")
	s, err := NewSteps(&out, false, logPath, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.SetEvery(10 * time.Millisecond)
	err = s.Run("minio v1", func(st *Step) error {
		st.Expect(4, "packages", func(l string) bool { return !strings.Contains(l, " ") })
		fmt.Fprint(st.Raw(), "go: downloading x v1\nexample.com/a\nexample.com/")
		fmt.Fprint(st.Raw(), "b\n")
		time.Sleep(60 * time.Millisecond) // a few lines drawn
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run("cached thing", func(st *Step) error { st.Cached("cached in /c"); return nil }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got := out.String()
	for _, want := range []string{"2 steps; the full output of each goes to " + logPath, "[1/2] minio v1: 2/4 packages", "[1/2] minio v1: done in 0s", "[2/2] cached thing: cached in /c\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "example.com/a") {
		t.Errorf("raw output reached the screen:\n%s", got)
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "example.com/a\nexample.com/b\n") || !strings.Contains(string(log), "===== [2/2] cached thing") {
		t.Errorf("log:\n%s", log)
	}
}

func TestFailedStepShowsItsWholeOutput(t *testing.T) {
	var out syncBuffer
	s, err := NewSteps(&out, false, filepath.Join(t.TempDir(), "x.log"), 3)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Run("first", func(st *Step) error { fmt.Fprintln(st.Raw(), "first step's noise"); return nil })
	boom := errors.New("exit status 1")
	err = s.Run("build", func(st *Step) error {
		fmt.Fprintln(st.Raw(), "line one")
		fmt.Fprint(st.Raw(), "compile error: x.go:3: undefined: y")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	got := out.String()
	if !strings.Contains(got, "[2/3] build: FAILED after") || !strings.Contains(got, "line one\ncompile error: x.go:3: undefined: y\n") ||
		strings.Contains(got, "first step's noise") || !strings.Contains(got, "also in "+s.LogPath()) {
		t.Fatalf("failure output:\n%s", got)
	}

	out = syncBuffer{}
	_ = s.Run("tests", func(st *Step) error {
		fmt.Fprintln(st.Raw(), "ten thousand lines of passing tests")
		st.ShowOnFailure("--- FAIL: TestX\n")
		return boom
	})
	if got := out.String(); !strings.Contains(got, "--- FAIL: TestX\n(the full output is in "+s.LogPath()) || strings.Contains(got, "passing tests") {
		t.Fatalf("ShowOnFailure output:\n%s", got)
	}
}

func TestProgressLines(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out syncBuffer
		p := &Line{Out: &out, TTY: tty, Every: 20 * time.Millisecond}
		n := 0
		stop := p.Run(func() string { n++; return strings.Repeat("x", 10-n%3) })
		time.Sleep(300 * time.Millisecond)
		stop("done")
		s := out.String()
		if tty {
			// Redrawn in place: carriage returns, padded over longer lines, one newline at the end.
			if !strings.HasPrefix(s, "\rxx") || strings.Count(s, "\r") < 2 || strings.Count(s, "\n") != 1 || !strings.Contains(s, "\rdone    ") || !strings.HasSuffix(s, " \n") {
				t.Errorf("terminal progress: %q", s)
			}
		} else if strings.Contains(s, "\r") || !strings.HasSuffix(s, "\ndone\n") || strings.Count(s, "\n") < 3 {
			t.Errorf("plain progress: %q", s)
		}
	}
}

func TestLeftAndDuration(t *testing.T) {
	for _, c := range []struct {
		done, total int
		elapsed     time.Duration
		want        string
	}{
		{0, 10, time.Minute, ""},
		{10, 10, time.Minute, ""},
		{5, 10, 100 * time.Millisecond, ""},
		{1, 4, time.Minute, "about 3m00s left"},
		{100, 1300, 50 * time.Second, "about 10m00s left"},
		{1, 100, time.Minute, "about 1h39m left"},
	} {
		if got := Left(c.done, c.total, c.elapsed); got != c.want {
			t.Errorf("Left(%d, %d, %s) = %q, want %q", c.done, c.total, c.elapsed, got, c.want)
		}
	}
	if got := Duration(42400 * time.Millisecond); got != "42s" {
		t.Errorf("Duration = %q", got)
	}
}
