package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// Catalog follows the published commits of every project and keeps each
// project's committed versions in memory, so the watermark, the project list,
// a file's visible version as of any covered sequence and the project's
// counts cost no Weaviate round trip.
//
// It is fed by events, never by time: the indexer publishes each commit's
// sequence to the strata_commits KV bucket, the catalog watches that bucket
// and, for each new sequence, loads the Versions committed since the last one
// (one query) before it advances the project's watermark. A reader therefore
// never gets a sequence whose versions the catalog lacks. Committed Versions
// are immutable, so what was loaded stays true.
type Catalog struct {
	load  func(ctx context.Context, project string, from, to int64) ([]Version, error)
	log   *slog.Logger
	mu    sync.RWMutex
	byKey map[string]*projectCatalog
	// marks: project -> model -> file versions whose vectors are written.
	marks map[string]map[string]map[string]bool
	ready atomic.Bool // both buckets' initial values are loaded
	// marksReady: the embedded bucket's initial values are loaded.
	marksReady atomic.Bool
	loaded     atomic.Bool // Ready has been true once (Loaded)
	// relabels: project -> file id -> the access change being applied to
	// it (relabels.go); relabelCount counts them, so reads skip the lock
	// while there are none.
	relabels     map[string]map[string]pipeline.Relabel
	relabelCount atomic.Int64
}

// projectCatalog is one project's committed versions up to seq.
type projectCatalog struct {
	seq     int64
	files   map[string][]Version // file id -> its versions, oldest first
	visible map[string]Version   // file version id -> its version, while visible at seq
	stats   Stats                // of the visible versions at seq
	// embedded counts, per model, the chunks of visible indexed versions
	// that have that model's vectors.
	embedded map[string]int
	docs     docIndex // live documents by path, name, folder and failure
	chunks   chunkIndex
	// relabels are the project's access changes being applied (the
	// Catalog's map of the project, shared).
	relabels map[string]pipeline.Relabel
}

func newProjectCatalog() *projectCatalog {
	return &projectCatalog{files: map[string][]Version{}, visible: map[string]Version{}, embedded: map[string]int{}, docs: newDocIndex(), chunks: newChunkIndex()}
}

// versionPage bounds one load query (Weaviate's default result limit is 10,000).
const versionPage = 5000

// NewCatalog returns a catalog that loads versions from s; Watch feeds it.
func NewCatalog(s *Store, log *slog.Logger) *Catalog {
	return &Catalog{load: s.committedAll, log: log, byKey: map[string]*projectCatalog{}, marks: map[string]map[string]map[string]bool{},
		relabels: map[string]map[string]pipeline.Relabel{}}
}

// Watch follows the commits bucket until ctx ends. The bucket is created by
// the indexer: until it exists Watch waits, and the Store reads Weaviate.
// While the watch is down (it restarts by itself) the catalog is not ready
// and the Store reads Weaviate again.
func (c *Catalog) Watch(ctx context.Context, js jetstream.JetStream) error {
	marksDone, relabelsDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(marksDone); c.watchMarks(ctx, js) }()
	go func() { defer close(relabelsDone); c.watchRelabels(ctx, js) }()
	defer func() { <-marksDone; <-relabelsDone }()
	for {
		err := c.watchOnce(ctx, js)
		c.ready.Store(false)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.log.Warn("catalog watch restarts", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (c *Catalog) watchOnce(ctx context.Context, js jetstream.JetStream) error {
	kv, err := awaitBucket(ctx, js, pipeline.CommitsBucket)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", pipeline.CommitsBucket, err)
	}
	defer w.Stop()
	pending := map[string]int64{}
	initialDone := false
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-retry.C:
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("watch %s: closed", pipeline.CommitsBucket)
			}
			initialDone = c.note(pending, e) || initialDone
			// Coalesce a burst of commits into one load per project.
			for drained := false; !drained; {
				select {
				case e2, ok := <-w.Updates():
					if !ok {
						return fmt.Errorf("watch %s: closed", pipeline.CommitsBucket)
					}
					initialDone = c.note(pending, e2) || initialDone
				default:
					drained = true
				}
			}
		}
		if err := c.apply(ctx, pending); err != nil {
			// What failed stays pending; retried soon, or on the next commit.
			c.log.Warn("catalog load", "err", err)
			retry.Reset(500 * time.Millisecond)
		}
		if initialDone && len(pending) == 0 && !c.ready.Load() {
			c.ready.Store(true)
			c.log.Info("catalog ready", "projects", len(c.Projects()))
		}
	}
}

