package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/strata-kb/strata/embedder/engine/uselite"
)

// bench measures every case at every concurrency.
type bench struct {
	cfg      Config
	corpus   *corpus
	queries  *queryPool
	model    *uselite.Model
	sessions sessions
	anchor   *anchor // mcp-go's floor, in this process
	direct   *direct
	progress io.Writer
	// inputFiles, when set, are the files inputs are drawn from (access
	// mode: those the restricted key may read); nil: every file.
	inputFiles []*corpusFile
}

// close ends the bench's MCP sessions.
func (b *bench) close() {
	b.sessions.close()
	b.anchor.close()
	b.direct.rpc.Close()
}

// side is one side (queryd or direct) of a case at one concurrency.
type side struct {
	lat      []time.Duration // latencies of the successful calls, sorted once measured
	calls    int
	errors   int
	firstErr string
	wall     time.Duration // summed over the rounds
	// hits and bytes are means over the warm-up calls (bytes: queryd's answer text).
	hits, bytes float64
}

func (s *side) percentile(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[max(0, int(math.Ceil(p*float64(len(s.lat))))-1)]
}

func (s *side) mean() time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s.lat {
		sum += d
	}
	return sum / time.Duration(len(s.lat))
}

// rate is successful calls per second of wall time.
func (s *side) rate() float64 {
	if s.wall <= 0 {
		return 0
	}
	return float64(len(s.lat)) / s.wall.Seconds()
}

func (s *side) merge(r round) {
	s.lat = append(s.lat, r.lat...)
	s.calls += r.calls
	s.errors += r.errors
	s.wall += r.wall
	if s.firstErr == "" {
		s.firstErr = r.firstErr
	}
}

// result is one row: a case at one concurrency.
type result struct {
	name      string
	local     bool // in-process, not a tool
	c         int
	queryd    side
	direct    *side // nil: no direct equivalent
	directDoc string
	load1     string // the machine's 1-minute load average when the row ended
}

// round is one batch of calls on one side.
type round struct {
	lat          []time.Duration
	calls        int
	errors       int
	firstErr     string
	wall         time.Duration
	hits, nbytes int
}

// runRound makes one call per input on c workers, each after pre's call
// for the same input when pre is set (untimed, but within the round's wall
// time). Failed calls are counted, not fatal; only an interruption stops
// the round.
func runRound(ctx context.Context, c int, fn, pre callFunc, ins []input, inspect bool) (round, error) {
	lat := make([]time.Duration, len(ins))
	outs := make([]outcome, len(ins))
	errs := make([]error, len(ins))
	start := time.Now()
	err := forEach(ctx, c, len(ins), func(ctx context.Context, worker, i int) error {
		if pre != nil {
			if _, errs[i] = pre(ctx, worker, ins[i], false); errs[i] != nil {
				errs[i] = fmt.Errorf("before the call: %w", errs[i])
				return ctx.Err()
			}
		}
		t0 := time.Now()
		outs[i], errs[i] = fn(ctx, worker, ins[i], inspect)
		lat[i] = time.Since(t0)
		return ctx.Err()
	})
	r := round{wall: time.Since(start), calls: len(ins)}
	if err != nil {
		return r, err
	}
	for i := range ins {
		if errs[i] != nil {
			r.errors++
			if r.firstErr == "" {
				r.firstErr = errs[i].Error()
			}
			continue
		}
		r.lat = append(r.lat, lat[i])
		r.hits += outs[i].hits
		r.nbytes += outs[i].bytes
	}
	return r, nil
}

func seedOf(name string, c int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", name, c)
	return h.Sum64()
}

// callsFor lowers n for a slow case so that one side's calls take about
// MaxPhase at most; perCall is the warm-up's wall time per call and worker.
func (b *bench) callsFor(n, c int, perCall time.Duration) int {
	if perCall <= 0 || time.Duration(n)*perCall/time.Duration(c) <= b.cfg.MaxPhase {
		return n
	}
	return max(20, 2*c, int(b.cfg.MaxPhase*time.Duration(c)/perCall))
}

