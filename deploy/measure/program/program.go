// Package program is the start-up the measurement programs under
// deploy/measure share: a context that Ctrl-C or SIGTERM cancels, errors
// printed after the program's name, and timestamped progress lines.
package program

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Status is an error that only sets the exit status: the program has
// already said what went wrong (or, 0, nothing did).
type Status int

func (s Status) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// Main runs run with the command line's arguments under a context that
// SIGINT or SIGTERM cancels, and exits: 0 when run returns nil or
// flag.ErrHelp (the flag set has printed the usage), a Status's own
// status, else 1 after printing "name: error" to standard error.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	var status Status
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, &status):
		os.Exit(int(status))
	}
	fmt.Fprintln(os.Stderr, name+":", err)
	os.Exit(1)
}

// Logf writes one progress line to w, led by the time of day.
func Logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// Progress is where a stack's start-up progress goes: standard error when
// verbose, else nowhere.
func Progress(verbose bool) io.Writer {
	if verbose {
		return os.Stderr
	}
	return io.Discard
}
