package mcpclient

// The answers of queryd's tools that Strata's own programs read, as they
// read them: the JSON an MCP client receives (queryd/tools writes it), not
// queryd's types.

// Status is the status tool's answer.
type Status struct {
	DocumentCount    int             `json:"documentCount"`
	ChunkCount       int             `json:"chunkCount"`
	FailedCount      int             `json:"failedCount"`
	UnsupportedCount int             `json:"unsupportedCount"`
	Projects         []ProjectStatus `json:"projects"`
	Configuration    StatusConfig    `json:"configuration"`
}

// ProjectStatus is one project's counts in the status answer.
type ProjectStatus struct {
	Project            string          `json:"project"`
	DocumentCount      int             `json:"documentCount"`
	ChunkCount         int             `json:"chunkCount"`
	FailedCount        int             `json:"failedCount"`
	UnsupportedCount   int             `json:"unsupportedCount"`
	EmbeddedChunkCount int             `json:"embeddedChunkCount"`
	SearchModel        string          `json:"searchModel"`
	Watermark          int64           `json:"watermark"`
	Failures           []StatusFailure `json:"failures"`
}

// StatusFailure is a file the status answer says could not be indexed.
type StatusFailure struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// StatusConfig is how the server searches, in the status answer.
type StatusConfig struct {
	Embedding  string `json:"embedding"`
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
	Embeddings string `json:"embeddings"`
	Search     string `json:"search"`
}

// HybridAnswer is hybrid_search's answer.
type HybridAnswer struct {
	Query      string           `json:"query"`
	Fusion     string           `json:"fusion"`
	Alpha      float64          `json:"alpha"`
	Model      string           `json:"model"`
	Watermarks map[string]int64 `json:"watermarks"`
	Results    []HybridHit      `json:"results"`
}

// HybridHit is one hit of hybrid_search.
type HybridHit struct {
	Project      string   `json:"project"`
	Branch       string   `json:"branch"`
	DocumentPath string   `json:"document_path"`
	HeadingPath  []string `json:"heading_path"`
	Content      string   `json:"content"`
	Score        float64  `json:"score"`
	Index        int      `json:"index"`
	ChunkID      string   `json:"chunk_id"`
	Relevance    string   `json:"relevance"`
	Explain      Explain  `json:"explain"`
}

// Explain says how a hybrid_search hit was found.
type Explain struct {
	KeywordRank      *int     `json:"keyword_rank"`
	KeywordScore     *float64 `json:"keyword_score"`
	VectorRank       *int     `json:"vector_rank"`
	VectorSimilarity *float64 `json:"vector_similarity"`
}
