package main

// -byid: how long a Raft leader's loss delays reads by id. Each kill takes
// the leader; from a second before it until -window after, three probes
// each start a read of one chunk by id every -every, each read in its own
// goroutine within -deadline:
//
//   - mcp: get_file_chunk through queryd (MCP), the path agents take;
//   - rest: a REST GET by id straight to Weaviate, through Strata's
//     Weaviate client (every node, hedged and retried: shared/schema);
//   - filter: a GraphQL Get with a filter on the id, consistency ONE,
//     through the same client.
//
// Two more probes write: a merge (PATCH) into one object of a probe
// tenant, consistency ONE, through Strata's Weaviate client, once marked
// schema.Idempotent as the indexer's batches and merges are (each attempt
// within -write-timeout, then sent again to the next node) and once not
// (one attempt, bounded by the client's 60 s timeout, as before).
//
// A kill's cost to a probe is the slowest of its requests started from the
// kill on, less the median one before it.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
)

// probes are the ways a chunk is read by id, then the writes, in report order.
var probes = []string{"mcp", "rest", "filter", "merge", "merge-plain"}

// isWrite reports the write probes.
func isWrite(probe string) bool { return strings.HasPrefix(probe, "merge") }

// probeTenant holds the object the write probes merge into: a tenant of its
// own, so the reads of acme see nothing of it.
const probeTenant = "failoverprobe"

// probeRead is one read by id.
type probeRead struct {
	at   time.Duration // its start, from the kill (negative: before it)
	took time.Duration
	err  string
}

// leaderKill is what one leader's loss did to reads by id.
type leaderKill struct {
	Victim int
	Reads  map[string][]probeRead // per probe
}

// baseline is the median time of a probe's reads started before the kill.
func (k leaderKill) baseline(probe string) time.Duration {
	var ds []time.Duration
	for _, r := range k.Reads[probe] {
		if r.at < 0 && r.err == "" {
			ds = append(ds, r.took)
		}
	}
	return median(ds)
}

// p99 is the 99th percentile time of a probe's reads started before the kill.
func (k leaderKill) p99(probe string) time.Duration {
	var ds []time.Duration
	for _, r := range k.Reads[probe] {
		if r.at < 0 && r.err == "" {
			ds = append(ds, r.took)
		}
	}
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*99/100)]
}

// worst is the slowest of a probe's reads started from the kill on (a
// failed read counts as its time to fail).
func (k leaderKill) worst(probe string) time.Duration {
	var d time.Duration
	for _, r := range k.Reads[probe] {
		if r.at >= 0 {
			d = max(d, r.took)
		}
	}
	return d
}

// delay is worst less baseline: what the kill cost the slowest read.
func (k leaderKill) delay(probe string) time.Duration {
	return max(k.worst(probe)-k.baseline(probe), 0)
}

// over counts a probe's reads started from the kill on that took longer than d.
func (k leaderKill) over(probe string, d time.Duration) (n, of int) {
	for _, r := range k.Reads[probe] {
		if r.at >= 0 {
			of++
			if r.took > d {
				n++
			}
		}
	}
	return n, of
}

