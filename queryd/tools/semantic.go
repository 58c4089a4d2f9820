package tools

// What the tools that need vectors share: search_knowledge (Knowledge
// Stack), search_files (Veryfront) and query_documents (mcp-local-rag),
// served when queryd has an embedding provider (SetEmbeddings), and
// hybrid_search's vector side. The provider must be the embedder's: queries
// and documents are embedded by the same model, and a search reads only
// that model's vectors.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/strata-kb/strata/queryd/store"
)

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
	st, err := t.base.Stats(ctx, project)
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

// search_files: Veryfront's vector search with a caller-supplied vector.

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
