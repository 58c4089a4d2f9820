package index

// Undoing the objects of a commit that did not complete. Objects are
// written before their sequence is published and are invisible until
// then, so those of an unpublished commit are deleted by their valid_from.
//
// A torn version is one that such a filtered delete misses. Weaviate keeps
// one write-ahead log per bucket (the objects, each inverted index) and
// flushes them once per batch request, so a weaviate-server killed inside
// a batch may come back with an object whose index entries are missing.
// Such an object escapes a roll-back (a filtered delete), and once a later
// commit publishes its sequence, its file looks committed when its Version
// is read by id while readers, who filter, find none of its chunks. decide
// checks for that (chunksFound), and the version is committed again after
// its objects are deleted by id (an upsert of an unchanged value does not
// restore a missing index entry).

import (
	"context"
	"errors"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

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
