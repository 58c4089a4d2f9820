package tools

// mcp-local-rag's status: the index's counts, per project the key reads, and queryd's configuration.

import (
	"context"
	_ "embed"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/pipeline"
)

// statusDescription is the original's, word for word (tool-definitions.ts), so agents
// that know mcp-local-rag recognise the tool; the comments in this file say
// how Strata fills each field.
const statusDescription = "Get index status: { documentCount, chunkCount, memoryUsage (MB), uptime (s), ftsIndexEnabled, searchMode }."

//go:embed schemas/status.input.json
var statusInput string

var statusTool = define(ToolsetLocalRAG, "status", statusDescription, statusInput, (*Tools).status)

var started = time.Now()

// statusOut is the original's getStatus result plus Strata's extras.
type statusOut struct {
	// DocumentCount: indexed files (latest version indexed, any branch) in
	// the projects the key may read; the original counts files that have
	// chunks. Failed and unsupported files are counted apart (below).
	DocumentCount int `json:"documentCount"`
	// ChunkCount: chunks in those projects' indexes.
	ChunkCount int `json:"chunkCount"`
	// MemoryUsage: this queryd process's live heap in MB (the original:
	// Node's heapUsed in MB). Weaviate's memory is not included.
	MemoryUsage float64 `json:"memoryUsage"`
	// Uptime: seconds since this queryd process started.
	Uptime float64 `json:"uptime"`
	// FtsIndexEnabled: chunk content has a BM25 full-text index in Weaviate.
	FtsIndexEnabled bool `json:"ftsIndexEnabled"`
	// SearchMode: "hybrid" (keyword and vector, query_documents) with an
	// embedding provider; without one Strata searches by keyword (BM25)
	// only, and says "keyword".
	SearchMode string `json:"searchMode"`

	// Strata extras.
	FailedCount      int             `json:"failedCount"`      // files that could not be read; list_files shows why
	UnsupportedCount int             `json:"unsupportedCount"` // files of a type Strata does not index
	Projects         []projectStatus `json:"projects"`         // the same counts per project the key may read
	Configuration    statusConfig    `json:"configuration"`
	// Stages are the worker replicas that report something holding them
	// back beyond lag (a full disk, their memory budget); admins only,
	// omitted when nothing does.
	Stages []stageStatus `json:"stages,omitempty"`
}

// stageStatus is one worker replica held back, in words.
type stageStatus struct {
	Stage      string   `json:"stage"`
	Instance   string   `json:"instance"`
	Conditions []string `json:"conditions"`
}

type projectStatus struct {
	Project            string `json:"project"`
	DocumentCount      int    `json:"documentCount"`
	ChunkCount         int    `json:"chunkCount"`
	FailedCount        int    `json:"failedCount"`
	UnsupportedCount   int    `json:"unsupportedCount"`
	EmbeddedChunkCount int    `json:"embeddedChunkCount"` // chunks with a vector of the configured model
	// SearchModel is the model vector searches of this project use: the
	// configured one, or the previous one while a model change is embedded.
	SearchModel string `json:"searchModel,omitempty"`
	// Watermark is the project's last published commit sequence: reads see everything committed up to it.
	Watermark int64 `json:"watermark"`
	// Failures are the project's failed and unsupported files with why (at most MaxStatusFailures).
	Failures []failure `json:"failures"`
}

// MaxStatusFailures bounds the failures status lists per project; list_files lists them all.
const MaxStatusFailures = 20

// failure is a file that could not be indexed.
type failure struct {
	Path      string `json:"path"`
	Branch    string `json:"branch,omitempty"`
	Status    string `json:"status"`
	Error     string `json:"error"`
	UpdatedAt string `json:"updatedAt"`
}

