// Package index writes file versions into Weaviate as commits. Each project
// has a commit sequence; a file version (or a delete) is written with
// valid_from = S while S is not yet published, and then S is published as
// the project's watermark. Committed objects are never modified: a file's
// visible version as of sequence W is its Version with the greatest
// valid_from <= W. (Weaviate re-indexes an object on every update, so an
// object being updated can briefly drop out of filtered reads; immutable
// objects cannot.) Readers therefore see a file's old version until the
// switch and only the new one after, never both or none. Every write is an
// upsert by deterministic ID, and the event sequencer on the document keeps
// an older event from undoing a newer one.
package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/terms"
	"github.com/strata-kb/strata/shared/wvquery"
)

// States records object freshness (freshness.Store); nil records nothing.
type States interface {
	Put(ctx context.Context, st pipeline.ObjectState) error
}

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
	// queues hold each project's file versions waiting to commit (group.go).
	queues sync.Map // project -> *commitQueue
	// published counts the commits this writer made visible.
	published atomic.Int64
	maxGroup  int // file versions per commit at most (group.go)
	// batchParallel is how many batch requests one write sends at once (batch.go).
	batchParallel int
	ranges        rangeProperties // metadata range properties known to exist (metadata.go)
}

// CommitLocks serialise a project's commits across indexer processes (Leases).
type CommitLocks interface {
	Acquire(ctx context.Context, project string) (release func(), lost func() bool, err error)
}

// SetReplication sets the replication factor of collections created later
// (ChunkVector, on the first vectors).
func (w *Writer) SetReplication(factor int) { w.replication = factor }

// FreshnessObserver records how long uploads took to become searchable
// (metrics.Freshness).
type FreshnessObserver interface {
	ObserveSearchable(search string, took time.Duration)
}

// SetFreshnessObserver makes the writer report upload-to-searchable times.
func (w *Writer) SetFreshnessObserver(o FreshnessObserver) { w.fresh = o }

// SetCommitLocks makes commits, releases and garbage collection of a
// project exclusive across every indexer sharing locks.
func (w *Writer) SetCommitLocks(l CommitLocks) { w.locks = l }

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

