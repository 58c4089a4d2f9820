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
	locks     CommitLocks
	leaseLost sync.Map // project -> func() bool, while its lease is held
	// fences hold each project's fence (Sequences.Claim) while a commit of
	// this writer holds it.
	fences sync.Map // project -> uint64
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
	// batchParallel is how many batch requests one write sends at once (batch.go).
	batchParallel int
	ranges        rangeProperties // metadata range properties known to exist (metadata.go)
	// relabels announces access changes to readers while they are applied (relabels.go; nil: not announced).
	relabels Relabels
}

// New returns a Writer.
func New(wv *weaviate.Client, seqs Sequences, states States, log *slog.Logger) *Writer {
	return &Writer{wv: wv, seqs: seqs, states: states, log: log, now: time.Now, maxGroup: DefaultMaxGroup, batchParallel: DefaultBatchParallel}
}

// Outcome says what an apply did.
type Outcome string

const (
	Applied   Outcome = "applied"
	Stale     Outcome = "stale"     // a newer event of the same file was applied already
	Duplicate Outcome = "duplicate" // this very event was applied already
)

// SetReplication sets the replication factor of collections created later
// (ChunkVector, on the first vectors).
func (w *Writer) SetReplication(factor int) { w.replication = factor }

// SetFreshnessObserver makes the writer report upload-to-searchable times.
func (w *Writer) SetFreshnessObserver(o FreshnessObserver) { w.fresh = o }

// SetCommitLocks makes commits, releases and garbage collection of a
// project exclusive across every indexer sharing locks.
func (w *Writer) SetCommitLocks(l CommitLocks) { w.locks = l }

// SetEmbeddedMarks makes ApplyVectors record each version it embeds.
func (w *Writer) SetEmbeddedMarks(m EmbeddedMarks) { w.marks = m }

// DefaultMaxGroup bounds the file versions of one commit (and so the size
// of its write batches).
const DefaultMaxGroup = 64

// SetMaxGroup sets how many waiting file versions one commit may take
// (1: a commit per file version, as before group commit; for comparison).
func (w *Writer) SetMaxGroup(n int) { w.maxGroup = max(n, 1) }

// DefaultBatchParallel is how many batch requests of one write are in
// flight at once: a commit of many file versions is many batches, and
// while one of them is written every other writer of the project waits.
// 8 stored 1.07x the chunks a second of 4 to 200k, side by side
// (docs/bench/loading.md).
const DefaultBatchParallel = 8

// SetBatchParallel sets how many batch requests one write sends at once
// (at least 1). The objects of one write are distinct, and a commit's are
// invisible until it is published, so their order does not matter.
func (w *Writer) SetBatchParallel(n int) { w.batchParallel = max(n, 1) }
