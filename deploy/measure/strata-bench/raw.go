package main

// The raw write path (-load-path batch): the objects the indexer's commits
// and vectors write (index.CommitObjects, index.VectorObjects), in batches
// as the indexer sends them, but none of the commit protocol: no lock, no
// watermark, no outcome decision, no object state. It measures Weaviate's
// own cost of a commit's writes beside the commit path's. Readers never see
// what it writes (valid_from 1, and no watermark is published); never point
// it at an index readers share.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"
	"golang.org/x/sync/errgroup"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/indexer/index"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
)

// rawBatchSize is the indexer's batch size (batchSize, indexer/index/store_weaviate.go).
const rawBatchSize = 200

// rawWriter writes files by the raw write path.
type rawWriter struct {
	wv       *weaviate.Client
	parallel int // batch requests in flight at once, as -batch-parallel sets the indexer's
	// mu is held while a tenant or the vector space is made sure of, so no
	// vector is written while the collection is being updated (Weaviate
	// refuses writes to a collection meanwhile; the indexer sends them again).
	mu                     sync.Mutex
	tenants, vectorTenants map[string]bool
	vectorModels           map[string]bool
}

// newRawWriter returns a rawWriter writing to the stack's Weaviate, parallel
// batch requests at once.
func newRawWriter(st *localstack.Stack, parallel int) (*rawWriter, error) {
	wv, err := schema.NewClient(st.Servers.WeaviateHost, st.Servers.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		return nil, fmt.Errorf("raw write path: %w", err)
	}
	return newRawWriterTo(wv, parallel), nil
}

func newRawWriterTo(wv *weaviate.Client, parallel int) *rawWriter {
	return &rawWriter{wv: wv, parallel: max(parallel, 1), tenants: map[string]bool{}, vectorTenants: map[string]bool{}, vectorModels: map[string]bool{}}
}

// write writes the objects a commit of fv and then ApplyVectors(v) would
// write (sections, chunks, Version, Document, then the ChunkVectors), or
// nothing when the indexer would refuse v.
func (r *rawWriter) write(ctx context.Context, fv pipeline.FileVersion, v pipeline.Vectors) error {
	vectors, err := index.VectorObjects(v, fv)
	if err != nil {
		return err
	}
	if err := r.ensureTenant(ctx, fv.Object.Project); err != nil {
		return err
	}
	if err := r.batch(ctx, index.CommitObjects(fv, 1, time.Now())); err != nil {
		return fmt.Errorf("write %s without a commit: %w", fv.FileVersionID, err)
	}
	if err := r.ensureVectorSpace(ctx, v.Project, v.Model); err != nil {
		return err
	}
	if err := r.batch(ctx, vectors); err != nil {
		return fmt.Errorf("write vectors of %s without a commit: %w", v.FileVersionID, err)
	}
	return nil
}

// batch writes objs in requests of rawBatchSize, r.parallel at once, each
// held by every replica (ALL) and sent again past its deadline
// (schema.Idempotent), as the indexer writes; an object Weaviate refuses
// fails the write.
func (r *rawWriter) batch(ctx context.Context, objs []*models.Object) error {
	g, ctx := errgroup.WithContext(schema.Idempotent(ctx))
	g.SetLimit(r.parallel)
	for part := range slices.Chunk(objs, rawBatchSize) {
		g.Go(func() error {
			resp, err := r.wv.Batch().ObjectsBatcher().WithConsistencyLevel("ALL").WithObjects(part...).Do(ctx)
			if err != nil {
				return fmt.Errorf("batch of %d objects: %w", len(part), err)
			}
			for _, o := range resp {
				if o.Result != nil && o.Result.Errors != nil && len(o.Result.Errors.Error) > 0 {
					return fmt.Errorf("batch object %s: %s", o.ID, o.Result.Errors.Error[0].Message)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

func (r *rawWriter) ensureTenant(ctx context.Context, project string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tenants[project] {
		return nil
	}
	if err := schema.EnsureTenant(ctx, r.wv, project); err != nil {
		return fmt.Errorf("raw write path: tenant %s: %w", project, err)
	}
	r.tenants[project] = true
	return nil
}

// ensureVectorSpace makes sure of model's named vector (the collection's
// default replication, as the benchmark's index.Writer sets none) and
// project's ChunkVector tenant.
func (r *rawWriter) ensureVectorSpace(ctx context.Context, project, model string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.vectorModels[model] {
		if err := schema.EnsureVectorSpace(ctx, r.wv, model, 0); err != nil {
			return fmt.Errorf("raw write path: vector space of %s: %w", model, err)
		}
		r.vectorModels[model] = true
	}
	if r.vectorTenants[project] {
		return nil
	}
	if err := schema.EnsureTenantIn(ctx, r.wv, project, schema.ChunkVectorClass); err != nil {
		return fmt.Errorf("raw write path: vector tenant %s: %w", project, err)
	}
	r.vectorTenants[project] = true
	return nil
}
