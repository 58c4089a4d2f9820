package tools

// search_knowledge (Knowledge Stack): dense vector search over every project the key reads.

import (
	"context"
	_ "embed"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

const searchKnowledgeDescription = "Search your knowledge base by meaning using dense vector search. Best for concepts, explanations, and natural-language questions."

//go:embed schemas/search_knowledge.input.json
var searchKnowledgeInput string

var searchKnowledgeTool = define(ToolsetKnowledge, "search_knowledge", searchKnowledgeDescription, searchKnowledgeInput, (*Tools).searchKnowledge).
	when("queryd has an embedding provider", func(t *Tools) bool { return t.queries != nil })

// searchKnowledge is Knowledge Stack's dense vector search: the query is
// embedded and the nearest chunks of the current files are returned, with
// Score = cosine similarity.
func (t *Tools) searchKnowledge(ctx context.Context, p auth.Principal, a searchArgs) (any, error) {
	qv := &queryVectors{text: strings.TrimSpace(a.Query)}
	return t.searchProjects(ctx, p, a, false, func(ctx context.Context, project, _ string, topK int, where *store.Where, at int64) ([]store.Chunk, error) {
		return t.searchVector(ctx, project, qv, store.VectorQuery{At: at, Limit: topK, Where: where})
	})
}
