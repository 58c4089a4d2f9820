package index

// Weaviate keeps one write-ahead log per bucket (the objects, each inverted
// index) and flushes them once per batch request, so a weaviate-server
// killed inside a batch may come back with an object whose index entries
// are missing. Such an object escapes a roll-back (a filtered delete), and
// once a later commit publishes its sequence, its file looks committed when
// its Version is read by id while readers, who filter, find none of its
// chunks. decide checks for that, and the version is committed again after
// its objects are deleted by id (an upsert of an unchanged value does not
// restore a missing index entry).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

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

// deleteVersionObjects deletes fv's sections, chunks and Version by id.
func (w *Writer) deleteVersionObjects(ctx context.Context, fv pipeline.FileVersion) error {
	for _, o := range versionObjects(fv, labels{}, 0, time.Now().UTC().Format(time.RFC3339Nano)) {
		err := w.wv.Data().Deleter().WithClassName(o.Class).WithID(string(o.ID)).WithTenant(o.Tenant).Do(ctx)
		var ce *fault.WeaviateClientError
		if err != nil && !(errors.As(err, &ce) && ce.StatusCode == 404) {
			return fmt.Errorf("delete %s %s of a torn version: %w", o.Class, o.ID, err)
		}
	}
	return nil
}
