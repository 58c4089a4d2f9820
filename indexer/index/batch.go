package index

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/schema"
)

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
