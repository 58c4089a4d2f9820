// Command strata-freshness measures how soon an upload becomes searchable:
// it starts the local stack, PUTs files with minio-go and polls queryd's MCP
// tools until each file is found by keyword search and by vector search,
// for several file sizes, one upload at a time and under a background load
// of small uploads. It runs the stack twice, with MinIO's live event target
// and with only the durable one (queue directory, replayed every 3 s), and
// writes both side by side to a Markdown report.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/program"
)

// Config is the benchmark's configuration.
type Config struct {
	Root    string
	Out     string
	Sizes   []int // bytes
	Samples int   // uploads per size and scenario
	Load    int   // background uploads per second in the loaded scenario
	Modes   []string
	Timeout time.Duration // per upload, until searchable
	// DurableIdleOnly measures the durable path one upload at a time only:
	// it differs from the live one by MinIO's replay ticker, not under load.
	DurableIdleOnly bool
	// AccessSamples, when positive, measures tag changes instead (access.go).
	AccessSamples int
	HiddenCalls   int // with AccessSamples: reads of a hidden and of a missing document, each
}

func parseConfig(args []string, root string, stderr io.Writer) (Config, error) {
	c := Config{Root: root}
	fs := flag.NewFlagSet("strata-freshness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", "1KB,100KB,1MB", "file sizes, comma-separated (KB and MB are 1,000 and 1,000,000 bytes)")
	modes := fs.String("modes", "live,durable", "event paths to measure: live (MinIO's live target and the durable one) and durable (the queue-directory target only)")
	fs.IntVar(&c.Samples, "samples", 20, "uploads per size and scenario")
	fs.IntVar(&c.Load, "load", 50, "background uploads per second (1 KB files) in the loaded scenario; 0: no loaded scenario")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "longest wait for one upload to become searchable (a sample that waits longer is reported as failed)")
	fs.BoolVar(&c.DurableIdleOnly, "durable-idle-only", true, "measure the durable-only path one upload at a time, not under the background load")
	fs.IntVar(&c.AccessSamples, "access-samples", 0, "measure this many tag changes (how soon a strata-groups change decides who reads a document) instead of uploads")
	fs.IntVar(&c.HiddenCalls, "hidden-calls", 500, "with -access-samples: reads of a hidden document and of a missing one, each, per kind of read")
	fs.StringVar(&c.Out, "out", "docs/bench/freshness.md", "Markdown report, relative to the repository root; empty: stdout only")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := parseSize(strings.TrimSpace(s))
		if err != nil {
			return c, fmt.Errorf("-sizes: %w", err)
		}
		c.Sizes = append(c.Sizes, n)
	}
	for _, m := range strings.Split(*modes, ",") {
		if m = strings.TrimSpace(m); m != "live" && m != "durable" {
			return c, fmt.Errorf("-modes: %q is neither live nor durable", m)
		}
		c.Modes = append(c.Modes, strings.TrimSpace(m))
	}
	if c.Samples < 1 || c.Load < 0 || c.AccessSamples < 0 || c.HiddenCalls < 1 {
		return c, fmt.Errorf("-samples must be at least 1 and -load at least 0")
	}
	if c.Out != "" && !filepath.IsAbs(c.Out) {
		c.Out = filepath.Join(root, c.Out)
	}
	return c, nil
}

func parseSize(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "MB"):
		mult, s = 1_000_000, strings.TrimSuffix(s, "MB")
	case strings.HasSuffix(s, "KB"):
		mult, s = 1_000, strings.TrimSuffix(s, "KB")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, KB or MB", s)
	}
	return n * mult, nil
}

func main() {
	program.Main("strata-freshness", func(ctx context.Context, args []string) error {
		return run(ctx, args, os.Stdout, os.Stderr)
	})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root, err := localstack.WorkspaceRoot()
	if err != nil {
		return err
	}
	cfg, err := parseConfig(args, root, stderr)
	if err != nil {
		return err
	}
	started := time.Now()
	if cfg.AccessSamples > 0 {
		r, err := measureAccessChanges(ctx, cfg, stderr)
		if err != nil {
			return fmt.Errorf("access changes: %w", err)
		}
		return write(cfg, stdout, renderAccess(cfg, r, time.Since(started)))
	}
	var results []modeResult
	for _, mode := range cfg.Modes {
		r, err := measureMode(ctx, cfg, mode, stderr)
		if err != nil {
			return fmt.Errorf("%s events: %w", mode, err)
		}
		results = append(results, r)
	}
	return write(cfg, stdout, render(cfg, results, time.Since(started)))
}

// write prints report and saves it to cfg.Out when set.
func write(cfg Config, stdout io.Writer, report string) error {
	fmt.Fprint(stdout, report)
	if cfg.Out == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(cfg.Out, []byte(report), 0o644)
}