func (k leaderKill) failed(probe string) []string {
	var out []string
	for _, r := range k.Reads[probe] {
		if r.err != "" {
			out = append(out, fmt.Sprintf("%s at %s after %s: %.160s", probe, r.at.Round(time.Millisecond), r.took.Round(time.Millisecond), r.err))
		}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	if len(ds)%2 == 1 {
		return ds[len(ds)/2]
	}
	return (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
}

// byIDBench reads one chunk by id three ways and merges into one object two.
type byIDBench struct {
	*bench
	wv    *weaviate.Client // reads
	ww    *weaviate.Client // writes
	chunk string
}

func newByIDBench(ctx context.Context, b *bench) (*byIDBench, error) {
	hosts := b.st.Servers.WeaviateHosts()
	wv, err := schema.NewClient(hosts, "", testservers.LocalWeaviateReader)
	if err != nil {
		return nil, err
	}
	ww, err := schema.NewClientWith(hosts, "", testservers.LocalWeaviateWriter, schema.ClientOptions{WriteTimeout: b.cfg.WriteTimeout})
	if err != nil {
		return nil, err
	}
	if err := schema.EnsureTenantIn(ctx, ww, probeTenant, schema.ProjectStateClass); err != nil {
		return nil, err
	}
	if _, err := ww.Batch().ObjectsBatcher().WithConsistencyLevel("ALL").WithObjects(&models.Object{Class: schema.ProjectStateClass,
		ID: strfmt.UUID(ids.Project(probeTenant)), Tenant: probeTenant, Properties: map[string]any{"sequence": 0}}).Do(ctx); err != nil {
		return nil, fmt.Errorf("write probe object: %w", err)
	}
	var chunk string
	for _, r := range b.reads {
		if r.Tool == "get_file_chunk" {
			chunk, _ = r.Args["chunk_id"].(string)
		}
	}
	if chunk == "" {
		return nil, fmt.Errorf("no chunk to read by id")
	}
	return &byIDBench{bench: b, wv: wv, ww: ww, chunk: chunk}, nil
}

// read reads the chunk by id one way and returns the error text, if any.
func (b *byIDBench) read(ctx context.Context, probe string) string {
	const word = "file007" // seed's chunk
	switch probe {
	case "mcp":
		text, err := b.callText(ctx, "get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": b.chunk})
		if err != nil {
			return err.Error()
		}
		if !strings.Contains(text, word) {
			return "answer without " + word
		}
	case "rest":
		objs, err := b.wv.Data().ObjectsGetter().WithClassName("Chunk").WithID(b.chunk).WithTenant("acme").
			WithConsistencyLevel("ONE").Do(ctx)
		if err != nil {
			return err.Error()
		}
		if len(objs) != 1 {
			return fmt.Sprintf("%d objects", len(objs))
		}
	case "merge", "merge-plain":
		if probe == "merge" {
			ctx = schema.Idempotent(ctx)
		}
		err := b.ww.Data().Updater().WithMerge().WithClassName(schema.ProjectStateClass).WithID(ids.Project(probeTenant)).
			WithTenant(probeTenant).WithConsistencyLevel("ONE").
			WithProperties(map[string]any{"updated_at": time.Now().UTC().Format(time.RFC3339Nano)}).Do(ctx)
		if err != nil {
			return err.Error()
		}
	case "filter":
		resp, err := b.wv.GraphQL().Get().WithClassName("Chunk").WithTenant("acme").WithConsistencyLevel("ONE").
			WithWhere(filters.Where().WithPath([]string{"id"}).WithOperator(filters.Equal).WithValueText(b.chunk)).
			WithLimit(1).WithFields(graphql.Field{Name: "content"}).Do(ctx)
		if err != nil {
			return err.Error()
		}
		if len(resp.Errors) > 0 {
			return resp.Errors[0].Message
		}
		if got := fmt.Sprint(resp.Data); !strings.Contains(got, word) {
			return "answer without " + word
		}
	}
	return ""
}

// killLeader waits until the cluster is whole, starts the probes, kills
// the Raft leader a second later, lets the probes run for the window, waits
// for every read and starts the node again.
func (b *byIDBench) killLeader(ctx context.Context) (leaderKill, error) {
	wait, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	nodes := b.st.Servers.WeaviateNodes()
	if err := localstack.WaitWeaviateSettled(wait, b.st.Stack, len(nodes)); err != nil {
		return leaderKill{}, err
	}
	for _, p := range probes {
		if e := b.read(wait, p); e != "" {
			return leaderKill{}, fmt.Errorf("%s read fails before the kill: %s", p, e)
		}
	}
	leader, err := localstack.WeaviateLeader(wait, b.st.Stack)
	if err != nil {
		return leaderKill{}, err
	}
	k := leaderKill{Victim: leader, Reads: map[string][]probeRead{}}
	var mu sync.Mutex
	var reads sync.WaitGroup
	start := time.Now()
	killAt := start.Add(time.Second)
	stop := killAt.Add(b.cfg.Window)
	var probing sync.WaitGroup
	for _, p := range probes {
		probing.Add(1)
		go func() {
			defer probing.Done()
			every, deadline := b.cfg.Every, b.cfg.Deadline
			if p != "mcp" {
				every *= 4 // the straight probes load the cluster less: they show what waits, not how long queryd does
			}
			if isWrite(p) {
				deadline = 70 * time.Second // past the client's 60 s
			}
			tick := time.NewTicker(every)
			defer tick.Stop()
			for now := time.Now(); now.Before(stop); now = <-tick.C {
				reads.Add(1)
				go func(began time.Time) {
					defer reads.Done()
					rctx, cancel := context.WithTimeout(ctx, deadline)
					e := b.read(rctx, p)
					cancel()
					r := probeRead{at: began.Sub(killAt), took: time.Since(began), err: e}
					mu.Lock()
					k.Reads[p] = append(k.Reads[p], r)
					mu.Unlock()
				}(now)
			}
		}()
	}
	time.Sleep(time.Until(killAt))
	nodes[leader].Kill()
	probing.Wait()
	reads.Wait()
	if err := b.st.Servers.RestartWeaviateNode(ctx, leader); err != nil {
		return k, err
	}
	return k, nil
}

// runByID kills the leader cfg.Kills times and writes the report section.
func runByID(ctx context.Context, b *bench) error {
	bb, err := newByIDBench(ctx, b)
	if err != nil {
		return err
	}
	rep := &byIDReport{cfg: b.cfg, started: time.Now(), load: loadAverage()}
	for i := range b.cfg.Kills {
		k, err := bb.killLeader(ctx)
		if err != nil {
			return fmt.Errorf("leader kill %d: %w", i+1, err)
		}
		rep.kills = append(rep.kills, k)
		if b.cfg.Verbose {
			for _, p := range probes {
				for _, r := range k.Reads[p] {
					if r.at >= 0 && r.took > 4*k.baseline(p)+50*time.Millisecond {
						logf("  %s read started %s after the kill took %s %s", p, r.at.Round(time.Millisecond), r.took.Round(time.Millisecond), r.err)
					}
				}
			}
		}
		logf("leader kill %d: node%d; slowest read by id after the kill: mcp %s, rest %s, filter %s (baseline mcp %s); slowest merge %s, plain %s (%d failed)",
			i+1, k.Victim+1, k.worst("mcp").Round(time.Millisecond), k.worst("rest").Round(time.Millisecond), k.worst("filter").Round(time.Millisecond),
			k.baseline("mcp").Round(time.Millisecond), k.worst("merge").Round(time.Millisecond), k.worst("merge-plain").Round(time.Millisecond),
			len(k.failed("merge-plain")))
	}
	if err := rep.write(b.cfg.Out); err != nil {
		return err
	}
	med, worst := rep.summary("mcp", leaderKill.delay)
	logf("reads by id (mcp) delayed by a leader kill: median %s, max %s (%s)", med.Round(time.Millisecond), worst.Round(time.Millisecond), b.cfg.Out)
	if n := rep.failed("mcp"); n > 0 {
		return fmt.Errorf("%d reads by id through queryd failed after a leader kill (see %s)", n, b.cfg.Out)
	}
	return nil
}

// byIDReport is every leader kill of one -byid run.
type byIDReport struct {
	cfg     config
	started time.Time
	load    string
	kills   []leaderKill
}

// summary is the median and max of f over the kills.
func (r *byIDReport) summary(probe string, f func(leaderKill, string) time.Duration) (med, worst time.Duration) {
	var ds []time.Duration
	for _, k := range r.kills {
		ds = append(ds, f(k, probe))
	}
	if len(ds) == 0 {
		return 0, 0
	}
	return median(ds), slices.Max(ds)
}

func (r *byIDReport) failed(probe string) int {
	n := 0
	for _, k := range r.kills {
		n += len(k.failed(probe))
	}
	return n
}

// byIDHeading starts the section -byid writes in the report; a run without
// -byid keeps it.
const byIDHeading = "## Reads by id across Raft leader kills"

func (r *byIDReport) write(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", byIDHeading)
	fmt.Fprintf(&b, "Produced by `go run ./deploy/measure/strata-failover -byid -kills %d` (not part of `go test`) on %s, %d CPUs, 1-minute load average before the first kill %s (other work shares the machine).\n\n",
		r.cfg.Kills, r.started.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), r.load)
	fmt.Fprintf(&b, "Same stack and files as above, the services of this commit. Every kill takes the Raft leader with SIGKILL (the node is started again and "+
		"the cluster left to settle in between). From 1 s before the kill until %s after it, three probes each start a read of one "+
		"chunk by id, each read in its own goroutine with a %s deadline: **mcp** (one every %s) is `get_file_chunk` through queryd (MCP), "+
		"the path agents take; **rest** is a REST GET by id straight to Weaviate and **filter** a GraphQL Get with a filter on the id "+
		"(consistency ONE), both through Strata's Weaviate client (every node, hedged and retried; one every %s each). A kill's delay to a probe is the "+
		"slowest of its requests started from the kill on, less the median of its requests before the kill. Two probes write, one "+
		"every %s each: a merge (PATCH) of one property into one object of a tenant of its own, consistency ONE, through the same "+
		"client; **merge** is marked idempotent as the indexer's batches and merges are (each attempt within %s, "+
		"`-weaviate-write-timeout`, then sent again to the next node, with twice the time), **merge-plain** is not (one attempt, "+
		"bounded by the client's 60 s timeout: every write before this change).\n\n",
		r.cfg.Window, r.cfg.Deadline, r.cfg.Every, 4*r.cfg.Every, 4*r.cfg.Every, r.cfg.WriteTimeout)
	med, worst := r.summary("mcp", leaderKill.delay)
	fmt.Fprintf(&b, "**A read by id through queryd delayed by the leader's loss: median %s, max %s over %d leader kills; %d reads failed.**\n\n",
		ms(med), ms(worst), len(r.kills), r.failed("mcp"))
	b.WriteString("| probe | before the kill: median | p99 (max over kills) | delay: median | delay: max | slowest after the kill: median | max | over 500 ms | failed |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range probes {
		bm, _ := r.summary(p, leaderKill.baseline)
		_, pw := r.summary(p, leaderKill.p99)
		dm, dw := r.summary(p, leaderKill.delay)
		wm, ww := r.summary(p, leaderKill.worst)
		n, of := 0, 0
		for _, k := range r.kills {
			a, c := k.over(p, 500*time.Millisecond)
			n, of = n+a, of+c
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d of %d | %d |\n", p, ms(bm), ms(pw), ms(dm), ms(dw), ms(wm), ms(ww), n, of, r.failed(p))
	}
	b.WriteString("\nSlowest request started from the kill on, per kill:\n\n| kill | node | mcp | rest | filter | merge | merge-plain (failed) |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for i, k := range r.kills {
		fmt.Fprintf(&b, "| %d | node%d | %s | %s | %s | %s | %s (%d) |\n", i+1, k.Victim+1, ms(k.worst("mcp")), ms(k.worst("rest")),
			ms(k.worst("filter")), ms(k.worst("merge")), ms(k.worst("merge-plain")), len(k.failed("merge-plain")))
	}
	var fails []string
	for _, k := range r.kills {
		for _, p := range probes {
			fails = append(fails, k.failed(p)...)
		}
	}
	if len(fails) > 0 {
		b.WriteString("\nFailed requests (the first 12):\n\n")
		for _, f := range fails[:min(len(fails), 12)] {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(f, "|", "/"))
		}
	}
	b.WriteString("\n" + byIDNotes)
	return spliceReport(path, b.String(), true)
}

