// Package chaos is strata-chaos's run (deploy/measure/strata-chaos): a
// loopback cluster from the pinned servers, writes and agent reads against
// it while processes are killed one at a time, and a comparison of the
// index with the bucket at the end. deploy/e2e's TestChaosShort runs it
// for two minutes.
package chaos

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/strata-kb/strata/shared/pipeline"
)

// Config is one chaos run.
type Config struct {
	Duration  time.Duration // the chaos phase: load and kills
	KillEvery time.Duration // a kill this often (the next waits until the cluster is whole again); 0: none, a baseline
	Down      time.Duration // how long a killed process stays down before it is started again
	// Faults are the kinds of fault injected, in turn (FaultKinds).
	Faults []string
	// PauseMin and PauseMax bound a pause fault's length, drawn uniformly.
	PauseMin, PauseMax time.Duration
	// DiskSize is each engine node's disk (a tmpfs) when the faults
	// include diskfull; DiskFullHold how long a full-disk fault keeps it
	// full.
	DiskSize     int64
	DiskFullHold time.Duration
	WriteRate    float64 // bucket operations a second
	ReadRate     float64 // MCP reads a second
	Readers      int     // concurrent readers
	// HedgeAfter is how long a read waits for its replica before it is
	// also sent to the other one (0, the default: never; a failed attempt
	// is retried at once either way). Off because it made reads worse:
	// docs/bench/chaos-runs.md.
	HedgeAfter time.Duration
	Keys       int           // distinct object keys written
	Settle     time.Duration // longest wait for the index to catch up after the chaos phase
	Seed       uint64
	// ReconcileInterval and ReconcileMinAge are the ingestors'
	// -reconcile-interval and -reconcile-min-age: how soon an upload whose
	// notification MinIO lost (killed after answering the PUT) is
	// re-emitted (after 10x the min age, at least a minute, if it was seen
	// but never processed).
	ReconcileInterval, ReconcileMinAge time.Duration

	Command  string    // the command line that ran it, for the report ("": one with -minutes alone)
	Root     string    // the workspace (go.work directory)
	StateDir string    // the cluster's data and logs ("" = a temporary directory, removed at the end)
	Prebuilt bool      // the services are already built in StateDir/bin
	Progress io.Writer // the stack's start-up progress (nil: none)
	Log      func(format string, args ...any)
}

// The kinds of fault a run can inject.
const (
	// FaultKill: SIGKILL, down for Config.Down, started again.
	FaultKill = "kill"
	// FaultPause: SIGSTOP for PauseMin to PauseMax, then SIGCONT: a GC
	// pause or a frozen VM. An indexer paused past its commit lease finds
	// its commit fenced when it wakes.
	FaultPause = "pause"
	// FaultDiskFull: one engine node's disk (a tmpfs of its own) filled
	// by a ballast file, held full for DiskFullHold, then freed.
	FaultDiskFull = "diskfull"
)

// FaultKinds are the kinds -faults takes, with what each does (-h).
var FaultKinds = map[string]string{
	FaultKill:     "SIGKILL one process, leave it down -down, start it again",
	FaultPause:    "SIGSTOP one process for -pause-min to -pause-max, then SIGCONT",
	FaultDiskFull: "fill one NATS, MinIO or Weaviate node's disk (a tmpfs of -disk-size; needs root) for -diskfull-hold, then free it",
}

