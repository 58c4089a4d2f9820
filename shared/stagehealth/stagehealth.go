// Package stagehealth is how each worker replica says what holds it back
// beyond lag: refused by a full disk (an engine that will not take writes)
// or over its memory budget. Every replica puts its report in a NATS KV
// bucket every few seconds; reports of replicas that stop expire. queryd's
// status tool and `strata status --pipeline` read them.
package stagehealth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bucket holds one report per worker replica, keyed stage.instance.
const Bucket = "strata-stages"

// Every is how often a replica reports; a report lives TTL, so a replica
// that stopped drops out of the list within it.
const (
	Every = 5 * time.Second
	TTL   = 30 * time.Second
)

// Report is one replica's state.
type Report struct {
	Stage    string    `json:"stage"`
	Instance string    `json:"instance"`
	At       time.Time `json:"at"`
	// RSSBytes is the replica's resident memory; MemoryLimitBytes its
	// -memory-limit (0: none). Over it, OverMemoryBudget.
	RSSBytes         int64 `json:"rss_bytes"`
	MemoryLimitBytes int64 `json:"memory_limit_bytes,omitempty"`
	OverMemoryBudget bool  `json:"over_memory_budget,omitempty"`
	// Refused is why its last attempts failed when a store would not take
	// writes for want of space ("" when the last attempt went through);
	// RefusedSince is the first such failure in a row.
	Refused      string    `json:"refused,omitempty"`
	RefusedSince time.Time `json:"refused_since,omitzero"`
}

// Conditions are what the report says beyond "running", in words: "refused
// by a full disk since 12:00:01: ...", "over its memory budget: ...". Empty
// when nothing holds it back.
func (r Report) Conditions() []string {
	var out []string
	if r.Refused != "" {
		out = append(out, fmt.Sprintf("refused by a full disk since %s: %s", r.RefusedSince.UTC().Format(time.TimeOnly), r.Refused))
	}
	if r.OverMemoryBudget {
		out = append(out, fmt.Sprintf("over its memory budget: %d MiB resident, -memory-limit %d MiB", r.RSSBytes>>20, r.MemoryLimitBytes>>20))
	}
	return out
}

// diskFullSigns are how the engines say a write was refused for want of
// space: NATS JetStream (out of storage, or JetStream disabled on a node
// whose disk filled), Weaviate (shards read-only past its disk-use
// threshold), MinIO (under its free-drive threshold), and the kernel.
var diskFullSigns = []string{
	"insufficient resources", "insufficient storage", "jetstream not enabled", "resource limits exceeded",
	"store is read-only", // not "read-only" alone: a key or file name in an error may hold it
	"xminiostoragefull", "minimum free drive threshold",
	"no space left on device", "disk quota exceeded",
}

// DiskFull says whether err is a store refusing a write for want of space.
func DiskFull(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return slices.ContainsFunc(diskFullSigns, func(s string) bool { return strings.Contains(msg, s) })
}

// Reporter keeps and puts one replica's report.
type Reporter struct {
	js       jetstream.JetStream
	replicas int
	kv       jetstream.KeyValue // nil until the bucket is open
	key      string
	now      func() time.Time
	rss      func() int64
	limit    func() int64

	mu     sync.Mutex
	report Report
}

// Open returns the reporter of one replica and creates or opens the
// bucket. The reporter works without it (a NATS server short of disk may
// refuse to create it, exactly when the report matters): the error is
// returned to be logged, and each Put tries to open it again.
func Open(ctx context.Context, js jetstream.JetStream, replicas int, stage, instance string) (*Reporter, error) {
	r := &Reporter{js: js, replicas: replicas, key: stage + "." + keySafe(instance), now: time.Now, rss: residentBytes, limit: memoryLimit,
		report: Report{Stage: stage, Instance: instance}}
	return r, r.open(ctx)
}

func (r *Reporter) open(ctx context.Context) error {
	if r.kv != nil {
		return nil
	}
	kv, err := r.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: Bucket, History: 1, TTL: TTL, Replicas: r.replicas,
		Description: "Strata: each worker replica's conditions (full disk, memory budget)"})
	if err != nil {
		return fmt.Errorf("stage health bucket: %w", err)
	}
	r.kv = kv
	return nil
}

// Observe records the outcome of one attempt: a disk-full refusal starts
// (or continues) the refused condition; any success ends it; other errors
// leave it as it is.
func (r *Reporter) Observe(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.report.Refused, r.report.RefusedSince = "", time.Time{}
	case DiskFull(err):
		if r.report.Refused == "" {
			r.report.RefusedSince = r.now().UTC()
		}
		r.report.Refused = truncate(err.Error(), 300)
	}
}

// Put writes the report now.
func (r *Reporter) Put(ctx context.Context) error {
	r.mu.Lock()
	rep := r.report
	r.mu.Unlock()
	rep.At = r.now().UTC()
	rep.RSSBytes, rep.MemoryLimitBytes = r.rss(), r.limit()
	rep.OverMemoryBudget = rep.MemoryLimitBytes > 0 && rep.RSSBytes > rep.MemoryLimitBytes
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	if err := r.open(ctx); err != nil {
		return err
	}
	if _, err := r.kv.Put(ctx, r.key, b); err != nil {
		return fmt.Errorf("put stage health %s: %w", r.key, err)
	}
	return nil
}

// Run puts the report every Every until ctx ends. A failed put is retried
// at the next tick: a NATS server short of disk may refuse it too.
func (r *Reporter) Run(ctx context.Context) {
	t := time.NewTicker(Every)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, Every)
		_ = r.Put(pctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ReadTimeout bounds Read: a status call never waits long on a paused or
// cut-off NATS server for it.
const ReadTimeout = 2 * time.Second

// Read returns every live report, by stage then instance.
func Read(ctx context.Context, js jetstream.JetStream) ([]Report, error) {
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	kv, err := js.KeyValue(ctx, Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stage health bucket: %w", err)
	}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list stage health: %w", err)
	}
	var out []Report
	for key := range lister.Keys() {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired since listed
		}
		if err != nil {
			return nil, fmt.Errorf("stage health %s: %w", key, err)
		}
		var rep Report
		if err := json.Unmarshal(e.Value(), &rep); err != nil {
			continue // not a report: written by something else
		}
		out = append(out, rep)
	}
	if err := ctx.Err(); err != nil { // the key list was cut short
		return nil, fmt.Errorf("list stage health: %w", err)
	}
	slices.SortFunc(out, func(a, b Report) int {
		if c := strings.Compare(a.Stage, b.Stage); c != 0 {
			return c
		}
		return strings.Compare(a.Instance, b.Instance)
	})
	return out, nil
}

// memoryLimit is the runtime's soft limit (-memory-limit, GOMEMLIMIT), 0 when none.
func memoryLimit() int64 {
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		return l
	}
	return 0
}

// residentBytes is this process's VmRSS (0 where /proc is not there).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// keySafe turns an instance name into a KV key token.
func keySafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Instance names this process among a stage's replicas: host and process id.
func Instance() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// Reader reads the reports from JS (queryd's status tool).
type Reader struct{ JS jetstream.JetStream }

// Stages returns every live report.
func (r Reader) Stages(ctx context.Context) ([]Report, error) { return Read(ctx, r.JS) }
