package index

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/worker"
	"github.com/strata-kb/strata/shared/wvquery"
)

// MaxDimensions bounds vectors accepted from the embeddings stream.
const MaxDimensions = 8192

// HandleVectors applies one message of the embeddings stream.
func (w *Writer) HandleVectors(ctx context.Context, msg jetstream.Msg) error {
	v, err := decode[pipeline.Vectors](msg, "vectors")
	if err != nil {
		return err
	}
	return w.ApplyVectors(ctx, v)
}

// ApplyVectors writes a file version's embeddings as ChunkVector objects
// (upserts by chunk and model, so a replay writes the same objects). The
// object is marked embedded once both its chunks are committed and its
// vectors written, whichever comes last (see markEmbedded).
//
// Vectors carry the file's current readers, which the message does not
// know: they are read from the Document before the write and again after
// it. A commit or an access change writes the Document before it looks for
// the file's vectors to set their readers, so either it finds these
// vectors or the read after the write finds its Document and sets them here.
func (w *Writer) ApplyVectors(ctx context.Context, v pipeline.Vectors) error {
	if err := validateVectors(v); err != nil {
		return worker.Permanent(err)
	}
	// Vectors may arrive before the project's first commit created its tenants.
	if err := w.ensureTenant(ctx, v.Project); err != nil {
		return err
	}
	if err := w.ensureVectorSpace(ctx, v.Project, v.Model); err != nil {
		return err
	}
	before, err := w.document(ctx, v.Project, v.FileID)
	if err != nil {
		return err
	}
	var labels *labels
	if before.exists {
		if err := w.prepareMetadata(ctx, &before.labels); err != nil {
			return err
		}
		labels = &before.labels
	}
	if err := w.batch(ctx, vectorObjects(v, labels)); err != nil {
		return fmt.Errorf("write vectors of %s (%s): %w", v.FileVersionID, v.Model, err)
	}
	if w.marks != nil {
		// After the vectors: a mark always means they are there. A crash in
		// between redelivers the message, which writes the mark.
		if err := w.marks.Mark(ctx, pipeline.EmbeddedMark{Project: v.Project, FileVersionID: v.FileVersionID, Model: v.Model, Chunks: len(v.Chunks)}); err != nil {
			return err
		}
	}
	doc, err := w.document(ctx, v.Project, v.FileID)
	if err != nil {
		return err
	}
	if doc.exists && (!before.exists || !doc.labels.same(before.labels)) {
		if err := w.prepareMetadata(ctx, &doc.labels); err != nil {
			return err
		}
		if err := w.merge(ctx, schema.ChunkVectorClass, v.Project, vectorIDs(v), doc.labels.chunkProps(map[string]any{})); err != nil {
			return fmt.Errorf("set readers of vectors of %s (%s): %w", v.FileVersionID, v.Model, err)
		}
	}
	if doc.exists && doc.fileVersionID != v.FileVersionID {
		// Maybe a replaced version's vectors, come after it was closed.
		if err := w.closeLateVectors(ctx, v.Project, v.FileVersionID); err != nil {
			w.log.Warn("replaced version's vectors stay open to searches", "project", v.Project, "file_version_id", v.FileVersionID, "err", err)
		}
	}
	if doc.fileVersionID == v.FileVersionID {
		w.recordState(ctx, v.Object, pipeline.StateEmbedded, "", doc.commitSeq, v.FileVersionID, time.Time{}, pipeline.Access{})
	}
	w.log.Info("vectors applied", "project", v.Project, "path", v.Object.Path, "file_version_id", v.FileVersionID, "model", v.Model, "chunks", len(v.Chunks))
	return nil
}

// markEmbedded records a just-committed file version as embedded when its
// vectors were written before the commit, and gives those vectors the
// readers the commit recorded (they were written with the readers the file
// had then, or none). Between this and ApplyVectors one of the two always
// sees the other's write. An error leaves vectors that may be readable by
// the wrong keys: the caller fails the commit's message, and its
// redelivery, a duplicate, sets them (syncVectorReaders).
func (w *Writer) markEmbedded(ctx context.Context, fv pipeline.FileVersion, a labels, seq int64) error {
	if len(fv.Chunks) == 0 {
		return nil
	}
	found, err := w.hasVectors(ctx, fv.Object.Project, fv.FileVersionID)
	if err != nil {
		return fmt.Errorf("look up vectors of %s: %w", fv.FileVersionID, err)
	}
	if !found {
		return nil
	}
	if err := w.syncVectorReaders(ctx, fv.Object.Project, textFilter("file_version_id", fv.FileVersionID), a); err != nil {
		return fmt.Errorf("set readers of vectors of %s: %w", fv.FileVersionID, err)
	}
	w.recordState(ctx, fv.Object, pipeline.StateEmbedded, "", seq, fv.FileVersionID, fv.ExtractedAt, pipeline.Access{})
	return nil
}

