// Package isolate reads a file in a process of its own. A file whose earlier
// attempt was cut short (its worker crashed or was killed mid-read) is read
// again alone, in a child process: if the file itself kills its reader, only
// the child dies, and the file is recorded as failed with the cause instead
// of taking the worker, and every file in flight with it, down again.
//
// The child is the ingestor's own executable, started with ChildEnv set: it
// reads one request (a file's name and bytes) on stdin, extracts it with the
// same readers and limits as the worker, writes the document on stdout and
// exits (Serve).
package isolate

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// ChildEnv, set to "1", makes the ingestor serve one isolated read and exit.
const ChildEnv = "STRATA_ISOLATED_READER"

// ready is the first byte a child writes, once its start-up is over: a
// child that ends before it failed to start, which is not the file's doing.
const ready = 'R'

// Extractor reads one file (detect.Registry).
type Extractor interface {
	Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error)
}

// Config says how to start a child and what it may use.
type Config struct {
	// Command returns the child's command, bound to ctx (exec.CommandContext):
	// the ingestor's own executable and arguments (Self).
	Command func(ctx context.Context) *exec.Cmd
	// MemoryBytes is the child's budget of resident memory: over it, the
	// child is killed and the file recorded as failed (0: no budget). It is
	// also the child's GOMEMLIMIT, so its collector works before the kill.
	MemoryBytes int64
	// Grace is the time a child has beyond the limits' timeouts to start,
	// answer and exit (default 30 s).
	Grace time.Duration
}

// Self is the command of a child: this executable with this process's
// arguments, so it has the worker's readers and limits.
func Self(ctx context.Context) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.CommandContext(ctx, exe, os.Args[1:]...)
}

// Isolated is an Extractor that reads each file in a child process, one at
// a time: a file read again after a crash is read alone.
type Isolated struct {
	cfg  Config
	turn chan struct{}
	poll time.Duration
}

// New returns an Isolated extractor.
func New(cfg Config) *Isolated {
	if cfg.Grace <= 0 {
		cfg.Grace = 30 * time.Second
	}
	return &Isolated{cfg: cfg, turn: make(chan struct{}, 1), poll: 20 * time.Millisecond}
}

type request struct {
	Name string
	Data []byte
}

type reply struct {
	Doc  *extract.Document
	Err  string
	Kind string // which of extract's errors Err wraps ("" none known)
}

// kinds are the errors the ingestor tells apart, named across the pipe.
var kinds = []struct {
	name string
	err  error
}{
	{"unsupported", extract.ErrUnsupported}, {"encrypted", extract.ErrEncrypted}, {"corrupt", extract.ErrCorrupt},
	{"too-large", extract.ErrTooLarge}, {"timeout", extract.ErrTimeout}, {"no-ocr", extract.ErrNoOCR},
}

// remoteError is an error the child's reader returned: its text, and the
// kind of error it wraps.
type remoteError struct {
	text string
	kind error
}

func (e remoteError) Error() string { return e.text }
func (e remoteError) Unwrap() error { return e.kind }