// lock makes the caller the only committer of project: in this process
// (a mutex) and across processes (the commit lease).
func (w *Writer) lock(ctx context.Context, project string) (unlock func(), err error) {
	m, _ := w.projects.LoadOrStore(project, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	if w.locks == nil {
		return mu.Unlock, nil
	}
	release, lost, err := w.locks.Acquire(ctx, project)
	if err != nil {
		mu.Unlock()
		return nil, err
	}
	w.leaseLost.Store(project, lost)
	return func() {
		w.leaseLost.Delete(project)
		release()
		mu.Unlock()
	}, nil
}

func (w *Writer) ensureTenant(ctx context.Context, project string) error {
	if _, ok := w.tenants.Load(project); ok {
		return nil
	}
	if err := schema.EnsureTenant(ctx, w.wv, project); err != nil {
		return err
	}
	w.tenants.Store(project, struct{}{})
	return nil
}

// current is the stored state of a document.
type current struct {
	exists        bool
	deleted       bool
	sequencer     string
	fileVersionID string
	commitSeq     int64
	// labels are who may read the file and its metadata as the document records them (access.go).
	labels labels
}

func (w *Writer) document(ctx context.Context, project, fileID string) (current, error) {
	props, err := w.object(ctx, schema.DocumentClass, project, fileID)
	if err != nil || props == nil {
		return current{}, err
	}
	return current{exists: true, deleted: props["deleted"] == true, sequencer: wvquery.Str(props, "sequencer"),
		fileVersionID: wvquery.Str(props, "file_version_id"), commitSeq: int64(wvquery.Float(props, "commit_seq")), labels: labelsOfProps(props)}, nil
}

func (w *Writer) object(ctx context.Context, class, project, id string) (map[string]any, error) {
	objs, err := w.wv.Data().ObjectsGetter().WithClassName(class).WithID(id).WithTenant(project).Do(ctx)
	if err != nil {
		var ce *fault.WeaviateClientError
		if errors.As(err, &ce) && ce.StatusCode == 404 {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s %s: %w", class, id, err)
	}
	if len(objs) == 0 {
		return nil, nil
	}
	props, _ := objs[0].Properties.(map[string]any)
	return props, nil
}

// Watermark returns the project's published commit sequence (0 before the first commit).
// The authority is the Sequences store; an index written before it existed
// is read from its ProjectState once and then recorded there.
func (w *Writer) Watermark(ctx context.Context, project string) (int64, error) {
	seq, found, err := w.seqs.Get(ctx, project)
	if err != nil || found {
		return seq, err
	}
	props, err := w.object(ctx, schema.ProjectStateClass, project, ids.Project(project))
	if err != nil || props == nil {
		return 0, err
	}
	return int64(wvquery.Float(props, "sequence")), nil
}

// publish makes seq visible: first in the authoritative store, then in the
// ProjectState mirror that queryd reads.
func (w *Writer) publish(ctx context.Context, project string, seq int64) error {
	if w.publishHook != nil {
		return w.publishHook()
	}
	if lost, ok := w.leaseLost.Load(project); ok && lost.(func() bool)() {
		// Another indexer may hold the project now; its next commit rolls this one back.
		return fmt.Errorf("commit lease of %s lost before publishing %d", project, seq)
	}
	if err := w.seqs.Set(ctx, project, seq); err != nil {
		return err
	}
	w.published.Add(1)
	return w.mirror(ctx, project, seq)
}

// Commits is how many commits this writer has made visible: one per
// sequence, which may hold many file versions (group.go).
func (w *Writer) Commits() int64 { return w.published.Load() }

func (w *Writer) mirror(ctx context.Context, project string, seq int64) error {
	return w.batch(ctx, []*models.Object{{Class: schema.ProjectStateClass, ID: strfmt.UUID(ids.Project(project)), Tenant: project,
		Properties: map[string]any{"sequence": seq, "updated_at": w.now().UTC().Format(time.RFC3339Nano)}}})
}

// begin locks the project, undoes what an interrupted commit left behind,
// and returns the next sequence. The caller must call the returned unlock.
func (w *Writer) begin(ctx context.Context, project string) (next int64, unlock func(), err error) {
	if err := w.ensureTenant(ctx, project); err != nil {
		return 0, nil, err
	}
	unlock, err = w.lock(ctx, project)
	if err != nil {
		return 0, nil, err
	}
	wm, err := w.settle(ctx, project)
	if err == nil {
		err = w.intend(ctx, project, wm+1)
	}
	if err != nil {
		unlock()
		return 0, nil, err
	}
	return wm + 1, unlock, nil
}

// settle returns the watermark of project, whose commit lock the caller
// holds, after undoing what an interrupted commit left behind.
func (w *Writer) settle(ctx context.Context, project string) (watermark int64, err error) {
	wm, err := w.Watermark(ctx, project)
	if err != nil {
		return 0, err
	}
	if err := w.recover(ctx, project, wm); err != nil {
		return 0, err
	}
	return wm, nil
}

// intend records that objects of commit seq are about to be written. It
// comes before any of them is: a crash from here on leaves an intent above
// the watermark for the next commit to see.
func (w *Writer) intend(ctx context.Context, project string, seq int64) error {
	return w.seqs.Intend(ctx, project, seq)
}

// recover undoes what an interrupted commit left: objects above the
// watermark and a lost mirror write. It runs on this process's first commit
// of a project and whenever an intent lies above the watermark; otherwise
// the last commit completed and there is nothing to undo.
func (w *Writer) recover(ctx context.Context, project string, wm int64) error {
	intent, err := w.seqs.Intent(ctx, project)
	if err != nil {
		return err
	}
	if _, seen := w.checked.Load(project); seen && intent <= wm {
		return nil
	}
	if err := w.rollback(ctx, project, wm); err != nil {
		return err
	}
	if wm > 0 {
		if err := w.mirror(ctx, project, wm); err != nil { // catches up a mirror write lost in a crash
			return err
		}
	}
	w.checked.Store(project, struct{}{})
	return nil
}

var versioned = []string{schema.ChunkClass, schema.SectionClass, schema.VersionClass}

// rollback removes the objects of a commit that was never published (a
// crash between writing and publishing); they are invisible until then.
func (w *Writer) rollback(ctx context.Context, project string, watermark int64) error {
	for _, class := range versioned {
		if _, err := w.wv.Batch().ObjectsBatchDeleter().WithClassName(class).WithTenant(project).WithOutput("minimal").
			WithWhere(intFilter("valid_from", filters.GreaterThan, watermark)).Do(ctx); err != nil {
			return fmt.Errorf("roll back unpublished %s: %w", class, err)
		}
	}
	return nil
}

// fileDocument is fv's Document, readable by a.
func fileDocument(fv pipeline.FileVersion, a labels, seq int64, now string) *models.Object {
	o := fv.Object
	return &models.Object{Class: schema.DocumentClass, ID: strfmt.UUID(fv.FileID), Tenant: o.Project, Properties: a.documentProps(map[string]any{
		"file_id": fv.FileID, "file_path": o.Path, "name": baseName(o.Path), "folder": folderOf(o.Path), "branch": o.Branch,
		"object_key": o.Key, "etag": o.ETag, "version_id": o.VersionID, "sequencer": o.Sequencer,
		"file_version_id": fv.FileVersionID, "checksum": fv.Checksum, "format": fv.Format, "title": fv.Title,
		"language": fv.Language, "pages": fv.Pages, "warnings": nonNil(fv.Warnings),
		"status": fv.Status, "error": fv.Error, "deleted": false, "size": o.Size, "text_length": fv.TextLength,
		"token_count": fv.TokenCount, "chunk_count": len(fv.Chunks), "section_count": len(fv.Sections),
		"content_type": o.ContentType, "updated_at": now, "ingested_at": fv.IngestedAt.Format(time.RFC3339Nano), "commit_seq": seq,
	})}
}

// headingTerms are the terms a chunk is found by besides its content: its
// document's title and path and its section's headings, less the terms its
// content has already. A title counts once in a chunk that shows it (the
// first one, under its "# Title") and still finds the chunks after it.
func headingTerms(fv pipeline.FileVersion, c pipeline.Chunk) string {
	parts := []string{fv.Object.Path}
	if len(c.HeadingPath) == 0 || c.HeadingPath[0] != fv.Title {
		parts = append(parts, fv.Title)
	}
	parts = append(parts, c.HeadingPath...)
	inContent := map[string]bool{}
	terms.Each(c.Content, func(t string) { inContent[t] = true })
	var b strings.Builder
	terms.Each(strings.Join(parts, "\n"), func(t string) {
		if inContent[t] {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	})
	return b.String()
}

// ApplyDelete commits a file's removal. The document stays as a tombstone
// carrying the delete's sequencer, so a late, older upload event cannot
// resurrect it; a delete Version hides the file from W on (on a branch: main's copy too).
// Both keep the file's last readers (deletedACL).
func (w *Writer) ApplyDelete(ctx context.Context, d pipeline.FileDeleted) (Outcome, error) {
	o := d.Object
	seq, unlock, err := w.begin(ctx, o.Project)
	if err != nil {
		return "", err
	}
	defer unlock()
	deleteID := ids.FileVersion(d.FileID, "delete@"+o.Sequencer, "")
	v, err := w.decide(ctx, o.Project, d.FileID, o.Sequencer, deleteID, seq-1)
	if err != nil || (v.done && v.out != repairDocument) {
		return v.out, err
	}
	a := deletedLabels(v.doc)
	now := w.now().UTC().Format(time.RFC3339Nano)
	objs := []*models.Object{{Class: schema.VersionClass, ID: strfmt.UUID(deleteID), Tenant: o.Project, Properties: a.newVersionProps(map[string]any{
		"file_id": d.FileID, "file_path": o.Path, "branch": o.Branch, "file_version_id": deleteID, "sequencer": o.Sequencer,
		"status": "deleted", "error": "", "deleted": true, "chunk_count": 0, "committed_at": now,
		"valid_from": seq,
	})}, {Class: schema.DocumentClass, ID: strfmt.UUID(d.FileID), Tenant: o.Project, Properties: a.documentProps(map[string]any{
		"file_id": d.FileID, "file_path": o.Path, "name": baseName(o.Path), "folder": folderOf(o.Path), "branch": o.Branch,
		"object_key": o.Key, "sequencer": o.Sequencer, "file_version_id": deleteID, "status": "deleted", "error": "",
		"deleted": true, "chunk_count": 0, "section_count": 0, "updated_at": now, "commit_seq": seq,
	})}}
	if v.done {
		return Duplicate, w.batch(ctx, objs[1:])
	}
	if err := w.batch(ctx, objs[:1]); err != nil {
		return "", fmt.Errorf("write delete of %s: %w", d.FileID, err)
	}
	if err := w.publish(ctx, o.Project, seq); err != nil {
		return "", fmt.Errorf("publish commit %d of %s: %w", seq, o.Project, err)
	}
	if err := w.batch(ctx, objs[1:]); err != nil {
		return "", fmt.Errorf("write tombstone %s: %w", d.FileID, err)
	}
	w.recordState(ctx, o, pipeline.StateDeleted, "", seq, deleteID, time.Time{})
	return Applied, nil
}

// verdict is decide's answer about an event.
type verdict struct {
	out  Outcome
	done bool    // false: apply the event
	doc  current // the file's document as decide read it
}

// decide says whether an event was committed already (its Version exists at
// or below the watermark: Duplicate) or is older than the file's current
// event (Stale). done=false means apply it.
//
// A Duplicate whose document is behind (a crash after publishing, before the
// document was written) is reported as repairDocument.
//
// The Version is looked up by its object id, which is the file_version_id
// of the commit that wrote it; an access change's Version repeats the
// file_version_id under an id of its own (access.go), so it is never taken
// for the file version's commit.
func (w *Writer) decide(ctx context.Context, project, fileID, sequencer, versionID string, watermark int64) (verdict, error) {
	cur, err := w.document(ctx, project, fileID)
	if err != nil {
		return verdict{}, err
	}
	newer := cur.exists && pipeline.CompareSequencers(cur.sequencer, sequencer) > 0
	v, err := w.object(ctx, schema.VersionClass, project, versionID)
	if err != nil {
		return verdict{}, err
	}
	switch {
	case newer:
		return verdict{Stale, true, cur}, nil
	case v != nil && int64(wvquery.Float(v, "valid_from")) <= watermark:
		// Committed, by its Version found by id; readers find chunks by
		// filters, which a weaviate-server killed inside a batch may have
		// left without some objects' index entries (crash_consistency.go).
		if whole, err := w.chunksFound(ctx, project, versionID, int(wvquery.Float(v, "chunk_count"))); err != nil || !whole {
			return verdict{tornVersion, err == nil, cur}, err
		}
		if !cur.exists || cur.fileVersionID != versionID {
			return verdict{repairDocument, true, cur}, nil
		}
		return verdict{Duplicate, true, cur}, nil
	}
	return verdict{doc: cur}, nil
}

// repairDocument is decide's answer for a committed event whose document
// write was lost: rewrite the document, commit nothing.
const repairDocument Outcome = "repair-document"

// tornVersion is decide's answer for a committed version whose chunks a
// filtered read does not all find: delete its objects by id and commit it
// again.
const tornVersion Outcome = "torn-version"

func (w *Writer) recordState(ctx context.Context, o pipeline.Object, state, errText string, seq int64, versionID string, extracted time.Time) {
	now := w.now().UTC()
	stages := pipeline.StageTimes{Uploaded: o.EventTime, Seen: o.SeenAt, Extracted: extracted}
	search := "keyword"
	if state == pipeline.StateEmbedded {
		stages.Embedded, search = now, "vector"
	} else {
		stages.Committed = now
	}
	if w.fresh != nil && state != pipeline.StateFailed && state != pipeline.StateDeleted && !o.EventTime.IsZero() {
		w.fresh.ObserveSearchable(search, now.Sub(o.EventTime))
	}
	if w.states == nil {
		return
	}
	st := pipeline.ObjectState{Key: o.Key, Project: o.Project, ETag: o.ETag, VersionID: o.VersionID, Sequencer: o.Sequencer,
		State: state, Error: errText, Sequence: seq, FileVersionID: versionID, UpdatedAt: now, Stages: stages}
	if err := w.states.Put(ctx, st); err != nil {
		// The commit is done; freshness catches up with the next event of the key.
		w.log.Warn("record freshness", "key", o.Key, "err", err)
	}
}

func textFilter(path, v string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.Equal).WithValueText(v)
}

func intFilter(path string, op filters.WhereOperator, v int64) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(op).WithValueInt(v)
}

func kindOr(k string) string {
	if k == "" {
		return "text"
	}
	return k
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

func folderOf(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}
