// Package progress prints what a long command is doing as a few lines a
// person can read: one line per step, a live count with the time left, and
// the raw output of the tools it runs kept in a log file (shown in full when a
// step fails). `go tool task up`, `install` and `test` and the strata
// command's ingest use it.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// IsTerminal reports whether f is a terminal, where lines redraw in place.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Line is one status line: redrawn in place on a terminal (\r), printed as a
// new line every Every otherwise (logs and CI keep a few lines, not thousands).
type Line struct {
	Out   io.Writer
	TTY   bool
	Every time.Duration // between printed lines when not a terminal

	mu    sync.Mutex
	width int // of the last line drawn in place
}

// Draw shows s now.
func (l *Line) Draw(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.TTY {
		pad := max(0, l.width-len(s))
		fmt.Fprintf(l.Out, "\r%s%s", s, strings.Repeat(" ", pad))
		l.width = len(s)
		return
	}
	fmt.Fprintln(l.Out, s)
}

// Run draws line periodically until the returned stop draws the final one
// (nothing when final is empty) and ends the line.
func (l *Line) Run(line func() string) (stop func(final string)) {
	tick := l.Every
	if l.TTY || tick <= 0 {
		tick = 200 * time.Millisecond
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				l.Draw(line())
			}
		}
	}()
	return func(final string) {
		close(quit)
		<-finished
		if final != "" {
			l.Draw(final)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.TTY && l.width > 0 {
			if final == "" { // clear the live line rather than leave it half-written
				fmt.Fprintf(l.Out, "\r%s\r", strings.Repeat(" ", l.width))
			} else {
				fmt.Fprintln(l.Out)
			}
			l.width = 0
		}
	}
}

// Left estimates the time left when done of total units took elapsed, or
// "" when there is too little to go on.
func Left(done, total int, elapsed time.Duration) string {
	if done < 1 || total <= done || elapsed < time.Second {
		return ""
	}
	left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
	return "about " + Duration(left) + " left"
}

// Duration is d for people: 45s, 3m10s, 1h05m.
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
