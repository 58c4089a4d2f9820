package tools

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

const searchKnowledgeDescription = "Search your knowledge base by meaning using dense vector search. Best for concepts, explanations, and natural-language questions."
