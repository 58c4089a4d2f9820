package testservers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Spec describes a server process.
type Spec struct {
	Name    string
	Path    string
	Args    []string
	Env     []string // added to the environment
	LogFile string
	// Dir is the working directory ("" = the caller's).
	Dir string
	// Detach starts the process in its own session so it outlives the caller
	// (the local stack); otherwise it is a child that Stop or the test ends.
	Detach bool
	// Nice lowers the process's CPU priority (nice(1), 1-19): a batch
	// worker sharing cores with the query path. It needs the nice command;
	// without it the process runs at the default priority.
	Nice int
}

// Process is a running server.
type Process struct {
	Name    string
	LogFile string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// Start launches spec with its output appended to spec.LogFile.
func Start(spec Spec) (*Process, error) {
	if err := os.MkdirAll(filepath.Dir(spec.LogFile), 0o755); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	logf, err := os.OpenFile(spec.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: log: %w", spec.Name, err)
	}
	defer logf.Close()
	cmd := exec.Command(spec.Path, spec.Args...)
	if nice, err := exec.LookPath("nice"); err == nil && spec.Nice > 0 {
		// nice execs the program: the pid, and every thread it starts, are the program's.
		cmd = exec.Command(nice, append([]string{"-n", strconv.Itoa(spec.Nice), spec.Path}, spec.Args...)...)
	}
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: spec.Detach, Setpgid: !spec.Detach}
	if !spec.Detach {
		// A killed test run must not leave servers behind.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Path, err)
	}
	p := &Process{Name: spec.Name, LogFile: spec.LogFile, cmd: cmd, exited: make(chan struct{})}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop asks the process to end (SIGTERM) and kills it after timeout.
func (p *Process) Stop(timeout time.Duration) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not stop within %s; killed", p.Name, timeout)
	}
}

// Kill ends the process at once (SIGKILL), as a crash would.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// WaitReady polls check until it succeeds, the process exits, or ctx ends.
// The error quotes the end of the log, where the reason usually is.
func (p *Process) WaitReady(ctx context.Context, check func(context.Context) error) error {
	var last error
	for {
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready (%v); end of %s:\n%s", p.Name, p.waitErr, p.LogFile, tail(p.LogFile, 2000))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v (last check: %v); end of %s:\n%s", p.Name, ctx.Err(), last, p.LogFile, tail(p.LogFile, 2000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// HTTPReady returns a check that succeeds when url answers 200.
func HTTPReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	}
}

// PortFree reports whether a loopback port can be bound now.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, os.ErrClosed) {
		return strings.TrimSpace(string(buf))
	}
	return strings.TrimSpace(string(buf))
}
