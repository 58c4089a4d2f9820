package tools

import (
	"context"
	"strconv"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/pipeline"
)

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

// getFileChunkEmbedding reports a chunk's embedding. No embedding provider
// writes vectors yet, so every chunk answers status "missing" with a null
// vector and model "none" (never a made-up vector).
func (t *Tools) getFileChunkEmbedding(ctx context.Context, p auth.Principal, a chunkEmbeddingArgs) (any, error) {
	dim := 0
	if a.Dimension != nil {
		d, err := strconv.Atoi(*a.Dimension)
		if err != nil || (d != 512 && d != 768 && d != 1024 && d != 1536 && d != 3072 && d != 4096) {
			return nil, userErrorf("dimension must be one of \"512\", \"768\", \"1024\", \"1536\", \"3072\", \"4096\"")
		}
		dim = d
	}
	c, err := t.currentChunk(ctx, p, a.ProjectReference, a.ChunkID)
	if err != nil {
		return nil, err
	}
	status := c.EmbeddingStatus
	if status == "" {
		status = pipeline.EmbeddingMissing
	}
	model := EmbeddingModelOut{Name: c.EmbeddingModel, Provider: "none", Dimension: dim}
	if model.Name == "" {
		model.Name = "none"
	}
	return chunkEmbeddingOut{ID: c.ID, ChunkID: c.ID, Model: model, Status: status, Vector: nil}, nil
}