// note records an update in pending; a nil entry marks the end of the
// bucket's initial values.
func (c *Catalog) note(pending map[string]int64, e jetstream.KeyValueEntry) (initialDone bool) {
	if e == nil {
		return true
	}
	if e.Operation() != jetstream.KeyValuePut || len(e.Value()) != 8 {
		return false
	}
	seq := int64(binary.BigEndian.Uint64(e.Value()))
	if seq > pending[e.Key()] {
		pending[e.Key()] = seq
	}
	return false
}

// apply loads every pending project's new versions and advances it.
func (c *Catalog) apply(ctx context.Context, pending map[string]int64) error {
	var errs []error
	for project, to := range pending {
		c.mu.RLock()
		pc := c.byKey[project]
		c.mu.RUnlock()
		from := int64(0)
		if pc != nil {
			from = pc.seq
		}
		if to <= from {
			delete(pending, project)
			continue
		}
		vs, err := c.load(access.System(ctx), project, from, to)
		if err != nil {
			errs = append(errs, fmt.Errorf("load versions of %s in (%d, %d]: %w", project, from, to, err))
			continue
		}
		c.mu.Lock()
		if c.byKey[project] == nil {
			c.byKey[project] = newProjectCatalog()
			c.byKey[project].relabels = c.relabels[project]
		}
		c.byKey[project].add(vs, to, c.marks[project])
		c.mu.Unlock()
		delete(pending, project)
	}
	return errors.Join(errs...)
}

// add appends versions (in commit order) and advances the watermark to seq;
// marks are the project's embedded marks.
func (pc *projectCatalog) add(vs []Version, seq int64, marks map[string]map[string]bool) {
	for _, v := range vs {
		list := pc.files[v.FileID]
		if n := len(list); n > 0 {
			if list[n-1].ValidFrom >= v.ValidFrom {
				continue // loaded already
			}
			pc.show(list[n-1], -1, marks)
		}
		pc.files[v.FileID] = append(list, v)
		pc.chunks.add(v)
		pc.show(v, 1, marks)
	}
	pc.seq = seq
}

// show makes v visible (sign 1) or hides it (-1), with its share of the counts.
func (pc *projectCatalog) show(v Version, sign int, marks map[string]map[string]bool) {
	pc.stats.count(v, sign)
	if sign > 0 {
		pc.visible[v.FileVersionID] = v
	} else {
		delete(pc.visible, v.FileVersionID)
	}
	if !v.Deleted {
		if sign > 0 {
			pc.docs.add(v)
		} else {
			pc.docs.remove(v)
		}
	}
	if v.Deleted || v.Status != pipeline.StatusIndexed {
		return
	}
	for model, versions := range marks {
		if versions[v.FileVersionID] {
			pc.embedded[model] += sign * v.ChunkCount
		}
	}
}

// count adds (sign 1) or removes (-1) a visible version's share of the counts.
func (st *Stats) count(v Version, sign int) {
	if v.Deleted {
		return
	}
	switch v.Status {
	case pipeline.StatusIndexed:
		st.Indexed += sign
		st.Chunks += sign * v.ChunkCount
	case pipeline.StatusFailed:
		st.Failed += sign
	case pipeline.StatusUnsupported:
		st.Unsupported += sign
	}
}

// Ready reports whether the catalog holds every project's published state
// and every embedded mark.
func (c *Catalog) Ready() bool { return c != nil && c.ready.Load() && c.marksReady.Load() }

