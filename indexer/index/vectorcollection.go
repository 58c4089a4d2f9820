package index

// The ChunkVector collection: one per index, a tenant per project, a named
// vector per model, created on first use and remembered once there.

import (
	"context"

	"github.com/strata-kb/strata/shared/schema"
)

// ensureVectorSpace makes sure the collection has model's named vector and
// project's tenant.
func (w *Writer) ensureVectorSpace(ctx context.Context, project, model string) error {
	if _, ok := w.vectorModels.Load(model); !ok {
		if err := schema.EnsureVectorSpace(ctx, w.wv, model, w.replication); err != nil {
			return err
		}
		w.vectorModels.Store(model, struct{}{})
	}
	return w.ensureVectorTenant(ctx, project)
}

// ensureVectorTenant makes sure the ChunkVector collection, which must
// exist, has project's tenant.
func (w *Writer) ensureVectorTenant(ctx context.Context, project string) error {
	if _, ok := w.vectorTenants.Load(project); ok {
		return nil
	}
	if err := schema.EnsureTenantIn(ctx, w.wv, project, schema.ChunkVectorClass); err != nil {
		return err
	}
	w.vectorTenants.Store(project, struct{}{})
	return nil
}

// vectorsReady reports whether the ChunkVector collection exists and, if
// so, makes sure it has the readers property (one added by auto-schema on
// a merge would be word-tokenized: "eng-team" would match "eng") and the
// project's tenant.
func (w *Writer) vectorsReady(ctx context.Context, project string) (bool, error) {
	if exists, err := w.vectorCollectionExists(ctx); err != nil || !exists {
		return false, err
	}
	if !w.vectorProps.Load() {
		if err := schema.EnsureVectorProperties(ctx, w.wv); err != nil {
			return false, err
		}
		w.vectorProps.Store(true)
	}
	return true, w.ensureVectorTenant(ctx, project)
}

// vectorCollectionExists reports whether the ChunkVector collection exists:
// none does until the first vectors were written.
func (w *Writer) vectorCollectionExists(ctx context.Context) (bool, error) {
	if w.vectorClass.Load() { // a collection, once there, stays: ask until it is
		return true, nil
	}
	exists, err := w.wv.Schema().ClassExistenceChecker().WithClassName(schema.ChunkVectorClass).Do(ctx)
	if err != nil || !exists {
		return false, err
	}
	w.vectorClass.Store(true)
	return true, nil
}
