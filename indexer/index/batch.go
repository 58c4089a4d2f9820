package index

import (
	"context"
	"fmt"

	"github.com/weaviate/weaviate/entities/models"
)

// batchSize bounds one batch request to Weaviate.
const batchSize = 200

// DefaultBatchParallel is how many batch requests of one write are in
// flight at once: a commit of many file versions is many batches, and
// while one of them is written every other writer of the project waits.
const DefaultBatchParallel = 4

// SetBatchParallel sets how many batch requests one write sends at once
// (at least 1). The objects of one write are distinct, and a commit's are
// invisible until it is published, so their order does not matter.
func (w *Writer) SetBatchParallel(n int) { w.batchParallel = max(n, 1) }

// batch writes objs in requests of batchSize, up to w.batchParallel at
// once, and returns the first failure. Objects written before a failure
// stay: a commit's are rolled back by the next commit (recover), the rest
// are upserts that a retry writes again.
func (w *Writer) batch(ctx context.Context, objs []*models.Object) error {
	var parts [][]*models.Object
	for start := 0; start < len(objs); start += batchSize {
		parts = append(parts, objs[start:min(start+batchSize, len(objs))])
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	inParallel(len(parts), w.batchParallel, func(i int) {
		if ctx.Err() != nil {
			return // an earlier batch failed
		}
		if err := w.writeBatch(ctx, parts[i]); err != nil {
			cancel(err)
		}
	})
	return context.Cause(ctx)
}

// writeBatch writes one batch request.
func (w *Writer) writeBatch(ctx context.Context, objs []*models.Object) error {
	// ALL: every replica holds an object before its commit is published,
	// so readers may ask any one replica (queryd reads with ONE).
	resp, err := w.wv.Batch().ObjectsBatcher().WithConsistencyLevel("ALL").WithObjects(objs...).Do(ctx)
	if err != nil {
		return fmt.Errorf("batch of %d objects: %w", len(objs), err)
	}
	for _, r := range resp {
		if r.Result != nil && r.Result.Errors != nil && len(r.Result.Errors.Error) > 0 {
			return fmt.Errorf("batch object %s: %s", r.ID, r.Result.Errors.Error[0].Message)
		}
	}
	return nil
}