// measure runs one case at concurrency c: a warm-up (not recorded), then
// rounds that alternate which side goes first, so that drift and noise
// fall on both sides alike.
func (b *bench) measure(ctx context.Context, bc benchCase, c, n int) (result, error) {
	sides := []callFunc{b.queryd(bc)}
	if dc := b.directCall(bc); dc != nil {
		sides = append(sides, dc)
	}
	acc, err := b.measureSides(ctx, bc.name, c, n, sides, b.primeCall(bc))
	if err != nil {
		return result{}, err
	}
	res := result{name: bc.name, local: bc.local != nil, c: c, queryd: acc[0], directDoc: bc.directDoc, load1: loadAverage()}
	if len(acc) > 1 {
		res.direct = &acc[1]
	}
	return res, nil
}

// measureSides measures sides (one or two) on the same inputs at
// concurrency c: a warm-up round per side (not recorded, but inspected for
// hits and bytes), then rounds that alternate which side goes first. Each
// side's latencies come back sorted.
func (b *bench) measureSides(ctx context.Context, name string, c, n int, sides []callFunc, pre callFunc) ([]side, error) {
	key := seedOf(name, c)
	acc := make([]side, len(sides))
	warm := b.inputs(key, max(4, 2*c))
	var perCall time.Duration
	for s, fn := range sides {
		r, err := runRound(ctx, c, fn, pre, warm, true)
		if err != nil {
			return nil, err
		}
		if ok := len(r.lat); ok > 0 {
			acc[s].hits, acc[s].bytes = float64(r.hits)/float64(ok), float64(r.nbytes)/float64(ok)
		}
		if r.errors == len(warm) {
			return nil, fmt.Errorf("%s c=%d: every warm-up call failed: %s", name, c, r.firstErr)
		}
		if s == 0 {
			perCall = r.wall * time.Duration(c) / time.Duration(len(warm))
		}
	}
	n = b.callsFor(n, c, perCall)
	rounds := max(1, min(b.cfg.Rounds, n/c))
	per := (n + rounds - 1) / rounds
	for r := range rounds {
		ins := b.inputs(key+uint64(r)+1, per)
		for k := range sides {
			s := k
			if r%2 == 1 {
				s = len(sides) - 1 - k
			}
			rr, err := runRound(ctx, c, sides[s], pre, ins, false)
			if err != nil {
				return nil, err
			}
			acc[s].merge(rr)
		}
	}
	for i := range acc {
		slices.Sort(acc[i].lat)
	}
	return acc, nil
}

// runAll measures the selected cases at each concurrency.
func (b *bench) runAll(ctx context.Context) ([]result, error) {
	var out []result
	for _, bc := range b.cases() {
		if !b.cfg.selected(bc.name) {
			continue
		}
		for i, c := range b.cfg.Concurrency {
			r, err := b.measure(ctx, bc, c, b.cfg.Calls[i])
			if err != nil {
				return out, fmt.Errorf("measure %s at c=%d: %w", bc.name, c, err)
			}
			b.printProgress(r)
			out = append(out, r)
		}
	}
	return out, nil
}

func (b *bench) printProgress(r result) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-26s c=%-2d n=%-4d p50 %8s p99 %8s %7.1f/s", r.name, r.c, r.queryd.calls, ms(r.queryd.percentile(0.5)),
		ms(r.queryd.percentile(0.99)), r.queryd.rate())
	if r.direct != nil {
		fmt.Fprintf(&sb, " | direct p50 %8s p99 %8s | x%.1f", ms(r.direct.percentile(0.5)), ms(r.direct.percentile(0.99)),
			ratio(r.queryd.percentile(0.5), r.direct.percentile(0.5)))
	}
	fmt.Fprintf(&sb, " | load %s", r.load1)
	if r.queryd.errors > 0 {
		fmt.Fprintf(&sb, " | %d errors: %s", r.queryd.errors, clip(r.queryd.firstErr, 160))
	}
	if r.direct != nil && r.direct.errors > 0 {
		fmt.Fprintf(&sb, " | direct: %d errors: %s", r.direct.errors, clip(r.direct.firstErr, 160))
	}
	fmt.Fprintln(b.progress, sb.String())
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// loadAverage is the 1-minute load average ("?" where there is no /proc):
// other programs on the machine skew the numbers, and this says how much.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
