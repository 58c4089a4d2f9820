package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report is every kill of one run.
type report struct {
	cfg     config
	started time.Time
	load    string // 1-minute load average before the first kill
	kills   []kill
}

// slowests are the kill->every read tool complete times, sorted.
func (r *report) slowests() []time.Duration {
	var ds []time.Duration
	for _, k := range r.kills {
		ds = append(ds, k.slowest())
	}
	slices.Sort(ds)
	return ds
}

func (r *report) median() time.Duration {
	ds := r.slowests()
	if len(ds) == 0 {
		return 0
	}
	if len(ds)%2 == 1 {
		return ds[len(ds)/2]
	}
	return (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
}

func (r *report) worst() time.Duration {
	ds := r.slowests()
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)-1]
}

func (r *report) failed() int {
	n := 0
	for _, k := range r.kills {
		n += len(k.Failed)
	}
	return n
}

// byRole is the median and worst kill->complete time of the kills of one role.
func (r *report) byRole(leader bool) (n int, median, worst time.Duration) {
	var ds []time.Duration
	for _, k := range r.kills {
		if k.Leader == leader {
			ds = append(ds, k.slowest())
		}
	}
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	return len(ds), ds[len(ds)/2], ds[len(ds)-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func (r *report) write(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Weaviate failover: kill -> every read tool complete\n\n")
	fmt.Fprintf(&b, "Produced by `go run ./deploy/measure/strata-failover -kills %d` (not part of `go test`) on %s, %d CPUs, 1-minute load average before the first kill %s (other work shares the machine).\n\n",
		r.cfg.Kills, r.started.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), r.load)
	b.WriteString("Setup: the local stack with Weaviate v1.35.2 as 3 nodes (every collection replicated twice, " +
		"`RAFT_TIMEOUTS_MULTIPLIER=1`, `MEMBERLIST_FAST_FAILURE_DETECTION=true`), queryd and the indexer given all three " +
		"nodes in `-weaviate-host`, " + fmt.Sprint(r.cfg.Files) + " files indexed and embedded. Each kill takes one node with SIGKILL " +
		"(alternately the Raft leader and a follower, so each node goes in each role), then calls every read tool " +
		fmt.Sprintf("(%d) once, all at once, each with a %s deadline, and times the kill to each complete answer ", len(toolsBySlowest(r.kills)), r.cfg.Deadline) +
		"(the answer holds the word it must): that first call is each tool's first complete answer, the caller never retries. The node is started again and the cluster left to settle before the next kill.\n\n")
	n, med, worst := len(r.kills), r.median(), r.worst()
	fmt.Fprintf(&b, "**Kill -> every read tool answered completely: median %s, worst %s over %d kills; %d calls failed.**\n\n", ms(med), ms(worst), n, r.failed())
	for _, leader := range []bool{true, false} {
		if n, m, w := r.byRole(leader); n > 0 {
			role := "followers"
			if leader {
				role = "Raft leader"
			}
			fmt.Fprintf(&b, "- %s killed (%d): median %s, worst %s\n", role, n, ms(m), ms(w))
		}
	}
	b.WriteString("\n| kill | node | role | every tool complete | slowest tool | failed |\n|---:|---|---|---:|---|---|\n")
	for i, k := range r.kills {
		failed := "-"
		if len(k.Failed) > 0 {
			var fs []string
			for tool, why := range k.Failed {
				fs = append(fs, tool+" "+why)
			}
			slices.Sort(fs)
			failed = strings.ReplaceAll(strings.Join(fs, "; "), "|", "/")
		}
		fmt.Fprintf(&b, "| %d | node%d | %s | %s | %s | %s |\n", i+1, k.Victim+1, k.role(), ms(k.slowest()), k.slowestTool(), failed)
	}
	b.WriteString("\nWorst kill -> complete answer per read tool:\n\n| tool | median | worst |\n|---|---:|---:|\n")
	for _, tool := range toolsBySlowest(r.kills) {
		var ds []time.Duration
		for _, k := range r.kills {
			if d, ok := k.Answered[tool]; ok {
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		fmt.Fprintf(&b, "| %s | %s | %s |\n", tool, ms(ds[len(ds)/2]), ms(ds[len(ds)-1]))
	}
	b.WriteString("\nWhy a leader's loss costs more: reads by id and tenant listings of multi-tenant collections ask the Raft " +
		"leader for the tenant's status (Weaviate `adapters/repos/db/multitenancy/validator.go` -> `usecases/schema/manager.go` " +
		"`TenantsShards` -> `cluster/raft_query_endpoints.go` `QueryTenantsShards`), so they wait for a new leader (1-3 s with these settings, 10-15 s with Weaviate's default multiplier 5, " +
		"and the node that becomes leader never answers the reads it had sent to the old one). The Weaviate client in `shared/schema` " +
		"(hedge.go) sends a held or failed read again, to any node, schema and tenant reads with `consistency: false` " +
		"(the node's own copy); queryd reads objects by id over REST and, when that has not answered within 100 ms, as a filtered " +
		"query on the id too, which checks the tenant locally (see the reads-by-id section below).\n\n" +
		"Before: with Weaviate's default multiplier and one host per service, every `status` call failed for a minute " +
		"after a replica's SIGKILL (`GET /v1/objects/ProjectState/...: context deadline exceeded`, the client's 60 s " +
		"timeout) when the node lost led the Raft group. Vectors are indexed synchronously here (`ASYNC_INDEXING` off " +
		"outside strata-bench): with vectors still queued, a search on the surviving replica once missed them.\n")
	return spliceReport(path, b.String(), false)
}

// loadAverage is the 1-minute load average, or "?" off Linux.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
