package index

// The end of a replaced version's validity: once a commit has made a
// file's new version (or its delete) visible at seq, the rows of its
// earlier versions get valid_to = seq (schema.ValidToProperty), so that
// searches leave them out inside Weaviate instead of ranking a file's every
// version until garbage collection removes them. Readers still check each
// row's version, so a row closed late, or never (a crash between publish
// and this step), is only searched for nothing; one is never closed early:
// only rows below seq of the same file are closed, and vectors only of the
// versions those rows belong to (a newer version's vectors may be written
// before its commit).

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// closeReplaced sets valid_to = seq on fileID's chunks below seq, and on
// their versions' vectors, that do not have it yet.
func (w *Writer) closeReplaced(ctx context.Context, project, fileID string, seq int64) error {
	props := map[string]any{schema.ValidToProperty: seq}
	open := wvquery.And(textFilter("file_id", fileID), intFilter("valid_from", filters.LessThan, seq), schema.NotReplaced(seq))
	versions := map[string]bool{}
	err := w.eachPage(ctx, schema.ChunkClass, project, open, []graphql.Field{{Name: "file_version_id"}}, func(rows []map[string]any) error {
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = objectID(r)
			versions[wvquery.Str(r, "file_version_id")] = true
		}
		return w.merge(ctx, schema.ChunkClass, project, ids, props)
	})
	if err != nil || len(versions) == 0 {
		return err
	}
	return w.closeVectors(ctx, project, slices.Sorted(maps.Keys(versions)), seq)
}

// closeReplacedOrWarn is closeReplaced after a published commit, where a
// failure costs searches time, not answers: it is logged, not returned.
func (w *Writer) closeReplacedOrWarn(ctx context.Context, project, fileID string, seq int64) {
	if err := w.closeReplaced(ctx, project, fileID, seq); err != nil {
		w.log.Warn("replaced versions stay open to searches", "project", project, "file_id", fileID, "seq", seq, "err", err)
	}
}

// closeVectors sets valid_to = seq on the vectors of the given replaced
// file versions that do not have it yet.
func (w *Writer) closeVectors(ctx context.Context, project string, fileVersionIDs []string, seq int64) error {
	ready, err := w.vectorsReady(ctx, project)
	if err != nil || !ready {
		return err
	}
	where := wvquery.And(filters.Where().WithPath([]string{"file_version_id"}).WithOperator(filters.ContainsAny).WithValueText(fileVersionIDs...),
		schema.NotReplaced(seq))
	return w.eachPage(ctx, schema.ChunkVectorClass, project, where, nil, func(rows []map[string]any) error {
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = objectID(r)
		}
		return w.merge(ctx, schema.ChunkVectorClass, project, ids, map[string]any{schema.ValidToProperty: seq})
	})
}

// closeLateVectors gives vectors written after their version was replaced
// the valid_to its chunks got: closeReplaced closes chunks before vectors,
// and this reads the chunks after the vectors were written, so one of the
// two sees the other's write.
func (w *Writer) closeLateVectors(ctx context.Context, project, fileVersionID string) error {
	resp, err := w.wv.GraphQL().Get().WithClassName(schema.ChunkClass).WithTenant(project).WithLimit(1).
		WithWhere(wvquery.And(textFilter("file_version_id", fileVersionID),
			intFilter(schema.ValidToProperty, filters.GreaterThan, 0))).
		WithFields(graphql.Field{Name: schema.ValidToProperty}).Do(ctx)
	if err != nil {
		return fmt.Errorf("read valid_to of %s: %w", fileVersionID, err)
	}
	if len(resp.Errors) > 0 {
		return fmt.Errorf("read valid_to of %s: %s", fileVersionID, resp.Errors[0].Message)
	}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.ChunkClass].([]any)
	if len(rows) == 0 {
		return nil // not replaced (or not committed yet)
	}
	row, _ := rows[0].(map[string]any)
	seq := int64(wvquery.Float(row, schema.ValidToProperty))
	return w.closeVectors(ctx, project, []string{fileVersionID}, seq)
}
