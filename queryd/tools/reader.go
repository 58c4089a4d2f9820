package tools

// What the tools read. A tool reads the index through its toolset's
// interface: Base, which every toolset shares, the shared ViewReader and
// SearchReader where its tools take those arguments, and a few methods of
// its own (at most 8). Reader, which New takes, is their union;
// store.Store is each of them (queryd/store/conformance_test.go checks one
// toolset's interface at a time against a real Weaviate). Strata's own
// tools read more, from the sources SetStrata gives them, and a few reads
// are optional: a Reader that also is a DocumentIndex, MetadataIndex or
// DocumentLister answers from memory or takes metadata filters, found by
// type assertion in New (the tests' in-memory readers are not).

import (
	"context"

	"github.com/strata-kb/strata/queryd/deadletters"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/stagehealth"
)

// Base is what every toolset reads: the projects and whether the caller
// may read a file, a project's published commit (its watermark) and a
// file's version as of one, its documents and its counts.
type Base interface {
	Projects(ctx context.Context) ([]string, error)
	HasProject(ctx context.Context, project string) (bool, error)
	// MayRead reports whether the caller in ctx may read a file (package access).
	MayRead(ctx context.Context, project, fileID string) (bool, error)
	Watermark(ctx context.Context, project string) (int64, error)
	VersionAt(ctx context.Context, project, branch, path string, at int64) (*store.Version, error)
	// AllDocuments lists a project's documents, any state, where selects (find, list_files, status, list_failures).
	AllDocuments(ctx context.Context, project string, where *store.Where, limit int) ([]store.Document, error)
	// Stats counts a project's documents and chunks (status; which model a vector search uses, modelFor).
	Stats(ctx context.Context, project string) (store.Stats, error)
}

// ViewReader resolves the branch_id, release_id and release_version
// arguments into a view (Veryfront's tools and Strata's).
type ViewReader interface {
	Branches(ctx context.Context, project string) ([]string, error)
	ReleaseByID(ctx context.Context, project, id string) (*store.Release, error)
	ReleaseByVersion(ctx context.Context, project, branch, version string) (*store.Release, error)
}

// SearchReader is keyword search and the scope parent_path_part_ids names
// (Knowledge Stack's searches, and hybrid_search's scope).
type SearchReader interface {
	SearchKeyword(ctx context.Context, project, query string, limit int, where *store.Where, at int64) ([]store.Chunk, error)
	Documents(ctx context.Context, project string, limit int) ([]store.Document, error)
	GetChunk(ctx context.Context, project, id string, at int64) (*store.Chunk, error)
	SectionExists(ctx context.Context, project, sectionID string) (bool, error)
}

// ChunksReader is what Veryfront's tools read (toolset chunks).
type ChunksReader interface {
	Base
	ViewReader
	ListChunks(ctx context.Context, project, fileVersionID string, offset, limit int) ([]store.Chunk, error)
	GetChunk(ctx context.Context, project, id string, at int64) (*store.Chunk, error)
}

// KnowledgeReader is what Knowledge Stack's tools read (toolset
// knowledge): the navigation of knowledge.go and knowledge_resolve.go.
type KnowledgeReader interface {
	Base
	SearchReader
	DocumentByID(ctx context.Context, project, fileID string) (*store.DocumentDetail, error)
	Folders(ctx context.Context, project string, limit int) ([]string, error)
	FolderDocuments(ctx context.Context, project, folder string, offset, limit int) ([]store.Document, int, error)
	Sections(ctx context.Context, project, fileVersionID string, at int64, offset, limit int) ([]store.Section, error)
	GetSection(ctx context.Context, project, id string, at int64) (*store.Section, error)
	GetChunkDetail(ctx context.Context, project, id string, at int64) (*store.ChunkDetail, error)
	ChunkDetails(ctx context.Context, project string, q store.ChunkQuery) ([]store.ChunkDetail, error)
	CountChunks(ctx context.Context, project string, q store.ChunkQuery) (int, error)
}

// LocalRAGReader is what mcp-local-rag's tools read (toolset localrag).
type LocalRAGReader interface {
	Base
	ListChunks(ctx context.Context, project, fileVersionID string, offset, limit int) ([]store.Chunk, error)
	SearchKeyword(ctx context.Context, project, query string, limit int, where *store.Where, at int64) ([]store.Chunk, error)
}

