package pipeline

import (
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/metadata"

	"strings"
	"time"
)

// Header names carried on Strata's messages.
const (
	HeaderKind = "Strata-Kind" // KindFileVersion, KindFileDeleted or KindTagsChanged on the chunks stream
)

// Message kinds on the chunks stream.
const (
	KindFileVersion = "file-version"
	KindFileDeleted = "file-deleted"
	// KindTagsChanged carries an object's new tags (a tag change): its
	// groups and metadata. The indexer applies them to every version of the
	// file without re-extracting or re-embedding anything.
	KindTagsChanged = "tags-changed"
)

// Document status values recorded on the index's Document objects.
const (
	StatusIndexed     = "indexed"
	StatusFailed      = "failed"
	StatusUnsupported = "unsupported"
)

// Embedding status values of a chunk (Veryfront's embedding.status).
const (
	EmbeddingMissing = "missing"
	EmbeddingReady   = "ready"
	EmbeddingStale   = "stale"
)

// Object identifies one stored version of a bucket object, as the event named it.
type Object struct {
	Bucket    string `json:"bucket"`
	Key       string `json:"key"`
	Project   string `json:"project"`
	Branch    string `json:"branch,omitempty"` // "" = main
	Path      string `json:"path"`
	ETag      string `json:"etag,omitempty"`
	VersionID string `json:"version_id,omitempty"`
	// Sequencer orders events of one key (MinIO/S3 event sequencer, hex).
	Sequencer   string    `json:"sequencer"`
	Size        int64     `json:"size"`
	ContentType string    `json:"content_type,omitempty"`
	EventTime   time.Time `json:"event_time"`
	// SeenAt is when the ingestor received the event.
	SeenAt time.Time `json:"seen_at,omitzero"`
}

// FileVersion is the ingestor's output for one object version: the whole
// extracted structure, so the indexer can switch versions in one step.
type FileVersion struct {
	Object        Object    `json:"object"`
	FileID        string    `json:"file_id"`
	FileVersionID string    `json:"file_version_id"`
	Checksum      string    `json:"checksum"`           // sha256 of the object bytes
	Format        string    `json:"format"`             // pdf, docx, html, markdown, text, code, image, binary
	Language      string    `json:"language,omitempty"` // source language of code
	Pages         int       `json:"pages,omitempty"`
	Warnings      []string  `json:"warnings,omitempty"` // recoverable problems met while extracting
	Title         string    `json:"title"`
	Status        string    `json:"status"` // StatusIndexed, StatusFailed or StatusUnsupported
	Error         string    `json:"error,omitempty"`
	TextLength    int       `json:"text_length"` // characters of extracted text
	TokenCount    int       `json:"token_count"`
	Sections      []Section `json:"sections"`
	Chunks        []Chunk   `json:"chunks"`
	IngestedAt    time.Time `json:"ingested_at"`
	ExtractedAt   time.Time `json:"extracted_at,omitzero"` // when the ingestor finished extracting
	// Access is who may read the file, as the object said when it was fetched.
	Access Access `json:"access"`
	// Metadata is the document's merged metadata (metadata.Merge of
	// MetadataSources; what it dropped is in Warnings). The sources are kept
	// so a tag change can merge again without re-extracting.
	Metadata        metadata.Metadata `json:"metadata,omitempty"`
	MetadataSources metadata.Sources  `json:"metadata_sources,omitzero"`
	// Members are the files inside this one (a message's attachments, an
	// archive's files, a mailbox's messages, and theirs), each a document
	// of its own at <container path>//<member path> (objkey.MemberPath),
	// flattened: members of members are here too, not inside them. They
	// travel and are committed with their container, as one version: a
	// reader never sees half of the set. Object is the container's but
	// for Path; FileID and FileVersionID are the member's own.
	Members []FileVersion `json:"members,omitempty"`
}

// Access is who may read a file, read from its object (package access): the
// strata-groups tag, else the strata-groups user metadata.
type Access struct {
	Groups []string `json:"groups,omitempty"` // sorted, valid names; empty: every key of the project
	// Error says why the groups could not be read; the file is then
	// readable by admins only (fail closed).
	Error  string `json:"error,omitempty"`
	Source string `json:"source,omitempty"` // "tag", "x-amz-tagging metadata", "metadata" or "" (none)
	// ReadAt is when the ingestor read the object's tags: of two Access
	// records of one file, the later read wins.
	ReadAt time.Time `json:"read_at,omitzero"`
	// TagsDigest is the digest (ingest.TagsDigest) of the tags and user
	// metadata this was read from. The indexer records it in the object's
	// state once the index holds this read (ObjectState.TagsDigest), for
	// the reconcile pass to compare with the bucket listing. "" from an
	// ingestor older than it: nothing is recorded.
	TagsDigest string `json:"tags_digest,omitempty"`
}

