package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/strata-kb/strata/shared/testservers"
)

// A detached stack (`task up`, `down`, `status`) is controlled through the
// pid files Up writes under StateDir/run.

// writePIDs records the pid of every server and service under StateDir/run.
func (s *Stack) writePIDs() error {
	procs := map[string]*testservers.Process{"nats-server": s.Servers.NATS, "minio": s.Servers.MinIO, "weaviate-server": s.Servers.Weaviate}
	for k, v := range s.Services {
		procs[k] = v
	}
	for name, p := range procs {
		if err := os.WriteFile(filepath.Join(s.opts.StateDir, "run", name+".pid"), []byte(strconv.Itoa(p.Pid())), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// stopOrder is the order Down stops things: services first, NATS last.
var stopOrder = []string{"queryd", "ingestor", "embedder", "indexer", "weaviate-server", "minio", "nats-server"}

// Running returns the names of the stack's processes that are alive.
func Running(stateDir string) map[string]int {
	out := map[string]int{}
	for _, name := range stopOrder {
		b, err := os.ReadFile(filepath.Join(stateDir, "run", name+".pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || !alive(pid, name) {
			continue
		}
		out[name] = pid
	}
	return out
}

// alive reports whether pid runs the named program (pids get reused).
func alive(pid int, name string) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no /proc: trust the signal check
	}
	return strings.Contains(string(cmdline), name)
}

// Down stops a detached stack gracefully (SIGTERM, then SIGKILL after timeout).
// Data stays in the state directory for the next Up.
func Down(stateDir string, timeout time.Duration, progress io.Writer) error {
	running := Running(stateDir)
	for _, name := range stopOrder {
		pid, ok := running[name]
		if !ok {
			continue
		}
		fmt.Fprintf(progress, "stopping %s (pid %d)\n", name, pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(timeout)
		for alive(pid, name) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(pid, name) {
			fmt.Fprintf(progress, "%s did not stop within %s; killing it\n", name, timeout)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = os.Remove(filepath.Join(stateDir, "run", name+".pid"))
	}
	return nil
}

// Ready checks that a detached stack answers on its readiness endpoints.
func Ready(ctx context.Context, p Ports) error {
	checks := map[string]string{
		"nats-server": fmt.Sprintf("http://127.0.0.1:%d/healthz", p.NATSMonitor),
		"minio":       fmt.Sprintf("http://127.0.0.1:%d/minio/health/ready", p.MinIO),
		"weaviate":    fmt.Sprintf("http://127.0.0.1:%d/v1/.well-known/ready", p.Weaviate),
		"ingestor":    fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Ingestor),
		"embedder":    fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Embedder),
		"indexer":     fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Indexer),
		"queryd":      fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Queryd),
	}
	var errs []error
	for name, url := range checks {
		if err := testservers.HTTPReady(url)(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