// Loaded reports whether the catalog has been Ready once. A replica
// reports ready to its load balancer only then: before, every call reads
// Weaviate for what the catalog would answer from memory, while the
// catalog's own first load queries Weaviate too. A watch that restarts
// later does not take it back: reads then go to Weaviate for a moment,
// and a cluster whose NATS node fails would otherwise lose every replica
// at once.
func (c *Catalog) Loaded() bool {
	if c.loaded.Load() {
		return true
	}
	if c.Ready() {
		c.loaded.Store(true)
		return true
	}
	return false
}

// Embedded returns how many chunks of project's visible indexed versions
// that the caller in ctx may read have vectors of model.
func (c *Catalog) Embedded(ctx context.Context, project, model string) (int, bool) {
	if !c.marksReady.Load() {
		return 0, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	pc := c.byKey[project]
	if pc == nil {
		return 0, false
	}
	if access.GrantFrom(ctx).Admin {
		return pc.embedded[model], true
	}
	n, marked := 0, c.marks[project][model]
	for _, list := range pc.files {
		v := list[len(list)-1]
		if !v.Deleted && v.Status == pipeline.StatusIndexed && marked[v.FileVersionID] && pc.readable(ctx, v) {
			n += v.ChunkCount
		}
	}
	return n, true
}

// Projects lists the projects with a published commit.
func (c *Catalog) Projects() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.byKey))
	for p := range c.byKey {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Watermark returns project's published sequence; ok is false when the
// catalog does not know the project.
func (c *Catalog) Watermark(project string) (seq int64, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	pc := c.byKey[project]
	if pc == nil {
		return 0, false
	}
	return pc.seq, true
}

// Stats returns project's counts at its watermark, of the documents the
// caller in ctx may read: kept up to date for admins, counted for others.
func (c *Catalog) Stats(ctx context.Context, project string) (Stats, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	pc := c.byKey[project]
	if pc == nil {
		return Stats{}, false
	}
	if access.GrantFrom(ctx).Admin {
		return pc.stats, true
	}
	var st Stats
	for _, list := range pc.files {
		if v := list[len(list)-1]; pc.readable(ctx, v) {
			st.count(v, 1)
		}
	}
	return st, true
}

// covers reports whether reads of project as of at can be answered here:
// what the catalog holds of a project is complete up to its sequence and
// never changes, so this does not wait for Ready (which is about the list
// of projects and the embedded marks).
func (c *Catalog) covers(project string, at int64) bool {
	if c == nil {
		return false
	}
	seq, ok := c.Watermark(project)
	return ok && at <= seq
}

// visibleAt returns fileID's visible version as of at, or nil, also when
// the caller in ctx may not read the file (its latest readers decide, for
// every sequence).
func (c *Catalog) visibleAt(ctx context.Context, project, fileID string, at int64) *Version {
	c.mu.RLock()
	defer c.mu.RUnlock()
	pc := c.byKey[project]
	if pc == nil {
		return nil
	}
	list := pc.files[fileID]
	i := sort.Search(len(list), func(i int) bool { return list[i].ValidFrom > at })
	if i == 0 || !pc.readable(ctx, list[len(list)-1]) {
		return nil
	}
	v := list[i-1]
	return &v
}

// CurrentVersions lists project's visible versions at its watermark that
// match keep, sorted by path then branch.
func (c *Catalog) CurrentVersions(project string, keep func(Version) bool) []Version {
	c.mu.RLock()
	pc := c.byKey[project]
	var out []Version
	if pc != nil {
		for _, list := range pc.files {
			if v := list[len(list)-1]; keep(v) {
				out = append(out, v)
			}
		}
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b Version) int {
		if a.FilePath != b.FilePath {
			if a.FilePath < b.FilePath {
				return -1
			}
			return 1
		}
		if a.Branch < b.Branch {
			return -1
		}
		if a.Branch > b.Branch {
			return 1
		}
		return 0
	})
	return out
}

