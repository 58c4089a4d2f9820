// Command strata-failover measures how soon reads answer after a Weaviate
// node's loss. It starts the local stack with a 3-node Weaviate (collections
// replicated twice, every service given every node), indexes a few files,
// then kills a node with SIGKILL several times (the Raft leader and
// followers in turn, a different node each time, restarting the last one
// in between). Right after each kill it calls every read tool once, all at
// once, each within its deadline, and records the time from the kill to
// each complete answer. The report goes to docs/bench/weaviate-failover.md.
//
//	go run ./deploy/measure/strata-failover            # 10 kills, about 5 minutes
//	go run ./deploy/measure/strata-failover -kills 4 -out /tmp/f.md
//
// With -byid it measures reads by id instead: every kill takes the Raft
// leader, and reads of one chunk by id go on from a second before the kill
// until -window after it, three ways (through queryd, REST and a filtered
// query straight to Weaviate), with merges into one object, marked
// idempotent and not; the report's section on them is replaced (-v lists
// the slow requests):
//
//	go run ./deploy/measure/strata-failover -byid     # 10 leader kills, about 6 minutes
//
// It is not part of `go test`: it runs for minutes and measures this
// machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/benchstack"
	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/shared/schema"
)

func main() { program.Main("strata-failover", run) }

// config is what one run measures.
type config struct {
	Kills    int
	Files    int
	Deadline time.Duration
	Out      string
	Verbose  bool
	ByID     bool          // measure reads by id across leader kills (byid.go)
	Window   time.Duration // -byid: reads after each kill for this long
	Every    time.Duration // -byid: a read of each probe this often
	// WriteTimeout is -byid's write probe's attempt deadline.
	WriteTimeout time.Duration
}

func parseConfig(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("strata-failover", flag.ContinueOnError)
	fs.IntVar(&c.Kills, "kills", 10, "Weaviate nodes killed, one at a time (alternately the Raft leader and a follower)")
	fs.IntVar(&c.Files, "files", 20, "files indexed before the first kill")
	fs.DurationVar(&c.Deadline, "deadline", 10*time.Second, "each read tool's deadline after a kill")
	fs.StringVar(&c.Out, "out", "", "report path (default docs/bench/weaviate-failover.md in the workspace)")
	fs.BoolVar(&c.Verbose, "v", false, "print the stack's progress")
	fs.BoolVar(&c.ByID, "byid", false, "kill the Raft leader every time and measure how long reads by id are delayed (writes the report's reads-by-id section)")
	fs.DurationVar(&c.Window, "window", 5*time.Second, "with -byid: how long after each kill reads by id go on")
	fs.DurationVar(&c.Every, "every", 25*time.Millisecond, "with -byid: how often each probe starts a read by id")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", schema.DefaultWriteTimeout, "with -byid: deadline of one attempt of the idempotent write probe (as the indexer's -weaviate-write-timeout)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.Kills < 1 || c.Files < 1 || c.Deadline <= 0 || c.Window <= 0 || c.Every <= 0 {
		return c, errors.New("-kills, -files, -deadline, -window and -every must be positive")
	}
	return c, nil
}

func run(ctx context.Context, args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	root, err := localstack.WorkspaceRoot()
	if err != nil {
		return err
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join(root, "docs", "bench", "weaviate-failover.md")
	}
	state, err := os.MkdirTemp("", "strata-failover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	stackOut := program.Progress(cfg.Verbose)
	logf("starting the local stack with a 3-node Weaviate in %s", state)
	st, err := benchstack.Start(ctx, localstack.Options{Root: root, StateDir: state, Progress: stackOut, WeaviateCluster: true})
	if err != nil {
		return err
	}
	defer st.Stop(15 * time.Second)
	b, err := newBench(ctx, st, cfg)
	if err != nil {
		return err
	}
	defer b.close()
	if err := b.seed(ctx); err != nil {
		return err
	}
	if cfg.ByID {
		return runByID(ctx, b)
	}
	rep := &report{cfg: cfg, started: time.Now(), load: loadAverage()}
	for i := range cfg.Kills {
		k, err := b.killOnce(ctx, i)
		if err != nil {
			return fmt.Errorf("kill %d: %w", i+1, err)
		}
		rep.kills = append(rep.kills, k)
		logf("kill %d: node%d (%s): every read tool complete after %s; %d failed", i+1, k.Victim+1, k.role(), k.slowest().Round(time.Millisecond), len(k.Failed))
	}
	if err := rep.write(cfg.Out); err != nil {
		return err
	}
	logf("kill->every read tool complete: median %s, worst %s (%s)", rep.median().Round(time.Millisecond), rep.worst().Round(time.Millisecond), cfg.Out)
	if n := rep.failed(); n > 0 {
		return fmt.Errorf("%d read tool calls failed or answered incompletely after a kill (see %s)", n, cfg.Out)
	}
	return nil
}

func logf(format string, args ...any) { program.Logf(os.Stderr, format, args...) }
