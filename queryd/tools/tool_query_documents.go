package tools

// mcp-local-rag's query_documents: keyword and vector search fused.

import (
	"context"
	_ "embed"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

// queryDocumentsDescription is mcp-local-rag's own (tool-definitions.ts).
const queryDocumentsDescription = "Search ingested documents. Your query words are matched exactly (keyword search). Your query meaning is matched semantically (vector search). Preserve specific terms from the user. Add context if the query is ambiguous. Results include score (0 = most relevant, higher = less relevant)."

//go:embed schemas/query_documents.input.json
var queryDocumentsInput string

var queryDocumentsTool = define(ToolsetLocalRAG, "query_documents", queryDocumentsDescription, queryDocumentsInput, (*Tools).queryDocuments).
	when("queryd has an embedding provider", func(t *Tools) bool { return t.queries != nil })

type queryDocumentsArgs struct {
	Query string          `json:"query"`
	Limit *float64        `json:"limit"`
	Scope json.RawMessage `json:"scope"`
}

// queryResult is mcp-local-rag's QueryResult.
type queryResult struct {
	FilePath   string  `json:"filePath"`
	ChunkIndex int     `json:"chunkIndex"`
	Text       string  `json:"text"`
	Score      float64 `json:"score"`     // 0 = most relevant
	FileTitle  *string `json:"fileTitle"` // null: Strata keeps titles on documents (get_info)
}

// queryDocuments is mcp-local-rag's hybrid search: keyword (BM25) and
// vector results are fused (see fuse); the score is 1 - the fused score, so
// 0 is the most relevant, as in the original.
func (t *Tools) queryDocuments(ctx context.Context, p auth.Principal, a queryDocumentsArgs) (any, error) {
	q := strings.TrimSpace(a.Query)
	if q == "" || len(q) > MaxQueryBytes || !utf8.ValidString(q) {
		return nil, userErrorf("query must be 1 to %d bytes of UTF-8 text", MaxQueryBytes)
	}
	limit, err := intArg("limit", a.Limit, 10, 1, 20)
	if err != nil {
		return nil, err
	}
	var scope []scopePrefix
	if len(a.Scope) > 0 && string(a.Scope) != "null" {
		prefixes, err := parseScope(a.Scope)
		if err != nil {
			return nil, err
		}
		if prefixes, err = checkScope(prefixes); err != nil {
			return nil, err
		}
		scope, _ = normalizeScope(prefixes)
	}
	projects, err := t.projectsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	qv := &queryVectors{text: q}
	var fused []fusedHit
	for _, project := range projects {
		where, visit := projectScope(project, scope)
		if !visit {
			continue
		}
		at, err := t.base.Watermark(ctx, project)
		if err != nil {
			return nil, err
		}
		keyword, vector, err := searchBoth(ctx, func(ctx context.Context) ([]store.Chunk, error) {
			return t.localRAG.SearchKeyword(ctx, project, q, 2*limit, where, at)
		}, func(ctx context.Context) ([]store.Chunk, error) {
			return t.searchVector(ctx, project, qv, store.VectorQuery{At: at, Limit: 2 * limit, Where: where})
		})
		if err != nil {
			return nil, err
		}
		fused = append(fused, fuse(inProject(project, keyword), inProject(project, vector), DefaultFusion)...)
	}
	slices.SortStableFunc(fused, func(x, y fusedHit) int {
		if c := compareDesc(x.Score, y.Score); c != 0 {
			return c
		}
		return strings.Compare(x.Chunk.ID, y.Chunk.ID)
	})
	results := []queryResult{}
	for _, h := range fused[:min(len(fused), limit)] {
		c := h.Chunk
		results = append(results, queryResult{FilePath: rootOf(c.Project, c.Branch) + "/" + c.FilePath, ChunkIndex: c.Index, Text: c.Content,
			Score: round4(1 - h.Score)})
	}
	return map[string]any{"results": results}, nil
}
