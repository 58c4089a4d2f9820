package tools

// search_keyword (Knowledge Stack): BM25 keyword search over every project the key reads.

import (
	"context"
	_ "embed"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

const searchKeywordDescription = "Search your knowledge base for exact terms using BM25 full-text search. Best for specific identifiers, error codes, filenames, and configuration values."

//go:embed schemas/search_keyword.input.json
var searchKeywordInput string

var searchKeywordTool = define(ToolsetKnowledge, "search_keyword", searchKeywordDescription, searchKeywordInput, (*Tools).searchKeyword)

func (t *Tools) searchKeyword(ctx context.Context, p auth.Principal, a searchArgs) (any, error) {
	return t.searchProjects(ctx, p, a, true, func(ctx context.Context, project, q string, topK int, where *store.Where, at int64) ([]store.Chunk, error) {
		return t.search.SearchKeyword(ctx, project, q, topK, where, at)
	})
}
