package index

// The layer of a commit that reads and writes Weaviate: the project's
// tenant, a file's Document (its current state, which every decision
// about an event of the file starts from) and any object by id, the
// filtered count of a version's chunks, batch writes (a full disk's
// read-only shards are set ready again, readonly.go), the roll-back of an
// unpublished commit and of a torn version, and the ProjectState mirror of
// the published sequence. The commit (commit.go) calls it and comes back;
// it keeps no state in NATS KV (state_kv.go).
//
// A torn version is one that a roll-back's filtered delete misses.
// Weaviate keeps one write-ahead log per bucket (the objects, each
// inverted index) and flushes them once per batch request, so a
// weaviate-server killed inside a batch may come back with an object
// whose index entries are missing. Such an object escapes a roll-back (a
// filtered delete), and once a later commit publishes its sequence, its
// file looks committed when its Version is read by id while readers, who
// filter, find none of its chunks. decide checks for that (chunksFound),
// and the version is committed again after its objects are deleted by id
// (an upsert of an unchanged value does not restore a missing index
// entry).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

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
	format        string
	// labels are who may read the file and its metadata as the document records them (labels.go).
	labels labels
}

// document reads the Document of fileID (exists is false while it has none).
func (w *Writer) document(ctx context.Context, project, fileID string) (current, error) {
	props, err := w.object(ctx, schema.DocumentClass, project, fileID)
	if err != nil || props == nil {
		return current{}, err
	}
	return current{exists: true, deleted: props["deleted"] == true, sequencer: wvquery.Str(props, "sequencer"),
		fileVersionID: wvquery.Str(props, "file_version_id"), commitSeq: int64(wvquery.Float(props, "commit_seq")), format: wvquery.Str(props, "format"),
		labels: labelsOfProps(props)}, nil
}

// object reads one object of class by id: nil, and no error, when there is
// none.
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

// chunksFound reports whether a filtered read finds all want chunks of a
// file version.
func (w *Writer) chunksFound(ctx context.Context, project, fileVersionID string, want int) (bool, error) {
	if want <= 0 {
		return true, nil
	}
	resp, err := w.wv.GraphQL().Get().WithClassName(schema.ChunkClass).WithTenant(project).WithLimit(want).
		WithWhere(textFilter("file_version_id", fileVersionID)).WithFields(graphql.Field{Name: "index"}).Do(ctx)
	if err != nil {
		return false, fmt.Errorf("count chunks of %s: %w", fileVersionID, err)
	}
	if len(resp.Errors) > 0 {
		return false, fmt.Errorf("count chunks of %s: %s", fileVersionID, resp.Errors[0].Message)
	}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.ChunkClass].([]any)
	return len(rows) >= want, nil
}

// batchSize bounds one batch request to Weaviate; minBatchSpread is the
// smallest request a write of several is split into (batchParts).
const (
	batchSize      = 200
	minBatchSpread = 50
)

// batch writes objs in requests of at most batchSize (batchParts), up to
// w.batchParallel at once, and returns the first failure. Objects written before a failure
// stay: a commit's are rolled back by the next commit (recover), the rest
// are upserts that a retry writes again.
//
// Every request is an upsert of objects with fixed ids and contents, so it
// may be sent again (schema.Idempotent): each attempt has its own deadline
// (-weaviate-write-timeout), and an attempt held past it, or refused
// because Weaviate lost its Raft leader, is sent again to the next node.
func (w *Writer) batch(ctx context.Context, objs []*models.Object) error {
	parts := batchParts(objs, w.batchParallel)
	ctx, cancel := context.WithCancelCause(schema.Idempotent(ctx))
	defer cancel(nil)
	var first error
	var once sync.Once
	inParallel(len(parts), w.batchParallel, func(i int) {
		if ctx.Err() != nil {
			return // an earlier batch failed
		}
		if err := w.writeBatch(ctx, parts[i]); err != nil {
			once.Do(func() { first = err }) // kept when the caller's deadline ends the rest
			cancel(err)
		}
	})
	if first != nil {
		w.afterFullDisk(ctx, objs, first)
		return first
	}
	return context.Cause(ctx)
}

// batchParts splits objs into requests of at most batchSize. A write too
// large for one request is split evenly into a whole number of rounds of
// parallel requests (none under minBatchSpread objects): 900 objects with
// 4 at once go as 8 requests of 112 or 113, not 4 of 200 and then 100 alone,
// while Weaviate's other cores and every other writer of the project wait
// (docs/bench/loading.md).
func batchParts(objs []*models.Object, parallel int) [][]*models.Object {
	n := len(objs)
	if n == 0 {
		return nil
	}
	k := (n + batchSize - 1) / batchSize
	if k > 1 {
		rounds := (k + parallel - 1) / parallel
		k = max(k, min(rounds*parallel, n/minBatchSpread))
	}
	parts := make([][]*models.Object, k)
	for i := range k {
		parts[i] = objs[i*n/k : (i+1)*n/k]
	}
	return parts
}

const (
	// leaderRetries bounds how often the objects of one batch request that
	// Weaviate refused because its Raft leader was lost are sent again.
	leaderRetries = 8
	// leaderPause is the first pause before they are (doubling up to
	// leaderPauseMax): a new leader is elected in 1-3 s (docs/bench/weaviate-failover.md).
	leaderPause    = 100 * time.Millisecond
	leaderPauseMax = 1500 * time.Millisecond
)

