// Command strata-chaos runs Strata as a loopback cluster, loads it with
// writes and agent reads, kills a random process every 20 s, and at the end
// compares the index with the bucket.
//
//	go run ./deploy/measure/strata-chaos -minutes 2
//	go run ./deploy/measure/strata-chaos -minutes 10 -out docs/bench/chaos.md
//
// The cluster, started from the pinned servers on free loopback ports in a
// temporary directory (package chaos, localstack.Options NATSCluster,
// WeaviateCluster and MinIONodes):
//
//   - NATS: 3 nodes, every stream and KV bucket with 3 replicas; services
//     are given all three URLs.
//   - MinIO: 4 nodes, one drive each, erasure coded (EC:2: any one node may
//     be lost). Every node has Strata's two bucket notification targets,
//     the durable one with a queue directory of its own. MinIO refuses
//     nodes whose MINIO_* settings differ, so one NATS address per node is
//     not possible: all send to NATS node 1, and MinIO's NATS client
//     (nats.go defaults) learns the other NATS nodes from the server and
//     reconnects to one of them when node 1 is lost; durable events wait
//     in the queue directory meanwhile, live ones come from the durable copy.
//   - Weaviate: 3 nodes, collections replicated twice; services are given
//     every node.
//   - Two processes of each of ingestor, embedder, indexer and queryd.
//
// MinIO endpoint loss: the ingestor and queryd take a single S3 endpoint
// (-s3-endpoint, STRATA_S3_ENDPOINT) and have no list of nodes. Each
// replica is pointed at a different MinIO node: ingestor-1 and queryd-1 at
// node 1, ingestor-2 at node 2, queryd-2 at node 3. While an ingestor's
// node is down its fetches fail and the event is retried with backoff
// (1 s, 5 s, 30 s, 2 min) by whichever replica pulls it, so the other
// ingestor takes it; its live (best-effort) events fall back to the durable
// copy. queryd reads S3 only for view_chunk_image. An upload whose
// notification MinIO lost (killed after answering the PUT, before queueing
// the event) is recovered by the ingestors' reconciler, run every 30 s here
// (-reconcile; the product default is 5 minutes). The writers, like any S3
// client behind a load balancer, move to the next node when one fails.
//
// Faults (-faults, in turn): kill (SIGKILL, down -down, started again),
// pause (SIGSTOP for -pause-min to -pause-max, 5-30 s, then SIGCONT: a
// GC pause or a frozen VM; an indexer paused past its commit lease finds
// its commit fenced) and diskfull (one NATS, MinIO or Weaviate node's disk
// filled by a ballast file, held full for -diskfull-hold, then freed; the
// run then uploads a file and times how soon it is searchable). For
// diskfull every engine node's data directory is a tmpfs of -disk-size of
// its own, mounted in a mount namespace of the run's own: as root,
// strata-chaos runs itself again under unshare(1); without root, or where
// a mount is refused, full-disk faults are skipped and the report says so.
//
// 20 s (-kill-every) after the last fault ended, the next one (of
// -faults, in turn) takes one process from a shuffled list of all 16 (3
// NATS, 4 MinIO, 3 Weaviate nodes, 8 service processes); a kill leaves it
// down 3 s (-down) and starts it again. A fault ends when the cluster is
// whole again (every NATS node healthy with its streams current, every
// MinIO node with write quorum, Weaviate settled, every service ready), so
// never are two nodes of one engine nor both replicas of a service down
// at once. Meanwhile 6 bucket operations a second (uploads, overwrites, deletes of Markdown, text, HTML, PDF and
// DOCX files) and 24 MCP reads a second (with the stack's admin key) go on.
// A read counts as served when it, or its retry on the other queryd
// replica, answers within 2 s.
//
// After the chaos phase the cluster settles (up to -settle), and the index
// is compared with the bucket through queryd's tools: every live object
// indexed exactly once at its latest version and embedded, no chunk of a
// deleted or overwritten version visible at the current watermark, every
// count of status right on both queryd replicas. The last line is
//
//	kills K, objects O, lost L, duplicated D, stale S, failed reads F
//
// and the exit status is 1 when L, D, S or F is not 0. -out writes a
// markdown report. It is not part of `go test` (deploy/e2e's
// TestChaosShort runs the same code for 2 minutes).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/deploy/measure/strata-chaos/chaos"
)

func main() { program.Main("strata-chaos", run) }

