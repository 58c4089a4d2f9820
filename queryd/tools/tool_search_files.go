package tools

// search_files (Veryfront): vector search with the caller's own query vector.

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
)

const searchFilesDescription = "Vector search over file chunks. Requires a pre-computed query embedding vector of the index's model and dimension (get_file_chunk_embedding shows it)."

//go:embed schemas/search_files.input.json
var searchFilesInput string

//go:embed schemas/search_files.output.json
var searchFilesOutput string

var searchFilesTool = define(ToolsetChunks, "search_files", searchFilesDescription, searchFilesInput, (*Tools).searchFiles).withOutput(searchFilesOutput).
	when("queryd has an embedding provider", func(t *Tools) bool { return t.queries != nil })

type searchFilesArgs struct {
	ProjectReference string    `json:"project_reference"`
	QueryVector      []float64 `json:"query_vector"`
	Dimension        string    `json:"dimension"`
	viewArgs
	cursorArgs
	SimilarityThreshold *float64 `json:"similarity_threshold"`
}

// searchChunk is the chunk of a search_files match: Veryfront's schema
// for it has no source_checksum or created_at (and no other field).
type searchChunk struct {
	chunkFields
	Embedding *EmbeddingOut `json:"embedding"`
}

type scoredChunk struct {
	Chunk searchChunk `json:"chunk"`
	Score float64     `json:"score"`
}

type searchFilesOut struct {
	Data         []scoredChunk `json:"data"`
	PageInfo     PageInfo      `json:"page_info"`
	TotalMatches int           `json:"total_matches"`
	SearchTimeMS float64       `json:"search_time_ms"`
}

// MaxSearchMatches bounds the matches search_files ranks (and counts in
// total_matches): pages reach this far.
const MaxSearchMatches = 300

func (t *Tools) searchFiles(ctx context.Context, p auth.Principal, a searchFilesArgs) (any, error) {
	started := time.Now()
	project, err := t.resolveProject(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	// The dimension picks the model whose vectors are searched: the caller's
	// vector can only be compared with vectors of its own length. Should
	// both configured models have it, the one searches use (modelFor).
	var active QueryEmbedder
	switch ms := t.modelsOfDimension(a.Dimension); len(ms) {
	case 0:
		models, dims := t.describeModels("or")
		return nil, userErrorf("dimension %q does not match this index: %s; pass dimension %s and a query_vector of that many values",
			clip(a.Dimension), models, dims)
	case 1:
		active = ms[0].QueryEmbedder
	default:
		if active, err = t.modelFor(ctx, project); err != nil {
			return nil, err
		}
	}
	model, dims := active.Model(), active.Dimensions()
	if len(a.QueryVector) != dims {
		return nil, userErrorf("query_vector has %d values; model %s expects exactly %d", len(a.QueryVector), model, dims)
	}
	vec := make([]float32, dims)
	norm := 0.0
	for i, f := range a.QueryVector {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxFloat32 {
			return nil, userErrorf("query_vector[%d] is not a finite number", i)
		}
		vec[i] = float32(f)
		norm += f * f
	}
	if norm == 0 {
		return nil, userErrorf("query_vector is all zeros; cosine similarity is undefined")
	}
	limit, err := intArg("limit", a.Limit, 50, 1, 100)
	if err != nil {
		return nil, err
	}
	threshold := 0.7
	if a.SimilarityThreshold != nil {
		threshold = *a.SimilarityThreshold
		if math.IsNaN(threshold) || threshold < 0 || threshold > 1 {
			return nil, userErrorf("similarity_threshold must be from 0 to 1")
		}
	}
	v, err := t.resolveView(ctx, project, a.viewArgs)
	if err != nil {
		return nil, err
	}
	scope := searchScope(vec, v.branch, threshold)
	offset := 0
	pos, err := t.position(a.cursorArgs, "search_files", project, func(pos cursor.Position) bool {
		return strings.HasPrefix(pos.Scope, scope+"@")
	})
	if err != nil {
		return nil, err
	}
	if pos != nil {
		pinned, err := strconv.ParseInt(strings.TrimPrefix(pos.Scope, scope+"@"), 10, 64)
		if err != nil || pinned > v.at {
			return nil, foreignCursor("search_files")
		}
		v.at = pinned // pages of one search read one commit
		offset = pos.Offset
		if a.Limit == nil {
			limit = pos.Limit
		}
	}
	rows, err := t.vectors.SearchVector(ctx, project, store.VectorQuery{Model: model, Vector: vec, Branch: v.branch, At: v.at,
		Limit: MaxSearchMatches, MinSimilarity: threshold})
	if err != nil {
		return nil, err
	}
	// MinSimilarity 0 means "keep all" to the store; apply it exactly here.
	rows = slices.DeleteFunc(rows, func(c store.Chunk) bool { return c.Score < threshold })
	page := rows[min(offset, len(rows)):min(offset+limit, len(rows))]
	out := searchFilesOut{Data: make([]scoredChunk, 0, len(page)), TotalMatches: len(rows)}
	emb, err := t.embeddingsOf(ctx, project, page)
	if err != nil {
		return nil, err
	}
	for _, c := range page {
		out.Data = append(out.Data, scoredChunk{Score: round4(c.Score), Chunk: searchChunk{chunkFieldsOf(c), emb[c.ID]}})
	}
	at := func(off int) *string {
		s := t.cursor.Encode(cursor.Position{Tool: "search_files", Project: project, Scope: scope + "@" + strconv.FormatInt(v.at, 10), Offset: off, Limit: limit})
		return &s
	}
	// Forward-only, as Veryfront's: first carries no cursor and prev is null.
	out.PageInfo = PageInfo{Self: at(offset), First: map[string]any{}}
	if offset+limit < len(rows) {
		out.PageInfo.Next = at(offset + limit)
	}
	out.SearchTimeMS = float64(time.Since(started).Microseconds()) / 1000
	return out, nil
}

// searchScope pins a cursor to one query (vector, branch, threshold).
func searchScope(vec []float32, branch string, threshold float64) string {
	h := sha256.New()
	b, _ := json.Marshal([]any{vec, branch, threshold})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)[:12])
}
