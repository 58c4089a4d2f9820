package index

// What a commit does about vectors written before it: the embedder may
// finish a file version before the indexer commits it, so a commit looks
// for the version's vectors, records the version embedded and gives the
// vectors the readers the commit recorded (ApplyVectors, in vectors.go,
// does the same from the other side).

import (
	"context"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

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

// hasVectors reports whether any vectors of the file version are written.
func (w *Writer) hasVectors(ctx context.Context, project, fileVersionID string) (bool, error) {
	if exists, err := w.vectorCollectionExists(ctx); err != nil || !exists {
		return false, err
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

// dropStaleVectors deletes the vectors of the versions of group the commit
// found stale and that were never committed (they have no Version): a
// version superseded before its commit never will be, and its vectors,
// written first (the embedder may finish before the indexer), would never
// be read. It runs once the newer versions' documents are written, so
// vectors written after it find them (ApplyVectors drops those). A member
// goes only with its container found stale: a member found stale on its
// own is committed after all when its container is (decideSets), and a
// container that failed is delivered again. A failure fails the stale
// version's message, which finds it stale again.
func (w *Writer) dropStaleVectors(ctx context.Context, project string, group []*pendingVersion) {
	var stale []*pendingVersion
	for _, p := range group {
		c := p
		if p.container != nil {
			c = p.container
		}
		if p.finished && p.err == nil && p.out == Stale && c.finished && c.err == nil && c.out == Stale {
			stale = append(stale, p)
		}
	}
	// A read and a delete each, while every other writer of the project
	// waits: at once, as decide's reads.
	inParallel(len(stale), perFileParallel, func(i int) {
		p := stale[i]
		version, err := w.object(ctx, schema.VersionClass, project, p.fv.FileVersionID)
		if err == nil && version == nil {
			err = w.deleteVectorsOf(ctx, project, p.fv.FileVersionID)
		}
		if err != nil {
			p.conclude("", fmt.Errorf("drop vectors of %s, superseded before its commit: %w", p.fv.FileVersionID, err))
		}
	})
}

// deleteVectorsOf deletes the vectors of a file version, of every model.
func (w *Writer) deleteVectorsOf(ctx context.Context, project, fileVersionID string) error {
	ready, err := w.vectorsReady(ctx, project)
	if err != nil || !ready {
		return err
	}
	return w.deleteWhere(ctx, schema.ChunkVectorClass, project, textFilter("file_version_id", fileVersionID))
}