// run says itself what went wrong and returns the exit status as a
// program.Status (nil: 0).
func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("strata-chaos", flag.ContinueOnError)
	minutes := fs.Float64("minutes", 2, "length of the chaos phase (load and kills)")
	d := chaos.DefaultConfig(0)
	fs.DurationVar(&d.KillEvery, "kill-every", d.KillEvery, "the next fault comes this long after the last one ended (0: none, a baseline of the same load)")
	fs.DurationVar(&d.Down, "down", d.Down, "how long a killed process stays down before it is started again")
	faults := fs.String("faults", strings.Join(d.Faults, ","), "the kinds of fault injected in turn, comma-separated: kill ("+chaos.FaultKinds[chaos.FaultKill]+"), pause ("+chaos.FaultKinds[chaos.FaultPause]+"), diskfull ("+chaos.FaultKinds[chaos.FaultDiskFull]+")")
	fs.DurationVar(&d.PauseMin, "pause-min", d.PauseMin, "shortest pause of a pause fault")
	fs.DurationVar(&d.PauseMax, "pause-max", d.PauseMax, "longest pause of a pause fault")
	fs.Int64Var(&d.DiskSize, "disk-size", d.DiskSize, "bytes of each engine node's disk (a tmpfs) with -faults diskfull")
	fs.DurationVar(&d.DiskFullHold, "diskfull-hold", d.DiskFullHold, "how long a full-disk fault keeps the disk full")
	fs.Float64Var(&d.WriteRate, "writes", d.WriteRate, "bucket operations (uploads, overwrites, deletes) a second")
	fs.Float64Var(&d.ReadRate, "reads", d.ReadRate, "MCP reads a second")
	fs.IntVar(&d.Readers, "readers", d.Readers, "concurrent readers")
	fs.DurationVar(&d.HedgeAfter, "hedge-after", d.HedgeAfter, "a read not answered by its queryd replica within this is also sent to the other, at most 5% of reads (0: never, only a failed read is sent again; docs/bench/chaos-runs.md measured 500ms)")
	fs.IntVar(&d.Keys, "keys", d.Keys, "distinct object keys")
	fs.DurationVar(&d.Settle, "settle", d.Settle, "longest wait for the index to catch up after the chaos phase")
	fs.DurationVar(&d.ReconcileInterval, "reconcile", d.ReconcileInterval, "the ingestors' -reconcile-interval")
	fs.DurationVar(&d.ReconcileMinAge, "reconcile-min-age", d.ReconcileMinAge, "the ingestors' -reconcile-min-age")
	seed := fs.Uint64("seed", 0, "random seed of the victims' order, keys and words (0: from the clock; the run logs the one it used)")
	out := fs.String("out", "", "write a markdown report here")
	state := fs.String("state", "", "keep the cluster's data and logs here (default: a temporary directory, removed when the run found nothing)")
	verbose := fs.Bool("v", false, "print the stack's start-up progress")
	fs.BoolVar(&d.Prebuilt, "prebuilt", false, "the services are already built in -state's bin/ (localstack.BuildServices): do not build them")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: strata-chaos [flags]

Starts Strata as a loopback cluster from the pinned servers (MinIO 4 nodes
erasure coded, NATS 3 nodes, Weaviate 3 nodes with replication 2, two
replicas of every service), uploads, overwrites and deletes files and reads
through MCP while killing one process with SIGKILL every -kill-every and
starting it again, then compares the index with the bucket. The last line is
"kills K, objects O, lost L, duplicated D, stale S, failed reads F"; the exit
status is 1 when any of L, D, S, F is not 0 (a read fails when it is not
answered within 2 s, retries and hedges on the other queryd replica included).

	go run ./deploy/measure/strata-chaos -minutes 10 -out docs/bench/chaos.md

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return program.Status(2)
	}
	if d.Prebuilt && *state == "" {
		fmt.Fprintln(os.Stderr, "strata-chaos: -prebuilt needs -state (the services are in its bin/)")
		return program.Status(2)
	}
	var err error
	if d.Faults, err = chaos.ParseFaults(*faults); err != nil || d.PauseMin <= 0 || d.PauseMax < d.PauseMin || d.DiskSize < 64<<20 || d.DiskFullHold <= 0 {
		fmt.Fprintf(os.Stderr, "strata-chaos: -faults: %v; -pause-min must be positive and at most -pause-max, -disk-size at least 64 MiB, -diskfull-hold positive\n", err)
		return program.Status(2)
	}
	if chaos.NeedsMounts(d.Faults) {
		// A disk per engine node needs a mount namespace of the run's own.
		exe, err := os.Executable()
		var cmd *exec.Cmd
		if err == nil {
			cmd, err = chaos.MountNamespaceCommand(ctx, append([]string{exe}, os.Args[1:]...))
		}
		if err == nil {
			err = cmd.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return program.Status(exit.ExitCode())
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "strata-chaos: run in a mount namespace of its own:", err)
				return program.Status(1)
			}
			return nil
		}
		logf("full-disk faults will be skipped: %v", err)
	}
	if *minutes <= 0 || d.WriteRate <= 0 || d.ReadRate <= 0 || d.Readers < 1 || d.Keys < 5 || d.KillEvery < 0 || d.HedgeAfter < 0 {
		fmt.Fprintln(os.Stderr, "strata-chaos: -minutes, -writes, -reads and -readers must be positive, -kill-every and -hedge-after not negative and -keys at least 5")
		return program.Status(2)
	}
	d.Duration = time.Duration(*minutes * float64(time.Minute))
	if *seed != 0 {
		d.Seed = *seed
	}
	root, err := localstack.WorkspaceRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-chaos:", err)
		return program.Status(2)
	}
	d.Root, d.StateDir, d.Log = root, *state, logf
	d.Command = commandLine(fs)
	d.Progress = program.Progress(*verbose)
	res, err := chaos.Run(ctx, d)
	if res != nil && *out != "" {
		if werr := writeReport(*out, res); werr != nil {
			fmt.Fprintln(os.Stderr, "strata-chaos:", werr)
		} else {
			logf("report written to %s", *out)
		}
	}
	if res != nil {
		printFindings(res)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-chaos:", err)
		if res != nil {
			fmt.Println(res.Summary())
		}
		return program.Status(1)
	}
	fmt.Println(res.Summary())
	if !res.OK() {
		return program.Status(1)
	}
	return nil
}

