package tools

// get_file_chunk_embedding (Veryfront): one chunk's embedding against a configured model.

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

const getFileChunkEmbeddingDescription = "Get the embedding of one chunk: model, status (ready, stale or missing) and optionally the vector."

//go:embed schemas/get_file_chunk_embedding.input.json
var getFileChunkEmbeddingInput string

var getFileChunkEmbeddingTool = define(ToolsetChunks, "get_file_chunk_embedding", getFileChunkEmbeddingDescription, getFileChunkEmbeddingInput, (*Tools).getFileChunkEmbedding)

type chunkEmbeddingArgs struct {
	ProjectReference string  `json:"project_reference"`
	ChunkID          string  `json:"chunk_id"`
	Dimension        *string `json:"dimension"`
	IncludeVector    bool    `json:"include_vector"`
}

// EmbeddingModelOut is Veryfront's model{name, provider, dimension}.
type EmbeddingModelOut struct {
	Name      string `json:"name"`
	Provider  string `json:"provider"`
	Dimension int    `json:"dimension"`
}

// chunkEmbeddingOut is Veryfront's get_file_chunk_embedding answer.
type chunkEmbeddingOut struct {
	ID      string            `json:"id"`
	ChunkID string            `json:"chunk_id"`
	Model   EmbeddingModelOut `json:"model"`
	Status  string            `json:"status"`
	Vector  []float32         `json:"vector"`
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
	if err := json.Unmarshal([]byte(getFileChunkEmbeddingInput), &sch); err != nil {
		panic(fmt.Sprintf("get_file_chunk_embedding input schema: %v", err))
	}
	return sch.Properties.Dimension.Enum
})

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