// syncVectorReaders merges a's readers into the ChunkVectors where matches
// whose readers differ. While no vectors were ever written there is nothing to do.
func (w *Writer) syncVectorReaders(ctx context.Context, project string, where *filters.WhereBuilder, a labels) error {
	ready, err := w.vectorsReady(ctx, project)
	if err != nil || !ready {
		return err
	}
	if err := w.prepareMetadata(ctx, &a); err != nil {
		return err
	}
	_, err = w.syncObjects(ctx, schema.ChunkVectorClass, project, where, a.chunkProps(map[string]any{}))
	return err
}

// vectorsReady reports whether the ChunkVector collection exists and, if
// so, makes sure it has the readers property (one added by auto-schema on
// a merge would be word-tokenized: "eng-team" would match "eng") and the
// project's tenant.
func (w *Writer) vectorsReady(ctx context.Context, project string) (bool, error) {
	if !w.vectorClass.Load() { // a collection, once there, stays: ask until it is
		exists, err := w.wv.Schema().ClassExistenceChecker().WithClassName(schema.ChunkVectorClass).Do(ctx)
		if err != nil || !exists {
			return false, err
		}
		w.vectorClass.Store(true)
	}
	if !w.vectorProps.Load() {
		if err := schema.EnsureVectorProperties(ctx, w.wv); err != nil {
			return false, err
		}
		w.vectorProps.Store(true)
	}
	return true, w.ensureVectorTenant(ctx, project)
}

func (w *Writer) hasVectors(ctx context.Context, project, fileVersionID string) (bool, error) {
	if !w.vectorClass.Load() { // a collection, once there, stays: ask until it is
		exists, err := w.wv.Schema().ClassExistenceChecker().WithClassName(schema.ChunkVectorClass).Do(ctx)
		if err != nil || !exists {
			return false, err
		}
		w.vectorClass.Store(true)
	}
	resp, err := w.wv.GraphQL().Get().WithClassName(schema.ChunkVectorClass).WithTenant(project).WithLimit(1).
		WithWhere(textFilter("file_version_id", fileVersionID)).WithFields(graphql.Field{Name: "chunk_id"}).Do(ctx)
	if err != nil {
		return false, err
	}
	if len(resp.Errors) > 0 {
		// Only a project without a vectors tenant has none for certain.
		// Any other error (a node killed mid-read, a quorum not reached)
		// says nothing: taken for "none", a version whose vectors came
		// first would never be recorded embedded (seen under strata-chaos).
		if wvquery.NoTenant(resp.Errors[0].Message) {
			return false, nil
		}
		return false, fmt.Errorf("look up vectors of %s: %s", fileVersionID, resp.Errors[0].Message)
	}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.ChunkVectorClass].([]any)
	return len(rows) > 0, nil
}

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

func validateVectors(v pipeline.Vectors) error {
	switch {
	case v.Model == "":
		return fmt.Errorf("vectors of %s: no model", v.FileVersionID)
	case v.Dimensions < 1 || v.Dimensions > MaxDimensions:
		return fmt.Errorf("vectors of %s: %d dimensions, want 1..%d", v.FileVersionID, v.Dimensions, MaxDimensions)
	case v.Project == "" || v.FileID == "" || v.FileVersionID == "":
		return fmt.Errorf("vectors: project, file_id and file_version_id are required")
	}
	for _, c := range v.Chunks {
		if !ids.Valid(c.ChunkID) {
			return fmt.Errorf("vectors of %s: chunk id %q is not a UUID", v.FileVersionID, c.ChunkID)
		}
		if len(c.Vector) != v.Dimensions {
			return fmt.Errorf("vectors of %s: chunk %s has %d dimensions, model %s has %d", v.FileVersionID, c.ChunkID, len(c.Vector), v.Model, v.Dimensions)
		}
		for _, f := range c.Vector {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return fmt.Errorf("vectors of %s: chunk %s has a non-finite value", v.FileVersionID, c.ChunkID)
			}
		}
	}
	return nil
}
