package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/deploy/mcpclient"
)

// ServeWithin is how soon a read must be answered, retries included, to
// count as served.
const ServeWithin = 2 * time.Second

// ReadFailure is a read that was not answered within ServeWithin.
type ReadFailure struct {
	At      time.Duration // since the chaos phase began
	Tool    string
	Took    time.Duration
	Errors  []string
	Context string // the last kill before it, and whether the cluster was whole again
	// Slow is true when an attempt was still running when ServeWithin
	// ran out; false when every attempt failed with an error (refused: no
	// replica could answer it).
	Slow bool
}

// Why says whether the read was slow or refused.
func (f ReadFailure) Why() string {
	if f.Slow {
		return "slow"
	}
	return "refused"
}

// reader makes agent reads through MCP against both queryd replicas at a
// steady rate, as a client behind a load balancer would: the balancer
// sends a new read only to a replica that passed its last readiness check
// (healthChecks), and the client retries a failed call on the other
// replica (serveRead; with -hedge-after it also hedges a slow one).
type reader struct {
	cfg    Config
	urls   []string
	apiKey string
	w      *writer
	began  time.Time
	// lastKill says what was killed last, for a failure's context.
	lastKill func() string
	hedges   *hedgeBudget // shared by every worker
	health   *healthChecks
	// projectSeen is set once a read of Project was answered: before its
	// first commit the project does not exist, and "project not found" is
	// the right answer (writes and reads start together).
	projectSeen atomic.Bool

	total, served, retried, hedged, skipped atomic.Int64
	mu                                      sync.Mutex
	failures                                []ReadFailure
	latencies                               []time.Duration
	byTool                                  map[string]*ToolReads
	// servedAt is when each served read was answered, since began.
	servedAt []time.Duration
}

// ToolReads are one tool's reads: how many, how many not served within
// ServeWithin (Slow of them still running then, the others refused), and
// the served ones' latencies.
type ToolReads struct {
	Reads, Failed, Slow int
	latencies           []time.Duration
}

// Percentile of the served reads' latencies (0..1).
func (t *ToolReads) Percentile(p float64) time.Duration { return percentile(t.latencies, p) }

type readCall struct {
	tool string
	args map[string]any
	// okError accepts a tool error that is a right answer (a file just
	// deleted is "not found").
	okError func(text string) bool
}

// pick chooses the next read: searches of every kind, a file's chunks,
// object and project status, document listings.
func (r *reader) pick(rng *rand.Rand) readCall {
	k := r.w.keys[rng.IntN(len(r.w.keys))]
	words := vocabulary[rng.IntN(len(vocabulary))] + " " + vocabulary[rng.IntN(len(vocabulary))]
	switch n := rng.IntN(100); {
	case n < 30:
		q := words
		if t := k.last.Load(); t != nil {
			q = *t
		}
		return readCall{tool: "search_keyword", args: map[string]any{"query": q, "top_k": 5}}
	case n < 45:
		return readCall{tool: "hybrid_search", args: map[string]any{"query": words, "project_reference": Project, "top_k": 10}}
	case n < 55:
		return readCall{tool: "query_documents", args: map[string]any{"query": words, "limit": 5}}
	case n < 65:
		return readCall{tool: "search_knowledge", args: map[string]any{"query": words, "top_k": 5}}
	case n < 80:
		return readCall{tool: "list_file_chunks", args: map[string]any{"project_reference": Project, "file_path": k.path(), "limit": 20},
			okError: func(text string) bool {
				return strings.Contains(text, "file not found") || strings.Contains(text, "was not indexed")
			}}
	case n < 85:
		return readCall{tool: "status", args: map[string]any{}}
	case n < 95:
		return readCall{tool: "object_status", args: map[string]any{"key": k.key}}
	default:
		return readCall{tool: "list_documents", args: map[string]any{"project_reference": Project, "limit": 20}}
	}
}

// run reads at cfg.ReadRate until ctx ends.
func (r *reader) run(ctx context.Context) {
	r.hedges = newHedgeBudget(HedgeShare, HedgeBurst)
	r.health = newHealthChecks(r.urls, get)
	jobs := make(chan struct{}, 64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.health.run(ctx, HealthEvery) }()
	for i := range r.cfg.Readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(ctx, i, jobs)
		}()
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.ReadRate))
	defer t.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-t.C:
			select {
			case jobs <- struct{}{}:
			default:
				r.skipped.Add(1) // every reader busy and the queue full: the rate is not held
			}
		}
	}
	close(jobs)
	wg.Wait()
}

