// Package service is the start-up every Strata service shares: a context
// that SIGINT and SIGTERM cancel, the configuration from flags, STRATA_
// variables and a -config file (shared/config), its validation, the logger
// (shared/logging), tracing (shared/tracing), the metrics registry
// (shared/metrics), the /healthz, /readyz and /metrics server (shared/health)
// and the exit code. A service's main package reads:
//
//	func main() { service.Main("ingestor", run) }
//
//	func run(ctx context.Context, args []string) error {
//		return service.Start(ctx, "ingestor", args, new(Config), serve)
//	}
//
//	func serve(ctx context.Context, cfg *Config, deps service.Deps) error { ... }
//
// run stays a function of its own so that tests start the service in process.
package service

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/health"
	"github.com/strata-kb/strata/shared/logging"
	"github.com/strata-kb/strata/shared/metrics"
	"github.com/strata-kb/strata/shared/tracing"
)

// Config is a service's configuration: Start registers its flags, parses
// the command line into them and validates them. It must register the flags
// -log-level and -log-format (config.Common does), which configure the
// logger; -trace-exporter, where registered, configures tracing.
type Config interface {
	RegisterFlags(fs *flag.FlagSet)
	// Validate reports every problem at once (config.Problems).
	Validate() error
}

// The flags of Config that Start reads. It reads them by name rather than
// from a shared struct because queryd's Config does not embed config.Common
// (it has no -trace-exporter and its own -addr).
const (
	logLevelFlag      = "log-level"
	logFormatFlag     = "log-format"
	traceExporterFlag = "trace-exporter"
)

// Deps is what Start made for the service.
type Deps struct {
	// Log writes to stderr only, never stdout (queryd's stdio transport
	// speaks on stdout).
	Log *slog.Logger
	// Metrics is the service's registry, served at /metrics by ServeHealth
	// (queryd serves it on its own HTTP surface).
	Metrics *metrics.Registry
}

// Main runs a service: run gets the command line arguments and a context
// that SIGINT or SIGTERM cancels, so that it stops gracefully. An error is
// printed to stderr as "name: error" and exits 1; otherwise Main returns
// (exit 0), as after -h or -version.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Start registers cfg's flags on a flag set called name, parses args into
// them (config.Parse: flags, then STRATA_ variables, then the -config file),
// validates cfg, makes the logger and, where cfg has -trace-exporter, sets up
// tracing for name; then it calls serve with cfg and returns its error, after
// flushing the traces. After -h, -help or -version it returns nil without
// calling serve: config.Parse has printed what was asked. (C is generic so
// that serve takes the service's own *Config, not the interface.)
func Start[C Config](ctx context.Context, name string, args []string, cfg C, serve func(ctx context.Context, cfg C, deps Deps) error) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	level, format := fs.Lookup(logLevelFlag), fs.Lookup(logFormatFlag)
	if level == nil || format == nil {
		return fmt.Errorf("the configuration registers no -%s or -%s flag (config.Common registers both)", logLevelFlag, logFormatFlag)
	}
	// Errors are returned as they come: each names the flag, variable or
	// file line to fix, and Main prints it after the service's name.
	if err := config.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h or -version: printed what was asked
		}
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if limit := fs.Lookup(config.MemoryLimitFlag); limit != nil {
		if bytes, err := strconv.ParseInt(limit.Value.String(), 10, 64); err == nil && bytes > 0 {
			debug.SetMemoryLimit(bytes)
		}
	}
	log, err := logging.New(name, level.Value.String(), format.Value.String())
	if err != nil {
		return err
	}
	if exporter := fs.Lookup(traceExporterFlag); exporter != nil {
		stopTracing, err := tracing.Setup(ctx, name, exporter.Value.String())
		if err != nil {
			return err
		}
		// ctx is cancelled by the time run returns; the last spans are
		// flushed all the same.
		defer stopTracing(context.WithoutCancel(ctx))
	}
	return serve(ctx, cfg, Deps{Log: log, Metrics: metrics.New()})
}

// ServeHealth listens on addr and serves /healthz, /readyz (ready) and
// /metrics (d.Metrics) until ctx ends, then shuts the server down. It
// returns the address bound once it listens.
func (d Deps) ServeHealth(ctx context.Context, addr string, ready func() error) (string, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", d.Metrics.Handler())
	hs, err := health.Listen(addr, ready, mux)
	if err != nil {
		return "", err
	}
	go hs.Serve(ctx, d.Log)
	return hs.Addr(), nil
}

// conn is the part of *nats.Conn that NATSConnected asks.
type conn interface{ IsConnected() bool }

// NATSConnected is a readiness check for ServeHealth: ready while nc (a
// *nats.Conn) is connected to NATS.
func NATSConnected(nc conn) func() error {
	return func() error {
		if !nc.IsConnected() {
			return errors.New("nats disconnected")
		}
		return nil
	}
}