// TagsChanged tells the indexer that an object's tags changed (no new
// content): its groups, and its tags and user metadata as read with them,
// which the indexer merges with each version's own file metadata.
type TagsChanged struct {
	Object Object `json:"object"`
	FileID string `json:"file_id"`
	Access Access `json:"access"`
	// Tags and UserMetadata are the object's tags and S3 user metadata as
	// read with Access.
	Tags         map[string]string `json:"tags,omitempty"`
	UserMetadata map[string]string `json:"user_metadata,omitempty"`
}

// Section is a heading-delimited part of a file version.
type Section struct {
	ID          string   `json:"id"`
	Ordinal     int      `json:"ordinal"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	Level       int      `json:"level"`
	StartOffset int      `json:"start_offset"`
	EndOffset   int      `json:"end_offset"`
	TokenCount  int      `json:"token_count"`
	ChunkCount  int      `json:"chunk_count"`
	PageStart   int      `json:"page_start,omitempty"`
	PageEnd     int      `json:"page_end,omitempty"`
}

// Chunk is one retrievable piece of a file version. Offsets are character
// (rune) offsets into the extracted text: start inclusive, end exclusive.
type Chunk struct {
	ID             string   `json:"id"`
	Index          int      `json:"index"`
	SectionID      string   `json:"section_id"`
	Content        string   `json:"content"`
	StartOffset    int      `json:"start_offset"`
	EndOffset      int      `json:"end_offset"`
	TokenCount     int      `json:"token_count"`
	SourceChecksum string   `json:"source_checksum"` // sha256 of Content
	HeadingPath    []string `json:"heading_path"`
	Kind           string   `json:"kind"` // text, code, table or image
	PageStart      int      `json:"page_start,omitempty"`
	PageEnd        int      `json:"page_end,omitempty"`
	// ImageRef locates an image chunk's picture as "<bucket>/<key>".
	ImageRef  string `json:"image_ref,omitempty"`
	ImageMIME string `json:"image_mime,omitempty"`
	// OCRConfidence is the mean confidence (0-100] of the chunk's text read
	// by OCR from a scan or a picture; 0 for text the file held as text.
	OCRConfidence float64 `json:"ocr_confidence,omitempty"`
}

// FileDeleted tells the indexer that an object was removed.
type FileDeleted struct {
	Object Object `json:"object"`
	FileID string `json:"file_id"`
}

// Vectors carries the embeddings of a file version's chunks.
type Vectors struct {
	// Object is the uploaded object the file version came from (for
	// freshness and for the vectors' branch and path).
	Object        Object        `json:"object"`
	Project       string        `json:"project"`
	FileID        string        `json:"file_id"`
	FileVersionID string        `json:"file_version_id"`
	Model         string        `json:"model"`
	Dimensions    int           `json:"dimensions"`
	Chunks        []ChunkVector `json:"chunks"`
}

// ChunkVector is one chunk's embedding.
type ChunkVector struct {
	ChunkID        string    `json:"chunk_id"`
	SourceChecksum string    `json:"source_checksum"`
	Vector         []float32 `json:"vector"`
}

// CompareSequencers orders two S3 event sequencers of the same key. MinIO and
// S3 sequencers are hex strings that grow with time; a longer one is newer.
// The result is -1, 0 or +1 like strings.Compare.
func CompareSequencers(a, b string) int {
	a, b = strings.TrimLeft(strings.ToUpper(a), "0"), strings.TrimLeft(strings.ToUpper(b), "0")
	switch {
	case len(a) != len(b):
		if len(a) < len(b) {
			return -1
		}
		return 1
	default:
		return strings.Compare(a, b)
	}
}

// Readers is what the index stores as the file's readers (access.Readers).
func (a Access) Readers() []string { return access.Readers(a.Groups, a.Error) }

// Each returns fv and its members, one file version each: what is
// embedded and committed for one message. The container's own comes
// first, without its members.
func (fv FileVersion) Each() []FileVersion {
	own := fv
	own.Members = nil
	return append([]FileVersion{own}, fv.Members...)
}
