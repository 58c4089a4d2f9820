package service

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/metrics"
)

// mainEnv makes the test binary run Main (see TestMain) as service $mainEnv.
const mainEnv = "STRATA_SERVICE_TEST_MAIN"

// TestMain runs Main in a child process for TestMainExitCodes: its run
// fails with the first argument as the error, or with "wait" says so on
// stdout and returns once its context is cancelled.
func TestMain(m *testing.M) {
	if name := os.Getenv(mainEnv); name != "" {
		Main(name, func(ctx context.Context, args []string) error {
			switch {
			case len(args) == 0:
				return nil
			case args[0] == "wait":
				fmt.Println("waiting")
				<-ctx.Done()
				return nil
			default:
				return errors.New(args[0])
			}
		})
		return // exit 0, as a main that returns
	}
	os.Exit(m.Run())
}

// testConfig is a service configuration with the flags Start reads; trace
// registers -trace-exporter too.
type testConfig struct {
	trace     bool
	LogLevel  string
	LogFormat string
	Trace     string
	Name      string
	problem   string // Validate's error, if any
}

func (c *testConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.LogLevel, "log-level", "info", "")
	fs.StringVar(&c.LogFormat, "log-format", "json", "")
	fs.StringVar(&c.Name, "name", "", "")
	if c.trace {
		fs.StringVar(&c.Trace, "trace-exporter", "none", "")
	}
}

func (c *testConfig) Validate() error {
	if c.problem != "" {
		var p config.Problems
		p.Addf("name", "%s", c.problem)
		return p.Err()
	}
	return nil
}

// stdout captures what f writes to os.Stdout.
func stdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); written <- b }()
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()
	f()
	os.Stdout = saved
	w.Close()
	return string(<-written)
}

func TestStartRunsWithParsedConfig(t *testing.T) {
	t.Setenv("STRATA_LOG_FORMAT", "text")
	cfg := testConfig{trace: true}
	var got Deps
	out := stdout(t, func() {
		err := Start(context.Background(), "svc", []string{"-name", "x"}, &cfg, func(_ context.Context, c *testConfig, deps Deps) error {
			if c != &cfg {
				t.Errorf("serve got config %p, want the one given, %p", c, &cfg)
			}
			got = deps
			deps.Log.Info("a line on stderr")
			return errors.New("stopped")
		})
		if err == nil || err.Error() != "stopped" {
			t.Errorf("Start = %v, want serve's error", err)
		}
	})
	if cfg.Name != "x" || cfg.LogFormat != "text" || cfg.Trace != "none" {
		t.Errorf("config = %+v: want -name from args, -log-format from STRATA_LOG_FORMAT, -trace-exporter by default", cfg)
	}
	if got.Log == nil || got.Metrics == nil {
		t.Errorf("deps = %+v, want a logger and a registry", got)
	}
	if out != "" {
		t.Errorf("stdout = %q, want nothing (queryd's stdio transport speaks there)", out)
	}
}

// TestStartHelp: -h and -version print to stdout and return nil without
// starting the service (exit 0).
func TestStartHelp(t *testing.T) {
	for arg, want := range map[string]string{"-h": "Usage: svc", "-version": "svc "} {
		var served bool
		out := stdout(t, func() {
			if err := Start(context.Background(), "svc", []string{arg}, &testConfig{}, func(context.Context, *testConfig, Deps) error { served = true; return nil }); err != nil {
				t.Errorf("%s: Start = %v", arg, err)
			}
		})
		if served || !strings.HasPrefix(out, want) {
			t.Errorf("%s: served %v, stdout %q; want %q and no serve", arg, served, out, want)
		}
	}
}