// worker serves reads from jobs with one MCP session per queryd replica,
// opened again after it fails (a restarted replica knows no old session).
func (r *reader) worker(ctx context.Context, i int, jobs <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), uint64(100+i)))
	sessions := make([]*client.Client, len(r.urls))
	defer func() {
		for _, c := range sessions {
			if c != nil {
				c.Close()
			}
		}
	}()
	for n := 0; ; n++ {
		if _, ok := <-jobs; !ok || ctx.Err() != nil {
			return
		}
		call := r.pick(rng)
		started := time.Now()
		o := serveRead(ctx, started.Add(ServeWithin), len(r.urls), r.health.route((i+n)%len(r.urls)), r.cfg.HedgeAfter, r.hedges, func(actx context.Context, replica int) error {
			err := r.attempt(actx, &sessions[replica], r.urls[replica], call)
			if err != nil && sessions[replica] != nil {
				sessions[replica].Close() // a restarted replica knows no old session
				sessions[replica] = nil
			}
			return err
		})
		served, slow, errs := o.Served, o.Slow, o.Errors
		if o.Served && o.ServedBy > 0 {
			r.retried.Add(1)
		}
		if o.Hedged {
			r.hedged.Add(1)
		}
		took := time.Since(started)
		r.total.Add(1)
		r.mu.Lock()
		if r.byTool == nil {
			r.byTool = map[string]*ToolReads{}
		}
		tr := r.byTool[call.tool]
		if tr == nil {
			tr = &ToolReads{}
			r.byTool[call.tool] = tr
		}
		tr.Reads++
		if served && took <= ServeWithin {
			r.served.Add(1)
			r.latencies = append(r.latencies, took)
			r.servedAt = append(r.servedAt, time.Since(r.began))
			tr.latencies = append(tr.latencies, took)
		} else {
			tr.Failed++
			slow = slow || served // answered, but after ServeWithin
			if slow {
				tr.Slow++
			}
			r.failures = append(r.failures, ReadFailure{At: started.Sub(r.began), Tool: call.tool, Took: took, Errors: errs, Context: r.lastKill(), Slow: slow})
		}
		r.mu.Unlock()
	}
}

// attempt makes one call on one replica, opening its session if needed.
func (r *reader) attempt(ctx context.Context, session **client.Client, url string, call readCall) error {
	if *session == nil {
		c, err := mcpclient.Connect(ctx, url, r.apiKey, "strata-chaos")
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		*session = c
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = call.tool, call.args
	res, err := (*session).CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError {
		text := mcpclient.Text(res)
		if r.rightError(call, text) {
			return nil
		}
		return fmt.Errorf("tool error: %s", clip(text, 300))
	}
	if _, scoped := call.args["project_reference"]; scoped {
		r.projectSeen.Store(true)
	}
	return nil
}

// rightError reports whether a tool error is a right answer to call: one
// its okError accepts, or "project not found" for a read of Project before
// any read of it was answered.
func (r *reader) rightError(call readCall, text string) bool {
	if call.okError != nil && call.okError(text) {
		return true
	}
	_, scoped := call.args["project_reference"]
	return scoped && !r.projectSeen.Load() && strings.Contains(text, "project not found")
}

// longestGap is the longest time within the first phase of the run
// without a read served, and when it began (since began).
func (r *reader) longestGap(phase time.Duration) (gap, at time.Duration) {
	r.mu.Lock()
	times := slices.Clone(r.servedAt)
	r.mu.Unlock()
	slices.Sort(times)
	prev := time.Duration(0)
	for _, t := range append(times, phase) {
		t = min(t, phase)
		if t-prev > gap {
			gap, at = t-prev, prev
		}
		prev = t
	}
	return gap, at
}

// percentile of the served reads' latencies (0..1).
func (r *reader) percentile(p float64) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return percentile(r.latencies, p)
}

func percentile(latencies []time.Duration, p float64) time.Duration {
	if len(latencies) == 0 {
		return 0
	}
	l := slices.Clone(latencies)
	slices.Sort(l)
	return l[min(len(l)-1, int(p*float64(len(l))))]
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