// Extract reads data in a child process. A child that dies, is killed over
// its memory budget or does not answer in time is the file's doing:
// extract.ErrReaderDied (or ErrTimeout) with the cause. A child that cannot
// start, or a ctx that ends, is not: extract.ErrInterrupted.
func (e *Isolated) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	// One at a time; a file that waits longer than one read may take goes
	// back to be read later, so worker slots do not queue behind it.
	wait := time.NewTimer(lim.Timeout + lim.OCRTimeout + e.cfg.Grace)
	defer wait.Stop()
	select {
	case e.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for the isolated reader: %v", extract.ErrInterrupted, ctx.Err())
	case <-wait.C:
		return nil, fmt.Errorf("%w: waiting for the isolated reader, busy with another file", extract.ErrInterrupted)
	}
	defer func() { <-e.turn }()

	limit := lim.Timeout + lim.OCRTimeout + e.cfg.Grace
	childCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(request{Name: name, Data: data}); err != nil {
		return nil, fmt.Errorf("%w: encode the request: %v", extract.ErrInterrupted, err)
	}
	cmd := e.cfg.Command(childCtx)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, ChildEnv+"=1")
	if e.cfg.MemoryBytes > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMEMLIMIT=%d", e.cfg.MemoryBytes*3/4))
	}
	var out bytes.Buffer
	errTail := &tail{max: 4 << 10}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, errTail
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start the isolated reader: %v", extract.ErrInterrupted, err)
	}
	var overBudget atomic.Int64
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		e.watchMemory(cmd.Process, stopWatch, &overBudget)
	}()
	waitErr := cmd.Wait()
	close(stopWatch)
	<-watched

	switch {
	case overBudget.Load() > 0:
		return nil, fmt.Errorf("%w: it held %d MiB, over the %d MiB memory budget of one file (-file-memory-bytes), and was stopped",
			extract.ErrReaderDied, overBudget.Load()>>20, e.cfg.MemoryBytes>>20)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %v", extract.ErrInterrupted, ctx.Err())
	case childCtx.Err() != nil:
		return nil, fmt.Errorf("%w: the isolated reader gave no answer within %v", extract.ErrTimeout, limit)
	case len(out.Bytes()) == 0 || out.Bytes()[0] != ready:
		// It ended before it was ready to read: its start-up failed (its
		// flags, a missing tool), not the file.
		return nil, fmt.Errorf("%w: the isolated reader did not start (%s)", extract.ErrInterrupted, cause(waitErr, errTail.String()))
	case waitErr != nil:
		return nil, fmt.Errorf("%w (%s)", extract.ErrReaderDied, cause(waitErr, errTail.String()))
	}
	out.Next(1)
	var rep reply
	if err := gob.NewDecoder(&out).Decode(&rep); err != nil {
		return nil, fmt.Errorf("%w: its answer is unreadable: %v (%s)", extract.ErrReaderDied, err, cause(nil, errTail.String()))
	}
	if rep.Err != "" {
		re := remoteError{text: rep.Err}
		for _, k := range kinds {
			if k.name == rep.Kind {
				re.kind = k.err
			}
		}
		return nil, re
	}
	return rep.Doc, nil
}

// watchMemory kills p when its resident memory passes the budget, and
// records what it held then.
func (e *Isolated) watchMemory(p *os.Process, stop <-chan struct{}, over *atomic.Int64) {
	if e.cfg.MemoryBytes <= 0 {
		return
	}
	t := time.NewTicker(e.poll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		rss, ok := residentBytes(p.Pid)
		if ok && rss > e.cfg.MemoryBytes {
			over.Store(rss)
			killGroup(p)
			return
		}
	}
}

// cause says why a child ended: its exit (a signal, a status) and the line
// of its standard error that says why (a Go runtime's fatal error or panic).
func cause(waitErr error, stderr string) string {
	var parts []string
	if waitErr != nil {
		parts = append(parts, waitErr.Error())
	}
	if why := lastWords(stderr); why != "" {
		parts = append(parts, why)
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, ": ")
}

// lastWords is the first line of a Go crash report in stderr ("fatal
// error: ...", "panic: ...", "runtime: ..."), or "".
func lastWords(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"fatal error:", "panic:", "runtime:"} {
			if strings.HasPrefix(l, p) {
				return l[:min(len(l), 300)]
			}
		}
	}
	return ""
}

// Serve is a child's whole work: one request read from in, extracted by ex
// within lim, the reply written to out.
func Serve(ctx context.Context, ex Extractor, lim extract.Limits, in io.Reader, out io.Writer) error {
	if _, err := out.Write([]byte{ready}); err != nil {
		return fmt.Errorf("isolated reader: say it is ready: %w", err)
	}
	var req request
	if err := gob.NewDecoder(in).Decode(&req); err != nil {
		return fmt.Errorf("isolated reader: read the request: %w", err)
	}
	doc, err := ex.Extract(ctx, req.Data, req.Name, lim)
	rep := reply{Doc: doc}
	if err != nil {
		rep.Doc, rep.Err = nil, err.Error()
		for _, k := range kinds {
			if errors.Is(err, k.err) {
				rep.Kind = k.name
				break
			}
		}
	}
	if err := gob.NewEncoder(out).Encode(rep); err != nil {
		return fmt.Errorf("isolated reader: write the reply: %w", err)
	}
	return nil
}

// tail keeps the first and the last max bytes written to it: a Go crash
// report says why on its first line and goes on with every goroutine.
type tail struct {
	max        int
	head, last []byte
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if room := t.max - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head, p = append(t.head, p[:k]...), p[k:]
	}
	t.last = append(t.last, p...)
	if len(t.last) > 2*t.max {
		t.last = append(t.last[:0], t.last[len(t.last)-t.max:]...)
	}
	return n, nil
}

func (t *tail) String() string { return string(t.head) + string(t.last[max(0, len(t.last)-t.max):]) }