// ParseFaults checks a comma-separated list of fault kinds.
func ParseFaults(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if _, ok := FaultKinds[f]; !ok {
			return nil, fmt.Errorf("unknown fault %q (kinds: kill, pause, diskfull)", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// DefaultConfig is strata-chaos's defaults for a run of d. Readers: 24
// reads a second of up to 2 s each need up to 48 at once; 12 left a fifth
// of them unissued on a loaded 2-core machine.
func DefaultConfig(d time.Duration) Config {
	return Config{Duration: d, KillEvery: 20 * time.Second, Down: 3 * time.Second, Faults: []string{FaultKill}, PauseMin: 5 * time.Second, PauseMax: 30 * time.Second,
		DiskSize: 1 << 30, DiskFullHold: 15 * time.Second,
		WriteRate: 6, ReadRate: 24, Readers: 32, Keys: 60,
		Settle: 5 * time.Minute, Seed: uint64(time.Now().UnixNano()), ReconcileInterval: 30 * time.Second, ReconcileMinAge: 6 * time.Second}
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// Kill is one process's loss.
type Kill struct {
	Kind   string // FaultKill or FaultPause ("": a kill, in reports of older runs)
	Victim string
	At     time.Duration // since the chaos phase began
	Paused time.Duration // how long a pause held the process stopped, or a full-disk fault the disk full
	// Filled is the ballast a full-disk fault wrote; Helped what the
	// harness did for the engine after the disk was freed ("": nothing);
	// Resumed how soon after it was freed an upload was searchable;
	// Skipped why the fault was not made.
	Filled  int64
	Helped  string
	Resumed time.Duration
	Skipped string
	// Restarted is when the process was ready again after the kill;
	// Whole when every engine had all its members in step again (full
	// service), both since the kill.
	Restarted, Whole time.Duration
	Err              string // the restart failed or the cluster did not become whole
}

// Result is what a run found.
type Result struct {
	Config  Config
	Started time.Time
	Kills   []Kill
	// Writes.
	Uploads, Overwrites, Deletes, Failovers, GaveUp, WritesSkipped int64
	WriteFailures                                                  []string
	UploadsPerSecond                                               float64 // uploads and overwrites done within the chaos phase, a second
	// OpsPerSecond is every bucket operation (upload, overwrite, delete)
	// done within the chaos phase, a second of it.
	OpsPerSecond float64
	// WritesAfterPhase is how long the writes in flight when the phase
	// ended took to finish: they are awaited (the comparison reads the
	// bucket after them) but neither their time nor they count in the
	// phase's rates.
	WritesAfterPhase time.Duration
	// Reads.
	Reads, Served, Retried, Hedged, ReadsSkipped int64
	ReadFailures                                 []ReadFailure
	ReadP50, ReadP99                             time.Duration
	ReadsByTool                                  map[string]*ToolReads
	// LongestReadGap is the longest time in the chaos phase without any
	// read served, from LongestReadGapAt (since the phase began): an
	// outage of every read, where ReadFailures count reads one by one.
	LongestReadGap, LongestReadGapAt time.Duration
	// CPU is each process's CPU seconds over the chaos phase (a process
	// restarted in it: since its restart), the harness as "strata-chaos".
	CPU map[string]float64
	// PhaseTook is how long the chaos phase took: the readers' and the
	// writers' window, from its start until its context ended.
	PhaseTook      time.Duration
	ReadsPerSecond float64
	// The comparison.
	SettleTook time.Duration
	Comparison *Comparison
	LogDir     string // where the processes' logs are (kept when the run found problems)
	// DisksRefused says why the engine nodes got no disks of their own,
	// so every full-disk fault was skipped ("": they did, or none was asked).
	DisksRefused string
}

// Summary is the run's last line.
func (r *Result) Summary() string {
	o, l, d, s := 0, 0, 0, 0
	if c := r.Comparison; c != nil {
		o, l, d, s = c.Objects, len(c.Lost), len(c.Duplicated), len(c.Stale)
	}
	return fmt.Sprintf("kills %d, objects %d, lost %d, duplicated %d, stale %d, failed reads %d", len(r.Kills), o, l, d, s, len(r.ReadFailures))
}

// OK is true when nothing was lost, duplicated or stale and every read was served.
func (r *Result) OK() bool {
	return r.Comparison != nil && r.Comparison.clean() && len(r.ReadFailures) == 0
}

// RefusedReads counts the failed reads that every attempt failed with an
// error before ServeWithin (no replica could answer); the others were slow.
func (r *Result) RefusedReads() int {
	n := 0
	for _, f := range r.ReadFailures {
		if !f.Slow {
			n++
		}
	}
	return n
}

// WorstKill is the kill that took longest to full service.
func (r *Result) WorstKill() (Kill, bool) {
	var worst Kill
	found := false
	for _, k := range r.Kills {
		if !found || k.Whole > worst.Whole {
			worst, found = k, true
		}
	}
	return worst, found
}

// Run starts the cluster, runs the chaos phase and the comparison, and
// stops the cluster. The error is for a run that could not be made; what
// the run found is in the Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	state := cfg.StateDir
	if state == "" {
		dir, err := os.MkdirTemp("", "strata-chaos-")
		if err != nil {
			return nil, err
		}
		state = dir
	}
	d := mountDisks(state, cfg.Faults, cfg.DiskSize)
	defer d.unmount()
	if d.refused != "" {
		cfg.logf("full-disk faults are skipped: %s", d.refused)
	}
	cfg.logf("starting the cluster in %s: NATS 3 nodes (R3), MinIO 4 nodes (erasure coded), Weaviate 3 nodes (replication 2), two replicas of each service", state)
	c, err := startCluster(ctx, cfg, state, d)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, LogDir: state, DisksRefused: d.refused}
	err = runOn(ctx, cfg, c, d, res)
	c.stop()
	d.unmount()
	if err == nil && res.OK() && cfg.StateDir == "" {
		_ = os.RemoveAll(state) // nothing to look into
		res.LogDir = ""
	}
	return res, err
}

func runOn(ctx context.Context, cfg Config, c *cluster, d disks, res *Result) error {
	w, err := newWriter(cfg, c.st)
	if err != nil {
		return err
	}
	nc, js, err := pipeline.Connect(c.st.Env.NATSURL, "strata-chaos", nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	v := &verifier{urls: c.mcpURLs, apiKey: c.st.Env.APIKey, s3: w.clients[0], js: js, clients: map[string]*client.Client{}}
	defer v.close()
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	err = c.whole(wctx)
	cancel()
	if err != nil {
		return err
	}

	var last atomic.Pointer[string]
	none := "no kill yet"
	last.Store(&none)
	cpuBefore, selfBefore := c.sampleCPU(), selfCPU()
	began := time.Now()
	res.Started = began
	r := &reader{cfg: cfg, urls: c.mcpURLs, apiKey: c.st.Env.APIKey, w: w, began: began, lastKill: func() string { return *last.Load() }}
	phase, stopPhase := context.WithTimeout(ctx, cfg.Duration)
	defer stopPhase()
	type phaseSnapshot struct {
		took      time.Duration
		done, ops int64
		cpu       cpuSample
		self      float64
	}
	phaseEnd := make(chan phaseSnapshot, 1)
	go func() {
		<-phase.Done()
		done := w.uploads.Load() + w.overwrites.Load()
		phaseEnd <- phaseSnapshot{took: time.Since(began), done: done, ops: done + w.deletes.Load(), cpu: c.sampleCPU(), self: selfCPU()}
	}()
	var load sync.WaitGroup
	load.Add(2)
	go func() { defer load.Done(); w.run(phase) }()
	go func() { defer load.Done(); r.run(phase) }()
	cfg.logf("chaos phase: %s, %.0f writes/s over %d keys, %.0f reads/s, a kill every %s, seed %d", cfg.Duration, cfg.WriteRate, cfg.Keys, cfg.ReadRate, cfg.KillEvery, cfg.Seed)

	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	var bag []*victim
	next := began.Add(cfg.KillEvery)
	for cfg.KillEvery > 0 {
		select {
		case <-phase.Done():
		case <-time.After(time.Until(next)):
		}
		if phase.Err() != nil {
			break
		}
		// Never two of one engine down: the next kill waits for the last
		// one's engine to be whole again.
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		err := c.whole(wctx)
		cancel()
		if err != nil {
			stopPhase()
			load.Wait()
			return fmt.Errorf("before kill %d: %w", len(res.Kills)+1, err)
		}
		if phase.Err() != nil {
			break
		}
		if len(bag) == 0 { // every process in turn, in a random order
			bag = append(bag, c.victims...)
			rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
		}
		kind := faultAt(cfg.Faults, len(res.Kills))
		if kind == FaultDiskFull {
			k := Kill{Kind: FaultDiskFull, At: time.Since(began), Skipped: d.refused}
			if k.Skipped == "" {
				vic := diskVictim(&bag, c.victims, d, rng)
				k = fillOne(ctx, cfg, c, vic, d.dirs[vic.name], began, &last, ingestProbe(w, v, int64(len(res.Kills)+1)))
			}
			res.Kills = append(res.Kills, k)
			cfg.logf("fault %d, %s of %s at %s: freed after %s, full service after %s, ingest resumed %s after; %s%s%s", len(res.Kills), k.What(), k.Victim, k.At.Round(time.Second),
				k.Restarted.Round(time.Millisecond), k.Whole.Round(time.Millisecond), k.Resumed.Round(time.Millisecond), k.Helped, k.Skipped, k.Err)
			next = time.Now().Add(cfg.KillEvery)
			continue
		}
		vic := bag[0]
		bag = bag[1:]
		var k Kill
		switch kind {
		case FaultPause:
			k = pauseOne(ctx, cfg, c, vic, began, &last, cfg.PauseMin+time.Duration(rng.Int64N(int64(cfg.PauseMax-cfg.PauseMin)+1)))
		default:
			k = killOne(ctx, cfg, c, vic, began, &last)
		}
		res.Kills = append(res.Kills, k)
		if k.Err != "" {
			cfg.logf("kill %d: %s: %s", len(res.Kills), vic.name, k.Err)
		} else {
			cfg.logf("fault %d, %s of %s at %s: ready again after %s, full service after %s", len(res.Kills), k.Kind, vic.name, k.At.Round(time.Second), k.Restarted.Round(time.Millisecond), k.Whole.Round(time.Millisecond))
		}
		// The next fault comes KillEvery after this one ended (the
		// cluster whole again), so faults never pile up.
		next = time.Now().Add(cfg.KillEvery)
	}
	// The rates and the longest gap are counted over the phase's own
	// window, the one the readers read in, taken when it ends: a write
	// that hangs past it (a PUT waiting for a lock that a killed MinIO node
	// held, up to MinIO's 1-minute lock validity; docs/bench/chaos-runs.md)
	// is awaited below, and a fault still going on (a full disk is held
	// and freed) is finished, neither counted as an outage.
	at := <-phaseEnd
	phaseTook := at.took
	doneInPhase, opsInPhase := at.done, at.ops
	res.CPU = cpuSince(cpuBefore, at.cpu)
	res.CPU["strata-chaos"] = at.self - selfBefore
	load.Wait()
	res.WritesAfterPhase = time.Since(began) - phaseTook
	res.PhaseTook = phaseTook
	res.Uploads, res.Overwrites, res.Deletes = w.uploads.Load(), w.overwrites.Load(), w.deletes.Load()
	res.Failovers, res.GaveUp, res.WritesSkipped, res.WriteFailures = w.failovers.Load(), w.gaveUp.Load(), w.skipped.Load(), w.failures
	res.UploadsPerSecond = float64(doneInPhase) / phaseTook.Seconds()
	res.OpsPerSecond = float64(opsInPhase) / phaseTook.Seconds()
	res.Reads, res.Served, res.Retried, res.Hedged, res.ReadsSkipped = r.total.Load(), r.served.Load(), r.retried.Load(), r.hedged.Load(), r.skipped.Load()
	res.ReadFailures = r.failures
	res.ReadP50, res.ReadP99 = r.percentile(0.5), r.percentile(0.99)
	res.ReadsByTool = r.byTool
	res.LongestReadGap, res.LongestReadGapAt = r.longestGap(phaseTook)
	res.ReadsPerSecond = float64(res.Reads) / phaseTook.Seconds()
	cfg.logf("chaos phase over: %d uploads, %d overwrites, %d deletes (%.1f uploads/s); %d reads (%.1f/s), %d not served within %s",
		res.Uploads, res.Overwrites, res.Deletes, res.UploadsPerSecond, res.Reads, res.ReadsPerSecond, len(res.ReadFailures), ServeWithin)

	wctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	err = c.whole(wctx)
	cancel()
	if err != nil {
		return fmt.Errorf("after the chaos phase: %w", err)
	}
	cmp, took, err := v.settle(ctx, w.keys, cfg.Settle, cfg.logf)
	res.SettleTook = took
	if err != nil {
		return fmt.Errorf("compare the index with the bucket: %w", err)
	}
	res.Comparison = cmp
	return nil
}

// selfCPU is this process's CPU seconds so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// What names the fault: "kill", "pause 12s" or "diskfull 15s".
func (k Kill) What() string {
	switch k.Kind {
	case FaultPause:
		return fmt.Sprintf("pause %s", k.Paused.Round(time.Second))
	case FaultDiskFull:
		if k.Skipped != "" {
			return "diskfull (skipped)"
		}
		return fmt.Sprintf("diskfull %s", k.Paused.Round(time.Second))
	}
	return FaultKill
}

// diskVictim takes the next engine node with a disk of its own from the
// bag (any such node, at random, when the bag holds none).
func diskVictim(bag *[]*victim, all []*victim, d disks, rng *rand.Rand) *victim {
	for i, v := range *bag {
		if _, ok := d.dirs[v.name]; ok {
			*bag = slices.Delete(*bag, i, i+1)
			return v
		}
	}
	var withDisk []*victim
	for _, v := range all {
		if _, ok := d.dirs[v.name]; ok {
			withDisk = append(withDisk, v)
		}
	}
	return withDisk[rng.IntN(len(withDisk))]
}

// faultAt is the kind of the n-th fault: the kinds in turn.
func faultAt(kinds []string, n int) string {
	if len(kinds) == 0 {
		return FaultKill
	}
	return kinds[n%len(kinds)]
}

// pauseOne stops vic with SIGSTOP for d, continues it with SIGCONT and
// waits until the cluster is whole.
func pauseOne(ctx context.Context, cfg Config, c *cluster, vic *victim, began time.Time, last *atomic.Pointer[string], d time.Duration) Kill {
	stopped := time.Now()
	k := Kill{Kind: FaultPause, Victim: vic.name, At: stopped.Sub(began), Paused: d}
	pid := vic.pid()
	desc := fmt.Sprintf("%s paused at %s for %s", vic.name, k.At.Round(time.Second), d.Round(time.Second))
	last.Store(&desc)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		k.Err = fmt.Sprintf("SIGSTOP %d: %v", pid, err)
		return k
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		k.Err = fmt.Sprintf("SIGCONT %d: %v", pid, err)
		return k
	}
	k.Restarted = time.Since(stopped)
	desc2 := fmt.Sprintf("%s paused at %s for %s, continued, cluster not yet whole", vic.name, k.At.Round(time.Second), d.Round(time.Second))
	last.Store(&desc2)
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	err := c.whole(wctx)
	cancel()
	k.Whole = time.Since(stopped)
	if err != nil {
		k.Err = err.Error()
	}
	desc3 := fmt.Sprintf("%s paused at %s for %s, full service again after %s", vic.name, k.At.Round(time.Second), d.Round(time.Second), k.Whole.Round(time.Millisecond))
	last.Store(&desc3)
	return k
}

// killOne kills vic with SIGKILL, leaves it down for cfg.Down, starts it
// again and waits until the cluster is whole.
func killOne(ctx context.Context, cfg Config, c *cluster, vic *victim, began time.Time, last *atomic.Pointer[string]) Kill {
	killed := time.Now()
	k := Kill{Kind: FaultKill, Victim: vic.name, At: killed.Sub(began)}
	desc := fmt.Sprintf("%s killed at %s, being restarted", vic.name, k.At.Round(time.Second))
	last.Store(&desc)
	vic.kill()
	time.Sleep(cfg.Down)
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err = vic.start(sctx)
		cancel()
		if err == nil {
			break
		}
		cfg.logf("restart %s (attempt %d): %v", vic.name, attempt+1, err)
		vic.kill()
		time.Sleep(time.Second)
	}
	k.Restarted = time.Since(killed)
	if err != nil {
		k.Err = fmt.Sprintf("restart failed: %v", err)
		return k
	}
	desc2 := fmt.Sprintf("%s killed at %s, restarted after %s, cluster not yet whole", vic.name, k.At.Round(time.Second), k.Restarted.Round(time.Millisecond))
	last.Store(&desc2)
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	err = c.whole(wctx)
	cancel()
	k.Whole = time.Since(killed)
	if err != nil {
		k.Err = err.Error()
	}
	desc3 := fmt.Sprintf("%s killed at %s, full service again after %s", vic.name, k.At.Round(time.Second), k.Whole.Round(time.Millisecond))
	last.Store(&desc3)
	return k
}
