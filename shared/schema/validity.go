package schema

import "github.com/weaviate/weaviate-go-client/v4/weaviate/filters"

// NotReplaced keeps the rows (Chunk, ChunkVector) whose file version was
// not replaced as of sequence at: valid_to unset or above at. It is a Not
// (Weaviate >= 1.33) so that rows written before valid_to existed, which
// have none, are kept: it only ever narrows a search to fewer replaced
// rows, and readers still decide each row's visibility themselves.
func NotReplaced(at int64) *filters.WhereBuilder {
	replaced := filters.Where().WithPath([]string{ValidToProperty}).WithOperator(filters.LessThanEqual).WithValueInt(at)
	return filters.Where().WithOperator(filters.Not).WithOperands([]*filters.WhereBuilder{replaced})
}
