package index

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/worker"
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
	if never, err := w.neverCommitted(ctx, v, before); err != nil || never {
		if never {
			w.log.Info("vectors of a version superseded before its commit dropped", "project", v.Project, "path", v.Object.Path, "file_version_id", v.FileVersionID, "model", v.Model)
		}
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
	doc, err := w.document(ctx, v.Project, v.FileID)
	if err != nil {
		return err
	}
	// Superseded while they were written: the commit that found the
	// version stale may have looked for its vectors before these were
	// there (dropStaleVectors), so they go here.
	if never, err := w.neverCommitted(ctx, v, doc); err != nil || never {
		if never {
			if err := w.deleteVectorsOf(ctx, v.Project, v.FileVersionID); err != nil {
				return fmt.Errorf("drop vectors of %s, superseded before its commit: %w", v.FileVersionID, err)
			}
			w.log.Info("vectors of a version superseded before its commit dropped", "project", v.Project, "path", v.Object.Path, "file_version_id", v.FileVersionID, "model", v.Model)
		}
		return err
	}
	if w.marks != nil {
		// After the vectors (and the check above, which may drop them): a
		// mark always means they are there. A crash in between redelivers
		// the message, which writes the mark.
		if err := w.marks.Mark(ctx, pipeline.EmbeddedMark{Project: v.Project, FileVersionID: v.FileVersionID, Model: v.Model, Chunks: len(v.Chunks)}); err != nil {
			return err
		}
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

// neverCommitted reports whether v's file version can never be committed:
// doc, the file's Document, holds a newer event, so the version's commit
// is stale (decide), and the version has no Version, so it was not
// committed before that. Its vectors would never be read, and nothing
// else would collect them. A message without its event's sequencer
// (written before vectors carried one) says nothing.
//
// A member (members.go) is judged by its container's Document instead: a
// member's own Document may be ahead of its container's (a crash after the
// members' documents were written, before the container's), and a member
// found stale is committed after all when its container is (decideSets).
// Its event's sequencer is the container's.
func (w *Writer) neverCommitted(ctx context.Context, v pipeline.Vectors, doc current) (bool, error) {
	if container, member := objkey.ContainerOf(v.Object.Path); member {
		var err error
		if doc, err = w.document(ctx, v.Project, ids.File(v.Project, v.Object.Branch, container)); err != nil {
			return false, err
		}
	}
	if !doc.exists || v.Object.Sequencer == "" || pipeline.CompareSequencers(doc.sequencer, v.Object.Sequencer) <= 0 {
		return false, nil
	}
	version, err := w.object(ctx, schema.VersionClass, v.Project, v.FileVersionID)
	return err == nil && version == nil, err
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