// statusConfig is Strata's answer to the original's "configuration
// information".
type statusConfig struct {
	// Embedding is the provider queryd embeds queries with (local, openai,
	// or none: vector search is not served).
	Embedding string `json:"embedding"`
	// Model is the embedding model; searches read only its vectors.
	Model string `json:"model,omitempty"`
	// Dimensions is the model's vector length (search_files' dimension).
	Dimensions int `json:"dimensions,omitempty"`
	// Embeddings is the state of the chunks' vectors: "missing" (none
	// embedded), "partial" or "ready" (all embedded).
	Embeddings string `json:"embeddings"`
	// Search is the search served: "hybrid" (search_keyword, search_knowledge,
	// search_files and query_documents) or "keyword" (search_keyword only).
	Search       string `json:"search"`
	MaxListFiles int    `json:"maxListFiles"`
}

func (t *Tools) status(ctx context.Context, p auth.Principal, _ struct{}) (any, error) {
	projects, err := t.projectsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	slices.Sort(projects)
	out := statusOut{
		MemoryUsage: heapMB(), Uptime: time.Since(started).Seconds(), FtsIndexEnabled: true, SearchMode: "keyword",
		Projects:      []projectStatus{},
		Configuration: statusConfig{Embedding: "none", Search: "keyword", MaxListFiles: MaxListFiles},
	}
	if t.queries != nil {
		out.SearchMode, out.Configuration.Search = "hybrid", "hybrid"
		out.Configuration.Embedding, out.Configuration.Model, out.Configuration.Dimensions = t.provider, t.queries.Model(), t.queries.Dimensions()
	}
	embedded := 0
	for _, project := range projects {
		st, err := t.base.Stats(ctx, project)
		if err != nil {
			return nil, err
		}
		wm, err := t.base.Watermark(ctx, project)
		if err != nil {
			return nil, err
		}
		failed, err := t.failedDocuments(ctx, project, MaxStatusFailures)
		if err != nil {
			return nil, err
		}
		failures := []failure{}
		for _, d := range failed {
			if d.AccessError != "" {
				failures = append(failures, failure{Path: d.FilePath, Branch: d.Branch, Status: d.Status, Error: accessFailure(d.AccessError), UpdatedAt: d.UpdatedAt})
			}
			if d.Status != pipeline.StatusFailed && d.Status != pipeline.StatusUnsupported {
				continue
			}
			failures = append(failures, failure{Path: d.FilePath, Branch: d.Branch, Status: d.Status, Error: d.Error, UpdatedAt: d.UpdatedAt})
		}
		embeddedHere := 0
		if t.vectors != nil {
			if embeddedHere, err = t.vectors.EmbeddedChunkCount(ctx, project, t.queries.Model()); err != nil {
				return nil, err
			}
		}
		ps := projectStatus{
			Project: project, DocumentCount: st.Indexed, ChunkCount: st.Chunks, FailedCount: st.Failed,
			UnsupportedCount: st.Unsupported, EmbeddedChunkCount: embeddedHere, Watermark: wm, Failures: failures,
		}
		if t.vectors != nil {
			m, err := t.modelFor(ctx, project)
			if err != nil {
				return nil, err
			}
			ps.SearchModel = m.Model()
		}
		out.Projects = append(out.Projects, ps)
		out.DocumentCount += st.Indexed
		out.ChunkCount += st.Chunks
		out.FailedCount += st.Failed
		out.UnsupportedCount += st.Unsupported
		embedded += embeddedHere
	}
	if t.stages != nil && p.Admin() {
		// The projects' state is the answer; the replicas' reports are
		// extra, and never fail it (a paused NATS server).
		reports, err := t.stages.Stages(ctx)
		if err != nil {
			t.log.Warn("status: worker replicas' reports not read", "err", err)
		}
		for _, r := range reports {
			if c := r.Conditions(); len(c) > 0 {
				out.Stages = append(out.Stages, stageStatus{Stage: r.Stage, Instance: r.Instance, Conditions: c})
			}
		}
	}
	switch {
	case embedded == 0:
		out.Configuration.Embeddings = pipeline.EmbeddingMissing
	case embedded < out.ChunkCount:
		out.Configuration.Embeddings = "partial"
	default:
		out.Configuration.Embeddings = pipeline.EmbeddingReady
	}
	return out, nil
}

// heapMB is the live heap in MB, like Node's process.memoryUsage().heapUsed.
func heapMB() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64()) / 1024 / 1024
}