// StrataReader is what Strata's own tools read (toolset strata): the
// Reader's Base, ViewReader and SearchReader, and the keyword search and
// change listing SetStrata gives them.
type StrataReader interface {
	Base
	ViewReader
	SearchReader
	KeywordSearcher
	ChangeReader
}

// Reader is what New takes: every toolset's reads but those SetStrata gives.
type Reader interface {
	ChunksReader
	KnowledgeReader
	LocalRAGReader
	Base
	ViewReader
	SearchReader
}

// KeywordSearcher searches by keyword in a branch view.
type KeywordSearcher interface {
	SearchKeywordMatching(ctx context.Context, project, query string, match store.Match, limit int, where *store.Where, branch string, at int64) ([]store.Chunk, error)
}

// ChangeReader lists committed versions.
type ChangeReader interface {
	Committed(ctx context.Context, project, branch string, from, to int64, limit int) ([]store.Version, error)
	VersionsAt(ctx context.Context, project string, fileIDs []string, at int64) (map[string]store.Version, error)
}

// DocumentIndex answers document listings from memory (the store's catalog
// of commits); each method's ok is false when it cannot, and the tools
// read Weaviate instead.
type DocumentIndex interface {
	DocumentsNamed(ctx context.Context, project, needle string, limit int) ([]store.Document, bool)
	DocumentsUnder(ctx context.Context, project string, scopes []store.PathScope, limit int) ([]store.Document, bool)
	FailedDocuments(ctx context.Context, project string, limit int) ([]store.Document, bool)
	CatalogFolders(ctx context.Context, project string, limit int) ([]string, bool)
	DocumentAt(ctx context.Context, project, fileID string, at int64) (doc store.Document, found, ok bool)
}

// MetadataIndex reads document metadata (the store); nil: the tools take
// no metadata filter and hits carry none.
type MetadataIndex interface {
	MetadataWhere(ctx context.Context, f metadata.Filter) (*store.Where, error)
	MetadataKeys(ctx context.Context, project string) (map[string]metadata.Kinds, error)
	HitMetadata(ctx context.Context, project string, hits []store.Chunk) (map[string]metadata.Metadata, error)
}

// DocumentLister lists documents by metadata (the store's catalog): ok is
// false while it cannot answer.
type DocumentLister interface {
	ListDocuments(ctx context.Context, project, branch, pathPrefix string, f metadata.Filter, after string, limit int) (docs []store.Document, more, ok bool)
}

// VectorReader is what the vector tools read.
type VectorReader interface {
	SearchVector(ctx context.Context, project string, q store.VectorQuery) ([]store.Chunk, error)
	Embeddings(ctx context.Context, project, model string, chunkIDs []string, withVector bool) (map[string]store.ChunkVectors, error)
	EmbeddedChunkCount(ctx context.Context, project, model string) (int, error)
}

// QueryEmbedder embeds query text (engine.Provider).
type QueryEmbedder interface {
	Model() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ImageReader reads the picture of an image chunk: ref is its image_ref
// "<bucket>/<key>". A picture over maxBytes is refused with
// store.ErrImageTooLarge rather than read.
// store.Images reads them from MinIO.
type ImageReader interface {
	ReadImage(ctx context.Context, ref string, maxBytes int64) ([]byte, error)
}

// ObjectStates reads per-object freshness (NATS KV strata_objects).
type ObjectStates interface {
	Get(ctx context.Context, project, objectKey string) (*pipeline.ObjectState, error)
}

// DeadLetters reads the dead-letter stream.
type DeadLetters interface {
	Recent(ctx context.Context, max int) ([]deadletters.Letter, error)
}

// StageHealth reads the worker replicas' reports (stagehealth.Read).
type StageHealth interface {
	Stages(ctx context.Context) ([]stagehealth.Report, error)
}

// SetStageHealth makes status name the worker replicas held back by a full
// disk or their memory budget (to admins).
func (t *Tools) SetStageHealth(h StageHealth) *Tools {
	t.stages = h
	return t
}

// SetStrata enables Strata's own tools that need the index's extra reads
// and the pipeline's state (any may be nil: its tools are not served).
func (t *Tools) SetStrata(k KeywordSearcher, c ChangeReader, states ObjectStates, dead DeadLetters) *Tools {
	t.keyword, t.changes, t.states, t.dead = k, c, states, dead
	return t
}