func writeReport(path string, res *chaos.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := res.WriteMarkdown(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// printFindings prints what went wrong, to standard error.
func printFindings(res *chaos.Result) {
	if w, ok := res.WorstKill(); ok {
		logf("worst kill -> full service: %s (%s)", w.Whole.Round(time.Millisecond), w.Victim)
	}
	logf("writes: %d uploads, %d overwrites, %d deletes, %.2f uploads/s held, %d moved to another MinIO node, %d gave up",
		res.Uploads, res.Overwrites, res.Deletes, res.UploadsPerSecond, res.Failovers, res.GaveUp)
	refused := res.RefusedReads()
	logf("reads: %d (%.1f/s), %d served within %s (%d after a retry), p50 %s, p99 %s, %d not served: %d slow, %d refused by both replicas",
		res.Reads, res.ReadsPerSecond, res.Served, chaos.ServeWithin, res.Retried, res.ReadP50.Round(time.Millisecond), res.ReadP99.Round(time.Millisecond),
		len(res.ReadFailures), len(res.ReadFailures)-refused, refused)
	logf("reads: the longest time without any read served: %s, from %s", res.LongestReadGap.Round(time.Millisecond), res.LongestReadGapAt.Round(time.Second))
	for tool, t := range res.ReadsByTool {
		logf("reads of %s: %d, %d not served within %s (%d slow), p50 %s, p99 %s", tool, t.Reads, t.Failed, chaos.ServeWithin, t.Slow, t.Percentile(0.5).Round(time.Millisecond), t.Percentile(0.99).Round(time.Millisecond))
	}
	for i, f := range res.ReadFailures {
		if i == 20 {
			logf("... %d more failed reads", len(res.ReadFailures)-20)
			break
		}
		logf("failed read at %s: %s took %s, %s (%s): %v", f.At.Round(time.Second), f.Tool, f.Took.Round(time.Millisecond), f.Why(), f.Context, f.Errors)
	}
	if c := res.Comparison; c != nil {
		logf("settled in %s; %d live objects, %d deleted keys, %d old versions checked", res.SettleTook.Round(time.Second), c.Objects, c.Deleted, c.Versions)
		for _, s := range c.Status {
			logf("status %s", s)
		}
		for name, l := range map[string][]chaos.Problem{"lost": c.Lost, "duplicated": c.Duplicated, "stale": c.Stale} {
			for i, p := range l {
				if i == 20 {
					logf("... %d more %s", len(l)-20, name)
					break
				}
				logf("%s: %s: %s", name, p.Key, p.Detail)
			}
		}
	}
	if res.LogDir != "" {
		logf("the cluster's data and logs are kept in %s", res.LogDir)
	}
}

func logf(format string, args ...any) { program.Logf(os.Stderr, format, args...) }

// commandLine is the command that ran with fs's flags, for the report:
// those that were set, without where the run kept its files.
func commandLine(fs *flag.FlagSet) string {
	cmd := "go run ./deploy/measure/strata-chaos"
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "state", "v", "prebuilt":
			return
		}
		cmd += " -" + f.Name + " " + f.Value.String()
	})
	return cmd
}