// TestStartRefuses: a bad command line, an invalid configuration, a bad
// logger or tracing setting, or a configuration without the logging flags
// stops the start-up before serve, with an error naming the cause.
func TestStartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		args []string
		want string
	}{
		{"unknown flag", &testConfig{}, []string{"-nope"}, "-h lists the flags"},
		{"invalid", &testConfig{problem: "too short"}, nil, "-name (STRATA_NAME): too short"},
		{"log level", &testConfig{}, []string{"-log-level", "loud"}, `log level "loud"`},
		{"trace exporter", &testConfig{trace: true}, []string{"-trace-exporter", "carrier-pigeon"}, `trace exporter "carrier-pigeon"`},
		{"no log flags", noLogFlags{}, []string{"-h"}, "registers no -log-level or -log-format flag"},
	} {
		err := Start(context.Background(), "svc", tc.args, tc.cfg, func(context.Context, Config, Deps) error {
			t.Errorf("%s: serve called", tc.name)
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Start = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestStartWithoutTracing: a configuration without -trace-exporter (queryd)
// starts without tracing.
func TestStartWithoutTracing(t *testing.T) {
	err := Start(context.Background(), "svc", []string{"-trace-exporter", "stdout"}, &testConfig{}, func(context.Context, *testConfig, Deps) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -trace-exporter") {
		t.Errorf("Start = %v, want -trace-exporter unknown", err)
	}
	if err := Start(context.Background(), "svc", nil, &testConfig{}, func(context.Context, *testConfig, Deps) error { return nil }); err != nil {
		t.Errorf("Start = %v", err)
	}
}

type noLogFlags struct{}

func (noLogFlags) RegisterFlags(*flag.FlagSet) {}
func (noLogFlags) Validate() error             { return nil }

func TestServeHealth(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deps := Deps{Log: slog.New(slog.DiscardHandler), Metrics: metrics.New()}
	var warm atomic.Bool
	addr, err := deps.ServeHealth(ctx, "127.0.0.1:0", func() error {
		if !warm.Load() {
			return errors.New("warming up")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "not ready: warming up") {
		t.Errorf("/readyz while not ready = %d %q", code, body)
	}
	warm.Store(true)
	if code, body := get("/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz = %d %q", code, body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics = %d, without go_goroutines", code)
	}
	if _, err := deps.ServeHealth(ctx, addr, func() error { return nil }); err == nil || !strings.Contains(err.Error(), "listen "+addr) {
		t.Errorf("ServeHealth on a taken address = %v, want a listen error", err)
	}
	cancel()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			break // shut down with ctx
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("health server still serving 5 s after its context ended")
		}
	}
}

// fakeConn is a NATS connection that is connected while up.
type fakeConn struct{ up bool }

func (c *fakeConn) IsConnected() bool { return c.up }

func TestNATSConnected(t *testing.T) {
	nc := &fakeConn{}
	ready := NATSConnected(nc)
	if err := ready(); err == nil || err.Error() != "nats disconnected" {
		t.Errorf("not connected: ready = %v, want nats disconnected", err)
	}
	nc.up = true
	if err := ready(); err != nil {
		t.Errorf("connected: ready = %v", err)
	}
	// A real connection never made is not connected either.
	if err := NATSConnected(&nats.Conn{})(); err == nil {
		t.Error("NATSConnected(zero *nats.Conn) = nil, want nats disconnected")
	}
}

// TestMainExitCodes runs Main in a child process: an error is printed as
// "name: error" on stderr with exit 1, success exits 0 silently, and
// SIGTERM cancels the context so the service stops gracefully (exit 0).
func TestMainExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	child := func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), mainEnv+"=svc")
		return cmd
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{[]string{"boom"}, 1, "svc: boom\n"},
	} {
		cmd := child(tc.args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		_ = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != tc.code || e.String() != tc.stderr || o.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d, stderr %q, no stdout", tc.args, code, e.String(), o.String(), tc.code, tc.stderr)
		}
	}

	cmd := child("wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "waiting\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("child said %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("child did not stop within 10 s of SIGTERM")
	}
}

// TestStartSetsTheMemoryLimit: -memory-limit is the runtime's soft limit
// while the service serves, as GOMEMLIMIT would be.
func TestStartSetsTheMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	var during int64
	err := Start(context.Background(), "svc", []string{"-memory-limit", "134217728"}, &commonConfig{}, func(context.Context, *commonConfig, Deps) error {
		during = debug.SetMemoryLimit(-1)
		return nil
	})
	if err != nil || during != 128<<20 {
		t.Fatalf("limit while serving %d (%v), want %d", during, err, 128<<20)
	}
	if err := Start(context.Background(), "svc", []string{"-memory-limit", "1000"}, &commonConfig{}, func(context.Context, *commonConfig, Deps) error { return nil }); err == nil || !strings.Contains(err.Error(), "memory-limit") {
		t.Fatalf("a limit under 64 MiB: %v", err)
	}
}

// commonConfig is a service's configuration of the common flags alone.
type commonConfig struct{ config.Common }

func (c *commonConfig) RegisterFlags(fs *flag.FlagSet) { c.Common.RegisterFlags(fs, "127.0.0.1:0") }

func (c *commonConfig) Validate() error {
	var p config.Problems
	c.Common.Validate(&p)
	return p.Err()
}
