package index

// The Writer: what it keeps between messages (caches of what exists in
// Weaviate, per-project locks and queues) and its configuration.

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
)

// Writer applies pipeline messages to the index.
type Writer struct {
	wv      *weaviate.Client
	seqs    Sequences
	log     *slog.Logger
	states  States
	tenants sync.Map // project -> struct{}: tenants known to exist
	// vectorModels and vectorTenants cache what EnsureVectorSpace made sure of.
	vectorModels, vectorTenants sync.Map
	// projects serialises commits per project: sequences are assigned and
	// published in order, one commit at a time.
	projects sync.Map // project -> *sync.Mutex
	now      func() time.Time
	// publishHook, when set, replaces publishing (tests simulate a crash with it).
	publishHook func() error
	// replication is the replication factor of collections the writer creates.
	replication int
	// locks serialise commits across indexer processes (nil: this process is alone).
	locks CommitLocks
	// readied: shard -> when afterFullDisk last set it READY (at most once
	// a readyEvery, as refusals of a replica that is down repeat).
	readied sync.Map
	// pauseHook, when set, is called at each step a pause can fall between
	// ("write", "publish"): tests pause a holder past its lease there.
	pauseHook func(step string)
	// marks records embedded versions for readers' counts (nil: not recorded).
	marks EmbeddedMarks
	// checked holds the projects this process has rolled back once; after
	// that, begin rolls back only when an intent shows a commit was cut short.
	checked sync.Map
	// vectorClass is set once the ChunkVector collection is known to exist.
	vectorClass atomic.Bool
	// vectorProps is set once ChunkVector is known to have every property (readers).
	vectorProps atomic.Bool
	fresh       FreshnessObserver
	// queues hold each project's file versions waiting to commit (commit.go).
	queues sync.Map // project -> *commitQueue
	// published counts the commits this writer made visible.
	published atomic.Int64
	maxGroup  int // file versions per commit at most (commit.go)
	// batchParallel is how many batch requests one write sends at once (store_weaviate.go).
	batchParallel int
	ranges        rangeProperties // metadata range properties known to exist (metadata.go)
	// relabels announces access changes to readers while they are applied (relabels.go; nil: not announced).
	relabels Relabels
}

// Config is what a Writer is built from: the stores it writes, and what
// it reports to and shares with other indexers. Only Weaviate, Sequences
// and Log are required.
type Config struct {
	Weaviate  *weaviate.Client
	Sequences Sequences
	// States records each file version's indexing state (nil: not recorded).
	States States
	Log    *slog.Logger
	// Replication is the replication factor of collections created later
	// (ChunkVector, on the first vectors).
	Replication int
	// Freshness, when set, is told upload-to-searchable times.
	Freshness FreshnessObserver
	// CommitLocks, when set, make commits, releases and garbage collection
	// of a project exclusive across every indexer sharing them.
	CommitLocks CommitLocks
	// EmbeddedMarks, when set, record each version ApplyVectors embeds.
	EmbeddedMarks EmbeddedMarks
	// Relabels, when set, announce access changes to readers (relabels.go).
	Relabels Relabels
	// MaxGroup is how many waiting file versions one commit may take (0:
	// DefaultMaxGroup; 1: a commit per file version, as before group
	// commit; for comparison).
	MaxGroup int
	// BatchParallel is how many batch requests one write sends at once (0:
	// DefaultBatchParallel). The objects of one write are distinct, and a
	// commit's are invisible until it is published, so their order does not
	// matter.
	BatchParallel int
}

// New returns a Writer built from cfg.
func New(cfg Config) *Writer {
	w := &Writer{wv: cfg.Weaviate, seqs: cfg.Sequences, states: cfg.States, log: cfg.Log, now: time.Now,
		maxGroup: DefaultMaxGroup, batchParallel: DefaultBatchParallel,
		replication: cfg.Replication, fresh: cfg.Freshness, locks: cfg.CommitLocks, marks: cfg.EmbeddedMarks, relabels: cfg.Relabels}
	if cfg.MaxGroup != 0 {
		w.maxGroup = max(cfg.MaxGroup, 1)
	}
	if cfg.BatchParallel != 0 {
		w.batchParallel = max(cfg.BatchParallel, 1)
	}
	return w
}

// Outcome says what an apply did.
type Outcome string

const (
	Applied   Outcome = "applied"
	Stale     Outcome = "stale"     // a newer event of the same file was applied already
	Duplicate Outcome = "duplicate" // this very event was applied already
)

// DefaultMaxGroup bounds the file versions of one commit (and so the size
// of its write batches).
const DefaultMaxGroup = 64

// DefaultBatchParallel is how many batch requests of one write are in
// flight at once: a commit of many file versions is many batches, and
// while one of them is written every other writer of the project waits.
// 8 stored 1.07x the chunks a second of 4 to 200k, side by side
// (docs/bench/loading.md).
const DefaultBatchParallel = 8