// committedAll returns every Version of project committed in (from, to],
// oldest first, paging through as many queries as it takes.
func (s *Store) committedAll(ctx context.Context, project string, from, to int64) ([]Version, error) {
	return pageByValidFrom(from, versionPage, func(after int64) ([]Version, error) {
		rows, err := s.get(ctx, schema.VersionClass, project, catalogVersionFields, wvquery.And(intLE("valid_from", to),
			filters.Where().WithPath([]string{"valid_from"}).WithOperator(filters.GreaterThan).WithValueInt(after)), func(g *graphql.GetBuilder) *graphql.GetBuilder {
			return g.
				WithSort(graphql.Sort{Path: []string{"valid_from"}, Order: graphql.Asc}).WithLimit(versionPage)
		})
		if err != nil {
			return nil, err
		}
		out := make([]Version, 0, len(rows))
		for _, r := range rows {
			v := version(r)
			v.ChunkCount = wvquery.Int(r, "chunk_count")
			v.Format, v.CommittedAt, v.IngestedAt = wvquery.Str(r, "format"), wvquery.Str(r, "committed_at"), wvquery.Str(r, "ingested_at")
			v.Metadata, v.MetadataWarnings = metadataOf(r)
			out = append(out, v)
		}
		return out, nil
	})
}

// pageByValidFrom reads every Version after from through fetch, which
// returns at most page Versions with valid_from after its argument, oldest
// first. A group commit writes many Versions at one sequence, so a full
// page can end inside a sequence: its last sequence is dropped from the
// page and read whole by the next (a page cursor at the last valid_from
// would skip the rest of that sequence). A sequence of more Versions than a
// page (or as many) cannot be paged so, and is an error rather than a
// loss; a group commit holds at most 64 files, a page 5,000.
func pageByValidFrom(from int64, page int, fetch func(after int64) ([]Version, error)) ([]Version, error) {
	var out []Version
	for {
		rows, err := fetch(from)
		if err != nil {
			return nil, err
		}
		if len(rows) < page {
			return append(out, rows...), nil
		}
		last := rows[len(rows)-1].ValidFrom
		keep := len(rows)
		for keep > 0 && rows[keep-1].ValidFrom == last {
			keep--
		}
		if keep == 0 {
			return nil, fmt.Errorf("a page of %d versions all committed at sequence %d: a sequence must hold fewer than a page of the catalog's load", page, last)
		}
		out = append(out, rows[:keep]...)
		from = rows[keep-1].ValidFrom // the next page starts at last, whole
	}
}

var catalogVersionFields = append(slices.Clone(versionFields), graphql.Field{Name: "chunk_count"},
	graphql.Field{Name: "format"}, graphql.Field{Name: "committed_at"}, graphql.Field{Name: "ingested_at"},
	graphql.Field{Name: schema.MetadataProperty}, graphql.Field{Name: schema.MetadataWarningsProperty})

// awaitBucket opens a KV bucket the indexer creates, waiting while it does
// not exist yet (queryd may start first).
func awaitBucket(ctx context.Context, js jetstream.JetStream, bucket string) (jetstream.KeyValue, error) {
	for {
		kv, err := js.KeyValue(ctx, bucket)
		if err == nil {
			return kv, nil
		}
		if !errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, fmt.Errorf("open %s: %w", bucket, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// followBucket passes every update of bucket to note until ctx ends (nil
// marks the end of the bucket's initial values). When the watch breaks,
// broken is called and the watch starts again a second later, from the
// bucket's current values.
func (c *Catalog) followBucket(ctx context.Context, js jetstream.JetStream, bucket string, note func(jetstream.KeyValueEntry), broken func()) {
	for {
		err := c.followBucketOnce(ctx, js, bucket, note)
		broken()
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("watch restarts", "bucket", bucket, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (c *Catalog) followBucketOnce(ctx context.Context, js jetstream.JetStream, bucket string, note func(jetstream.KeyValueEntry)) error {
	kv, err := awaitBucket(ctx, js, bucket)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", bucket, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("watch %s: closed", bucket)
			}
			note(e)
		}
	}
}