// byIDNotes explains the figures (kept with the section the run writes).
const byIDNotes = "Why REST waits and a filter does not: a REST read by id of a multi-tenant collection checks the tenant with " +
	"the Raft leader on whichever node it reaches (Weaviate `adapters/repos/db/sharding/resolver.go` `ResolveShardByObjectID` -> " +
	"`multitenancy` `ValidateTenants` -> `cluster` `QueryTenantsShards`), so after the leader's loss it waits for a new leader on every " +
	"node, and on the node that becomes leader for good (the client's retries across nodes end it). A filtered query checks the " +
	"tenant in the node's own schema (`cluster/router` `multiTenantRouter`) and answers on. queryd (`queryd/store/byid.go`) sends a " +
	"read by id over REST and, when that has not answered within 100 ms (`-weaviate-byid-hedge`), as a filtered query on the id too " +
	"(gRPC when set, else GraphQL; consistency ONE); the first answer wins, and for 5 s after a filtered query won, reads by id skip REST.\n"

// spliceReport writes section into the report at path: with byID, in place
// of the -byid section (appended when there is none); without, in place of
// everything before it.
func spliceReport(path, section string, byID bool) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	head, tail := string(old), ""
	if i := strings.Index(head, byIDHeading); i >= 0 {
		head, tail = head[:i], head[i:]
	}
	var out string
	if byID {
		out = strings.TrimRight(head, "\n") + "\n\n" + section
		if strings.TrimSpace(head) == "" {
			out = section
		}
	} else {
		out = strings.TrimRight(section, "\n") + "\n"
		if tail != "" {
			out += "\n" + tail
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
