package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// DocumentInfo is what listings show beyond a Document's identity and state.
// Only AllDocuments fills it.
type DocumentInfo struct {
	Format     string // detected format (e.g. "markdown", "pdf"; the detected type when unsupported)
	UpdatedAt  string // RFC 3339: when the indexer last wrote the document
	IngestedAt string // RFC 3339: when the ingestor read this version ("" for tombstones)
}

// listDocumentFields are documentFields plus DocumentInfo's.
var listDocumentFields = append(slices.Clone(documentFields),
	graphql.Field{Name: "format"}, graphql.Field{Name: "updated_at"}, graphql.Field{Name: "ingested_at"},
	graphql.Field{Name: schema.MetadataProperty}, graphql.Field{Name: schema.MetadataWarningsProperty})

func notDeleted() *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"deleted"}).WithOperator(filters.Equal).WithValueBoolean(false)
}

// DocumentScope matches the documents of branch ("" = main) at path or under
// it; path "" matches the whole branch. A "*" or "?" in path matches any one
// character here, so callers that need an exact match filter the result again.
func DocumentScope(branch, path string) *Where {
	b := eq("branch", branch)
	if path == "" {
		return b
	}
	under := filters.Where().WithPath([]string{"file_path"}).WithOperator(filters.Like).WithValueText(escapeLike(path) + "/*")
	return wvquery.And(b, Or(eq("file_path", path), under))
}

// AllDocuments lists a project's documents of every status (indexed, failed,
// unsupported) except deleted tombstones, within where (nil = all), sorted by
// file path, at most limit of them.
func (s *Store) AllDocuments(ctx context.Context, project string, where *Where, limit int) ([]Document, error) {
	w := notDeleted()
	if where != nil {
		w = wvquery.And(w, where)
	}
	rows, err := s.get(ctx, schema.DocumentClass, project, listDocumentFields, w, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithSort(graphql.Sort{Path: []string{"file_path"}, Order: graphql.Asc}).WithLimit(limit)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Document, 0, len(rows))
	for _, r := range rows {
		out = append(out, documentOf(r))
	}
	return out, nil
}

// Stats are a project's index counts.
type Stats struct {
	Indexed     int // live documents by status
	Failed      int
	Unsupported int
	Chunks      int // chunks in the index (only indexed documents have chunks)
}

// Stats counts a project's documents by status (tombstones excluded) and its
// chunks with Weaviate aggregations, so the counts are exact however large the
// project is. A project without an index has zero counts.
func (s *Store) Stats(ctx context.Context, project string) (Stats, error) {
	if s.catalog != nil {
		if st, ok := s.catalog.Stats(ctx, project); ok {
			return st, nil // maintained commit by commit: no scan
		}
	}
	var st Stats
	groups, err := s.aggregate(ctx, schema.DocumentClass, project, notDeleted(), "status")
	if err != nil {
		return st, err
	}
	for status, n := range groups {
		switch status {
		case pipeline.StatusIndexed:
			st.Indexed = n
		case pipeline.StatusFailed:
			st.Failed = n
		case pipeline.StatusUnsupported:
			st.Unsupported = n
		}
	}
	// The Chunk class also holds the replaced versions kept for releases; the
	// current chunks are those of the current documents.
	chunks, err := s.sumChunkCount(ctx, project)
	if err != nil {
		return st, err
	}
	st.Chunks = chunks
	return st, nil
}

// sumChunkCount adds up chunk_count over the current indexed documents.
func (s *Store) sumChunkCount(ctx context.Context, project string) (int, error) {
	resp, err := s.wv.GraphQL().Aggregate().WithClassName(schema.DocumentClass).WithTenant(project).
		WithWhere(s.withReaders(ctx, project, schema.DocumentClass, wvquery.And(notDeleted(), eq("status", pipeline.StatusIndexed)))).
		WithFields(graphql.Field{Name: "chunk_count", Fields: []graphql.Field{{Name: "sum"}}}).Do(ctx)
	if err != nil {
		return 0, fmt.Errorf("count chunks of %s: %w", project, err)
	}
	if missing, err := graphQLError(resp.Errors, "count chunks of %s", project); missing || err != nil {
		return 0, err
	}
	agg, _ := resp.Data["Aggregate"].(map[string]any)
	list, _ := agg[schema.DocumentClass].([]any)
	if len(list) == 0 {
		return 0, nil
	}
	cc, _ := list[0].(map[string]any)["chunk_count"].(map[string]any)
	return int(wvquery.Float(cc, "sum")), nil
}

// aggregate counts the objects of class within where (nil = all), by the
// values of groupBy, or under "" when groupBy is "".
func (s *Store) aggregate(ctx context.Context, class, project string, where *filters.WhereBuilder, groupBy string) (map[string]int, error) {
	fields := []graphql.Field{{Name: "meta", Fields: []graphql.Field{{Name: "count"}}}}
	a := s.wv.GraphQL().Aggregate().WithClassName(class).WithTenant(project)
	if groupBy != "" {
		fields = append(fields, graphql.Field{Name: "groupedBy", Fields: []graphql.Field{{Name: "value"}}})
		a = a.WithGroupBy(groupBy)
	}
	if where = s.withReaders(ctx, project, class, where); where != nil {
		a = a.WithWhere(where)
	}
	resp, err := a.WithFields(fields...).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("count %s of %s: %w", class, project, err)
	}
	if missing, err := graphQLError(resp.Errors, "count %s of %s", class, project); missing || err != nil {
		if err != nil {
			return nil, err
		}
		return map[string]int{}, nil // no index for this project yet
	}
	agg, _ := resp.Data["Aggregate"].(map[string]any)
	list, _ := agg[class].([]any)
	out := map[string]int{}
	for _, item := range list {
		m, _ := item.(map[string]any)
		meta, _ := m["meta"].(map[string]any)
		key := ""
		if groupBy != "" {
			g, _ := m["groupedBy"].(map[string]any)
			key = fmt.Sprint(g["value"])
		}
		out[key] += wvquery.Int(meta, "count")
	}
	return out, nil
}

// FailureFilter matches the documents list_failures and status show:
// failed or unsupported ones, and those whose groups could not be read.
func FailureFilter() *Where {
	return Or(StatusFilter(pipeline.StatusFailed, pipeline.StatusUnsupported),
		filters.Where().WithPath([]string{schema.ReadersProperty}).WithOperator(filters.ContainsAny).WithValueText(access.Nobody))
}

// StatusFilter matches documents with one of the statuses.
func StatusFilter(statuses ...string) *Where {
	return filters.Where().WithPath([]string{"status"}).WithOperator(filters.ContainsAny).WithValueText(statuses...)
}
