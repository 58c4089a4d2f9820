package tools

// get_file_chunk (Veryfront): one chunk by id.

import (
	"context"
	_ "embed"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

const getFileChunkDescription = "Get one indexed chunk by id, with its content, offsets and source checksum."

//go:embed schemas/get_file_chunk.input.json
var getFileChunkInput string

//go:embed schemas/get_file_chunk.output.json
var getFileChunkOutput string

var getFileChunkTool = define(ToolsetChunks, "get_file_chunk", getFileChunkDescription, getFileChunkInput, (*Tools).getFileChunk).withOutput(getFileChunkOutput)

type getFileChunkArgs struct {
	ProjectReference string `json:"project_reference"`
	ChunkID          string `json:"chunk_id"`
	IncludeEmbedding bool   `json:"include_embedding"`
}

func (t *Tools) getFileChunk(ctx context.Context, p auth.Principal, a getFileChunkArgs) (any, error) {
	c, err := t.currentChunk(ctx, p, a.ProjectReference, a.ChunkID)
	if err != nil {
		return nil, err
	}
	var emb *EmbeddingOut
	if a.IncludeEmbedding {
		all, err := t.embeddingsOf(ctx, c.Project, []store.Chunk{*c})
		if err != nil {
			return nil, err
		}
		emb = all[c.ID]
	}
	return map[string]any{"chunk": chunkOut(*c, emb)}, nil
}