// writeBatch writes one batch request. A batch answers 200 with an error
// per object whose tenant Weaviate could not check with the Raft leader
// (adapters/repos/db/index.go putObjectBatch resolves each object's shard
// with the leader), or whose shard was read-only while another writer
// updated the collection (schema.ClassUpdating): those objects, and only
// those, are sent again once the leader may be back or the update done.
func (w *Writer) writeBatch(ctx context.Context, objs []*models.Object) error {
	pause := leaderPause
	for attempt := 0; ; attempt++ {
		again, err := w.writeBatchOnce(ctx, objs)
		if len(again) == 0 || attempt == leaderRetries {
			return err // nil, a failure, or the last refusal
		}
		select {
		case <-time.After(pause):
			pause = min(2*pause, leaderPauseMax)
		case <-ctx.Done():
			return fmt.Errorf("%w (then: %w)", err, context.Cause(ctx))
		}
		objs = again
	}
}

// writeBatchOnce sends one batch request and returns the objects refused
// because the Raft leader was lost or the collection was being updated (to
// send again) with the first refusal,
// or no objects and the first other failure.
func (w *Writer) writeBatchOnce(ctx context.Context, objs []*models.Object) (again []*models.Object, err error) {
	// ALL: every replica holds an object before its commit is published,
	// so readers may ask any one replica (queryd reads with ONE).
	if err := sendable(ctx); err != nil {
		return nil, err
	}
	resp, err := w.wv.Batch().ObjectsBatcher().WithConsistencyLevel("ALL").WithObjects(objs...).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("batch of %d objects: %w", len(objs), err)
	}
	var refused error
	for i, r := range resp {
		if r.Result == nil || r.Result.Errors == nil || len(r.Result.Errors.Error) == 0 {
			continue
		}
		msg := r.Result.Errors.Error[0].Message
		if !(schema.LeaderLost(msg) || schema.ClassUpdating(msg)) || len(resp) != len(objs) {
			return nil, fmt.Errorf("batch object %s: %s", r.ID, msg)
		}
		again = append(again, objs[i])
		if refused == nil {
			refused = fmt.Errorf("batch object %s: %s", r.ID, msg)
		}
	}
	return again, refused
}

var versioned = []string{schema.ChunkClass, schema.SectionClass, schema.VersionClass}

// rollback removes the objects of a commit that was never published (a
// crash between writing and publishing); they are invisible until then.
func (w *Writer) rollback(ctx context.Context, project string, watermark int64) error {
	for _, class := range versioned {
		if err := w.deleteWhere(ctx, class, project, intFilter("valid_from", filters.GreaterThan, watermark)); err != nil {
			return fmt.Errorf("roll back unpublished %s: %w", class, err)
		}
	}
	return nil
}

// deleteWhere deletes every object of class in project's tenant that where
// matches. One batch delete deletes at most Weaviate's
// QUERY_MAXIMUM_RESULTS (10,000 by default), so it is sent again while it
// matched that many: a roll-back of a commit of more chunks than that left
// the rest behind.
func (w *Writer) deleteWhere(ctx context.Context, class, project string, where *filters.WhereBuilder) error {
	for {
		resp, err := w.wv.Batch().ObjectsBatchDeleter().WithClassName(class).WithTenant(project).WithOutput("minimal").
			WithWhere(where).Do(ctx)
		if err != nil {
			return err
		}
		if resp == nil || resp.Results == nil {
			return nil
		}
		r := resp.Results
		if r.Failed > 0 {
			return fmt.Errorf("%d of %d %s objects not deleted", r.Failed, r.Matches, class)
		}
		if r.Limit <= 0 || r.Matches < r.Limit || r.Successful == 0 {
			return nil
		}
	}
}

// deleteVersionObjects deletes fv's sections, chunks and Version by id.
func (w *Writer) deleteVersionObjects(ctx context.Context, fv pipeline.FileVersion) error {
	for _, o := range versionObjectKeys(fv) {
		err := w.wv.Data().Deleter().WithClassName(o.Class).WithID(string(o.ID)).WithTenant(o.Tenant).Do(ctx)
		var ce *fault.WeaviateClientError
		if err != nil && !(errors.As(err, &ce) && ce.StatusCode == 404) {
			return fmt.Errorf("delete %s %s of a torn version: %w", o.Class, o.ID, err)
		}
	}
	return nil
}

func (w *Writer) mirror(ctx context.Context, project string, seq int64) error {
	return w.batch(ctx, []*models.Object{{Class: schema.ProjectStateClass, ID: strfmt.UUID(ids.Project(project)), Tenant: project,
		Properties: map[string]any{"sequence": seq, "updated_at": w.now().UTC().Format(time.RFC3339Nano)}}})
}

// sendable refuses a write whose commit lease may have passed
// (schema.HeldUntil). The REST transport checks every attempt itself; a
// batch may go by gRPC, which it does not carry, so the batch checks here.
func sendable(ctx context.Context) error {
	if schema.LeasePassed(ctx) {
		return schema.ErrLeasePassed
	}
	return nil
}
