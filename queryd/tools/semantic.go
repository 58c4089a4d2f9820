package tools

// The tools that need vectors: search_knowledge (Knowledge Stack),
// search_files (Veryfront) and query_documents (mcp-local-rag). They are
// served when queryd has an embedding provider (SetEmbeddings), which must
// be the embedder's: queries and documents are embedded by the same model,
// and a search reads only that model's vectors.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// VectorReader is what the vector tools read.
type VectorReader interface {
	SearchVector(ctx context.Context, project string, q store.VectorQuery) ([]store.Chunk, error)
	Embeddings(ctx context.Context, project, model string, chunkIDs []string, withVector bool) (map[string]store.ChunkVectors, error)
	EmbeddedChunkCount(ctx context.Context, project, model string) (int, error)
}

// QueryEmbedder embeds query text (embed.Provider).
type QueryEmbedder interface {
	Model() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// SetEmbeddings enables the vector tools, embedding queries with q.
func (t *Tools) SetEmbeddings(v VectorReader, q QueryEmbedder, provider string) *Tools {
	t.vectors, t.queries, t.provider = v, q, provider
	return t
}

// SetPreviousEmbeddings names the model the index was embedded with before
// the configured one, and its provider (local, openai). While a project's
// chunks are not all embedded with the configured model (a model change
// being re-embedded side by side), its searches use the previous model;
// they switch once coverage is complete. Each search still reads exactly
// one model's vectors. search_files and get_file_chunk_embedding also take
// the previous model's dimension, to read its vectors.
func (t *Tools) SetPreviousEmbeddings(q QueryEmbedder, provider string) *Tools {
	t.previous = previousEmbedder{QueryEmbedder: q, provider: provider}
	return t
}

// previousEmbedder is the previous model with its provider's name.
type previousEmbedder struct {
	QueryEmbedder
	provider string
}

// embeddingModel is one configured model: queryd's own, or the previous one.
type embeddingModel struct {
	QueryEmbedder
	provider string
	previous bool
}

// embeddingModels are the configured models, queryd's own first (none
// without a provider).
func (t *Tools) embeddingModels() []embeddingModel {
	if t.queries == nil {
		return nil
	}
	ms := []embeddingModel{{QueryEmbedder: t.queries, provider: t.provider}}
	if p, ok := t.previous.(previousEmbedder); ok {
		ms = append(ms, embeddingModel{QueryEmbedder: p.QueryEmbedder, provider: p.provider, previous: true})
	}
	return ms
}

// modelsOfDimension are the configured models whose vectors have dim
// dimensions, dim being Veryfront's dimension argument (a decimal string,
// "384"), queryd's own model first.
func (t *Tools) modelsOfDimension(dim string) []embeddingModel {
	var out []embeddingModel
	for _, m := range t.embeddingModels() {
		if dim == strconv.Itoa(m.Dimensions()) {
			out = append(out, m)
		}
	}
	return out
}

// describeModels names the configured models with their dimensions ("its
// embedding model is m (384 dimensions)") and the dimensions a caller may
// pass (`"384" or "512"`, conj joining them).
func (t *Tools) describeModels(conj string) (models, dims string) {
	ms := t.embeddingModels()
	var named, ds []string
	for _, m := range ms {
		n := fmt.Sprintf("%s (%d dimensions)", m.Model(), m.Dimensions())
		if m.previous {
			n = fmt.Sprintf("%s (%d dimensions, the previous model)", m.Model(), m.Dimensions())
		}
		named = append(named, n)
		if d := strconv.Quote(strconv.Itoa(m.Dimensions())); !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	if len(named) == 1 {
		return "its embedding model is " + named[0], ds[0]
	}
	return "its embedding models are " + listOf(named, "and"), listOf(ds, conj)
}

// publishedDimensions is the enum of get_file_chunk_embedding's dimension
// as published (the schema): without an embedding provider, these still
// answer "missing", as they always did.
var publishedDimensions = sync.OnceValue(func() []string {
	var sch struct {
		Properties struct {
			Dimension struct {
				Enum []string `json:"enum"`
			} `json:"dimension"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(Schema("get_file_chunk_embedding.input.json"), &sch); err != nil {
		panic(fmt.Sprintf("get_file_chunk_embedding input schema: %v", err))
	}
	return sch.Properties.Dimension.Enum
})

// coverageTTL is how long a project's model choice is reused.
const coverageTTL = 10 * time.Second

type coverage struct {
	current bool
	at      time.Time
}

// modelFor is the model a search of project uses: the configured one, or
// the previous one until the configured one covers every current chunk.
func (t *Tools) modelFor(ctx context.Context, project string) (QueryEmbedder, error) {
	if t.previous == nil {
		return t.queries, nil
	}
	if c, ok := t.coverage.Load(project); ok && time.Since(c.(coverage).at) < coverageTTL {
		if c.(coverage).current {
			return t.queries, nil
		}
		return t.previous, nil
	}
	st, err := t.read.Stats(ctx, project)
	if err != nil {
		return nil, err
	}
	n, err := t.vectors.EmbeddedChunkCount(ctx, project, t.queries.Model())
	if err != nil {
		return nil, err
	}
	current := n >= st.Chunks
	t.coverage.Store(project, coverage{current: current, at: time.Now()})
	if current {
		return t.queries, nil
	}
	return t.previous, nil
}

// queryVectors embeds one query text per model, once each.
type queryVectors struct {
	text string
	byID map[string][]float32
}

func (t *Tools) vectorOf(ctx context.Context, qv *queryVectors, m QueryEmbedder) ([]float32, error) {
	if v, ok := qv.byID[m.Model()]; ok {
		return v, nil
	}
	vecs, err := m.Embed(ctx, []string{qv.text})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 || len(vecs[0]) != m.Dimensions() {
		return nil, userErrorf("embedding model %s returned no usable vector for the query", m.Model())
	}
	if qv.byID == nil {
		qv.byID = map[string][]float32{}
	}
	qv.byID[m.Model()] = vecs[0]
	return vecs[0], nil
}

// searchVector runs a vector query on project with the model modelFor picks.
func (t *Tools) searchVector(ctx context.Context, project string, qv *queryVectors, q store.VectorQuery) ([]store.Chunk, error) {
	m, err := t.modelFor(ctx, project)
	if err != nil {
		return nil, err
	}
	vec, err := t.vectorOf(ctx, qv, m)
	if err != nil {
		return nil, err
	}
	q.Model, q.Vector = m.Model(), vec
	return t.vectors.SearchVector(ctx, project, q)
}

// embeddingsOf reports the embedding metadata of chunks against the
// configured model (nil map when queryd has no provider).
func (t *Tools) embeddingsOf(ctx context.Context, project string, cs []store.Chunk) (map[string]*EmbeddingOut, error) {
	out := map[string]*EmbeddingOut{}
	model := "none"
	var have map[string]store.ChunkVectors
	if t.vectors != nil {
		model = t.queries.Model()
		ids := make([]string, len(cs))
		for i, c := range cs {
			ids[i] = c.ID
		}
		var err error
		if have, err = t.vectors.Embeddings(ctx, project, model, ids, false); err != nil {
			return nil, err
		}
	}
	for _, c := range cs {
		e := &EmbeddingOut{ID: c.ID, Model: model, Status: store.EmbeddingStatus(c, have[c.ID])}
		if cur := have[c.ID].Current; cur != nil {
			e.ID = cur.ID
		}
		out[c.ID] = e
	}
	return out, nil
}

// searchKnowledge is Knowledge Stack's dense vector search: the query is
// embedded and the nearest chunks of the current files are returned, with
// Score = cosine similarity.
func (t *Tools) searchKnowledge(ctx context.Context, p auth.Principal, a searchArgs) (any, error) {
	qv := &queryVectors{text: strings.TrimSpace(a.Query)}
	return t.searchProjects(ctx, p, a, false, func(ctx context.Context, project, _ string, topK int, where *store.Where, at int64) ([]store.Chunk, error) {
		return t.searchVector(ctx, project, qv, store.VectorQuery{At: at, Limit: topK, Where: where})
	})
}

// queryDocumentsDescription is mcp-local-rag's own (tool-definitions.ts).
const queryDocumentsDescription = "Search ingested documents. Your query words are matched exactly (keyword search). Your query meaning is matched semantically (vector search). Preserve specific terms from the user. Add context if the query is ambiguous. Results include score (0 = most relevant, higher = less relevant)."

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
		at, err := t.read.Watermark(ctx, project)
		if err != nil {
			return nil, err
		}
		keyword, vector, err := searchBoth(ctx, func(ctx context.Context) ([]store.Chunk, error) {
			return t.read.SearchKeyword(ctx, project, q, 2*limit, where, at)
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

// search_files: Veryfront's vector search with a caller-supplied vector.

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

// getFileChunkEmbedding reports a chunk's embedding with a configured
// model, queryd's own or the one of the dimension asked for: ready, stale
// (only another model's, or other content's, vector) or missing, and the
// vector when asked.
func (t *Tools) getFileChunkEmbedding(ctx context.Context, p auth.Principal, a chunkEmbeddingArgs) (any, error) {
	if t.vectors == nil {
		dim := 0
		if a.Dimension != nil {
			// No model: the published dimensions answer "missing", as ever.
			published := publishedDimensions()
			if !slices.Contains(published, *a.Dimension) {
				quoted := make([]string, len(published))
				for i, d := range published {
					quoted[i] = strconv.Quote(d)
				}
				return nil, userErrorf("dimension must be one of %s (no embedding model is configured)", strings.Join(quoted, ", "))
			}
			dim, _ = strconv.Atoi(*a.Dimension)
		}
		c, err := t.currentChunk(ctx, p, a.ProjectReference, a.ChunkID)
		if err != nil {
			return nil, err
		}
		return chunkEmbeddingOut{ID: c.ID, ChunkID: c.ID, Model: EmbeddingModelOut{Name: "none", Provider: "none", Dimension: dim},
			Status: pipeline.EmbeddingMissing}, nil
	}
	// The dimension picks the configured model (queryd's own when both
	// have it, or none is given): its vector and its status are answered.
	m := t.embeddingModels()[0]
	if a.Dimension != nil {
		ms := t.modelsOfDimension(*a.Dimension)
		if len(ms) == 0 {
			models, dims := t.describeModels("and")
			return nil, userErrorf("dimension %q does not match this index: %s; the available dimensions are %s", clip(*a.Dimension), models, dims)
		}
		m = ms[0]
	}
	model, dims := m.Model(), m.Dimensions()
	// The chunk and its vector are read at the same time: the vector's id
	// derives from the chunk's, and nothing of it is answered unless the
	// chunk is current in a project the caller may read.
	project, err := t.resolveProject(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	var have map[string]store.ChunkVectors
	var vecErr error
	done := make(chan struct{})
	if ids.Valid(a.ChunkID) {
		go func() {
			defer close(done)
			have, vecErr = t.vectors.Embeddings(ctx, project, model, []string{a.ChunkID}, a.IncludeVector)
		}()
	} else {
		close(done)
	}
	c, err := t.currentChunk(ctx, p, project, a.ChunkID)
	<-done
	if err != nil {
		return nil, err
	}
	if vecErr != nil {
		return nil, vecErr
	}
	cv := have[c.ID]
	out := chunkEmbeddingOut{ID: c.ID, ChunkID: c.ID, Model: EmbeddingModelOut{Name: model, Provider: m.provider, Dimension: dims},
		Status: store.EmbeddingStatus(*c, cv)}
	if cv.Current != nil {
		out.ID = cv.Current.ID
		if a.IncludeVector && out.Status == pipeline.EmbeddingReady {
			out.Vector = cv.Current.Vector
		}
	}
	return out, nil
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func compareDesc(x, y float64) int {
	switch {
	case x > y:
		return -1
	case x < y:
		return 1
	}
	return 0
}
