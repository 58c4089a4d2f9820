package index

// The where filters of the writer's reads, merges and deletes (combined
// with wvquery.And).

import "github.com/weaviate/weaviate-go-client/v4/weaviate/filters"

func textFilter(path, v string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.Equal).WithValueText(v)
}

func intFilter(path string, op filters.WhereOperator, v int64) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(op).WithValueInt(v)
}

func idFilter(id string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"_id"}).WithOperator(filters.Equal).WithValueText(id)
}
