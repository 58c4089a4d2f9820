package index

// Changing properties of objects already written, in place: an access
// change sets the readers of every object of a file, and a commit those of
// vectors written before it. A merge (PATCH) rewrites only the properties
// it names and keeps the vectors, so HNSW is not touched; Weaviate
// re-indexes the object's properties meanwhile (see the package doc), so
// it may drop out of a filtered read for that moment.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// mergePage is how many objects one read of syncObjects returns (a
// variable for tests, which page with less).
var mergePage = 2000

// mergeParallel is how many merges are in flight at once: each is a
// request of its own (Weaviate has no batch merge), so they overlap.
const mergeParallel = 16

// syncObjects merges props into every object of class (in project's tenant)
// that where matches and whose values differ, and returns how many it
// merged. Objects that already hold props are left alone, so running it
// again after an interruption redoes only what was not done.
func (w *Writer) syncObjects(ctx context.Context, class, project string, where *filters.WhereBuilder, props map[string]any) (int, error) {
	fields := make([]graphql.Field, 0, len(props))
	for _, name := range slices.Sorted(maps.Keys(props)) {
		fields = append(fields, graphql.Field{Name: name})
	}
	merged := 0
	err := w.eachPage(ctx, class, project, where, fields, func(rows []map[string]any) error {
		var stale []string
		for _, r := range rows {
			if !holds(r, props) {
				stale = append(stale, objectID(r))
			}
		}
		merged += len(stale)
		return w.merge(ctx, class, project, stale, props)
	})
	return merged, err
}

// eachPage calls fn with the objects of class matching where, mergePage at
// a time, in id order. It pages by key (the next page starts after the
// last id seen), as an offset cannot reach past Weaviate's 10,000 results
// (QUERY_MAXIMUM_RESULTS) and a file's objects across all its versions can
// be more; fn changing the objects it is given does not move the pages.
func (w *Writer) eachPage(ctx context.Context, class, project string, where *filters.WhereBuilder, fields []graphql.Field, fn func(rows []map[string]any) error) error {
	fields = append(slices.Clone(fields), graphql.Field{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}})
	after := ""
	for {
		cond := where
		if after != "" {
			cond = wvquery.And(where, filters.Where().WithPath([]string{"_id"}).WithOperator(filters.GreaterThan).WithValueText(after))
		}
		resp, err := w.wv.GraphQL().Get().WithClassName(class).WithTenant(project).WithWhere(cond).
			WithSort(graphql.Sort{Path: []string{"_id"}, Order: graphql.Asc}).WithLimit(mergePage).WithFields(fields...).Do(ctx)
		if err != nil {
			return fmt.Errorf("read %s of %s: %w", class, project, err)
		}
		if len(resp.Errors) > 0 {
			return fmt.Errorf("read %s of %s: %s", class, project, resp.Errors[0].Message)
		}
		raw, _ := resp.Data["Get"].(map[string]any)[class].([]any)
		rows := make([]map[string]any, 0, len(raw))
		for _, r := range raw {
			if m, ok := r.(map[string]any); ok {
				rows = append(rows, m)
			}
		}
		if len(rows) == 0 {
			return nil
		}
		if err := fn(rows); err != nil {
			return err
		}
		if len(rows) < mergePage {
			return nil
		}
		after = objectID(rows[len(rows)-1])
	}
}

// merge PATCHes props into the objects of class with the given ids,
// mergeParallel at once, and returns the first failure. An object gone
// meanwhile (a 404) has nothing left to change.
//
// A merge of fixed values may be sent again (schema.Idempotent): each
// attempt has its own deadline (-weaviate-write-timeout), and one held past
// it, or refused because Weaviate lost its Raft leader, goes to the next node.
func (w *Writer) merge(ctx context.Context, class, project string, ids []string, props map[string]any) error {
	ctx, cancel := context.WithCancelCause(schema.Idempotent(ctx))
	defer cancel(nil)
	inParallel(len(ids), mergeParallel, func(i int) {
		if ctx.Err() != nil {
			return // an earlier merge failed
		}
		// ALL, as every write of the writer: readers may ask any replica.
		err := w.wv.Data().Updater().WithMerge().WithClassName(class).WithID(ids[i]).WithTenant(project).
			WithConsistencyLevel("ALL").WithProperties(props).Do(ctx)
		var ce *fault.WeaviateClientError
		if err != nil && !(errors.As(err, &ce) && ce.StatusCode == 404) {
			cancel(fmt.Errorf("merge into %s %s: %w", class, ids[i], err))
		}
	})
	return context.Cause(ctx)
}

// holds reports whether a row read back has the values of props.
func holds(row map[string]any, props map[string]any) bool {
	for k, want := range props {
		switch want := want.(type) {
		case []string:
			if !slices.Equal(wvquery.Strs(row, k), want) {
				return false
			}
		case string:
			if got := wvquery.Str(row, k); got != want && !sameTime(got, want) {
				return false
			}
		case float64:
			if got, ok := row[k].(float64); !ok || got != want {
				return false
			}
		default:
			return false // not compared: always merged
		}
	}
	return true
}

func objectID(row map[string]any) string {
	add, _ := row["_additional"].(map[string]any)
	return wvquery.Str(add, "id")
}

// sameTime reports whether two RFC 3339 strings are one time (Weaviate
// returns dates in its own spelling).
func sameTime(a, b string) bool {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}
