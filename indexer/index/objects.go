package index

// The objects a file version writes, built in one place: a commit's
// sections, chunks and Version (valid from its sequence) and the file's
// Document; a delete's Version and tombstone Document; the Version an
// access change commits; and the ChunkVectors of its embeddings. Each
// carries the labels (labels.go) of its file.

import (
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/terms"
	"github.com/strata-kb/strata/shared/wvquery"
)

// CommitObjects are the objects a commit of fv at seq writes, in the order
// it writes them: fv's sections, chunks and Version, then its Document,
// readable by the readers fv was read with and carrying its metadata. They
// are what the index stores for a file version, for anyone who writes or
// checks them outside a commit: strata-bench's raw write path
// (deploy/measure/strata-bench, -load-path batch) writes them without one
// to measure what the commit protocol costs.
func CommitObjects(fv pipeline.FileVersion, seq int64, now time.Time) []*models.Object {
	a, stamp := labelsOf(fv), now.UTC().Format(time.RFC3339Nano)
	return append(versionObjects(fv, a, seq, stamp, termsOf(fv)), fileDocument(fv, a, seq, stamp))
}

// VectorObjects are the ChunkVector objects ApplyVectors writes for v once
// fv is committed (with fv's readers and metadata), or the error
// ApplyVectors refuses v with. See CommitObjects.
func VectorObjects(v pipeline.Vectors, fv pipeline.FileVersion) ([]*models.Object, error) {
	if err := validateVectors(v); err != nil {
		return nil, err
	}
	a := labelsOf(fv)
	return vectorObjects(v, &a), nil
}

// versionObjects are a file version's sections, chunks and Version, valid
// from seq and readable by a; found are its chunks' terms (termsOf).
func versionObjects(fv pipeline.FileVersion, a labels, seq int64, now string, found []chunkTerms) []*models.Object {
	o := fv.Object
	// Who may read the version, and its metadata: the same properties on
	// each of its objects, found once (a chunk's metadata tokens and range
	// values took a search through the metadata each).
	readers, chunkLabels := a.objectProps(map[string]any{}), a.chunkProps(map[string]any{})
	validity := func(m map[string]any) map[string]any {
		m["valid_from"] = seq
		maps.Copy(m, readers)
		return m
	}
	chunkValidity := func(m map[string]any) map[string]any {
		m["valid_from"] = seq
		maps.Copy(m, chunkLabels)
		return m
	}
	var objs []*models.Object
	for _, s := range fv.Sections {
		objs = append(objs, &models.Object{Class: schema.SectionClass, ID: strfmt.UUID(s.ID), Tenant: o.Project, Properties: validity(map[string]any{
			"file_id": fv.FileID, "file_version_id": fv.FileVersionID, "file_path": o.Path, "branch": o.Branch,
			"ordinal": s.Ordinal, "title": s.Title, "heading_path": nonNil(s.HeadingPath), "level": s.Level,
			"start_offset": s.StartOffset, "end_offset": s.EndOffset, "token_count": s.TokenCount, "chunk_count": s.ChunkCount,
			"page_start": s.PageStart, "page_end": s.PageEnd,
		})})
	}
	sections := make(map[string]*pipeline.Section, len(fv.Sections))
	for i := range fv.Sections {
		sections[fv.Sections[i].ID] = &fv.Sections[i]
	}
	for i, c := range fv.Chunks {
		props := map[string]any{
			"content": c.Content, "file_id": fv.FileID, "file_version_id": fv.FileVersionID, "file_path": o.Path,
			"branch": o.Branch, "index": c.Index, "start_offset": c.StartOffset, "end_offset": c.EndOffset,
			"token_count": c.TokenCount, "source_checksum": c.SourceChecksum, "created_at": now,
			"section_id": c.SectionID, "heading_path": nonNil(c.HeadingPath),
			"embedding_status": pipeline.EmbeddingMissing, "embedding_model": "",
			"kind": kindOr(c.Kind), "page_start": c.PageStart, "page_end": c.PageEnd, "image_ref": c.ImageRef, "image_mime": c.ImageMIME,
		}
		if c.OCRConfidence > 0 {
			props["ocr_confidence"] = c.OCRConfidence
		}
		if s := sections[c.SectionID]; s != nil {
			props["section_title"], props["section_heading_path"], props["section_ordinal"] = s.Title, nonNil(s.HeadingPath), s.Ordinal
			props["section_token_count"], props["section_chunk_count"] = s.TokenCount, s.ChunkCount
		}
		props[schema.HeadingTermsProperty] = found[i].heading
		props[schema.ContentTermsProperty] = found[i].content
		objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(c.ID), Tenant: o.Project, Properties: chunkValidity(props)})
	}
	return append(objs, &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(fv.FileVersionID), Tenant: o.Project, Properties: a.newVersionProps(validity(map[string]any{
		"file_id": fv.FileID, "file_path": o.Path, "branch": o.Branch, "file_version_id": fv.FileVersionID, "sequencer": o.Sequencer,
		"etag": o.ETag, "status": fv.Status, "error": fv.Error, "deleted": false, "title": fv.Title, "format": fv.Format,
		"chunk_count": len(fv.Chunks), "committed_at": now, "ingested_at": fv.IngestedAt.UTC().Format(time.RFC3339Nano),
	}))})
}

// versionObjectKeys are the class, id and tenant of each of
// versionObjects(fv, ...), without their properties.
func versionObjectKeys(fv pipeline.FileVersion) []*models.Object {
	var objs []*models.Object
	key := func(class, id string) {
		objs = append(objs, &models.Object{Class: class, ID: strfmt.UUID(id), Tenant: fv.Object.Project})
	}
	for _, s := range fv.Sections {
		key(schema.SectionClass, s.ID)
	}
	for _, c := range fv.Chunks {
		key(schema.ChunkClass, c.ID)
	}
	key(schema.VersionClass, fv.FileVersionID)
	return objs
}

// chunkTerms are the terms a chunk is found by: its content's, and its
// headings' less its content's (headingTerms). Stemming them is most of
// the CPU that building a version's objects takes, so a commit finds them
// before it takes its project's lock (ApplyFileVersion).
type chunkTerms struct{ heading, content string }

// termsOf are fv's chunks' terms, in order.
func termsOf(fv pipeline.FileVersion) []chunkTerms {
	found := make([]chunkTerms, len(fv.Chunks))
	for i, c := range fv.Chunks {
		content := terms.Of(c.Content)
		found[i] = chunkTerms{heading: headingTerms(fv, c, content), content: content}
	}
	return found
}

// headingTerms are the terms a chunk is found by besides its content
// (contentTerms, terms.Of its content): its document's title and path and
// its section's headings, less the terms its content has already. A title
// counts once in a chunk that shows it (the first one, under its "# Title")
// and still finds the chunks after it.
func headingTerms(fv pipeline.FileVersion, c pipeline.Chunk, contentTerms string) string {
	parts := []string{fv.Object.Path}
	if len(c.HeadingPath) == 0 || c.HeadingPath[0] != fv.Title {
		parts = append(parts, fv.Title)
	}
	parts = append(parts, c.HeadingPath...)
	inContent := map[string]bool{}
	for _, t := range strings.Fields(contentTerms) {
		inContent[t] = true
	}
	var b strings.Builder
	terms.Each(strings.Join(parts, "\n"), func(t string) {
		if inContent[t] {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	})
	return b.String()
}

// fileDocument is fv's Document, readable by a.
func fileDocument(fv pipeline.FileVersion, a labels, seq int64, now string) *models.Object {
	o := fv.Object
	props := map[string]any{
		"file_id": fv.FileID, "file_path": o.Path, "name": baseName(o.Path), "folder": folderOf(o.Path), "branch": o.Branch,
		"object_key": o.Key, "etag": o.ETag, "version_id": o.VersionID, "sequencer": o.Sequencer,
		"file_version_id": fv.FileVersionID, "checksum": fv.Checksum, "format": fv.Format, "title": fv.Title,
		"language": fv.Language, "pages": fv.Pages, "warnings": nonNil(fv.Warnings),
		"status": fv.Status, "error": fv.Error, "deleted": false, "size": o.Size, "text_length": fv.TextLength,
		"token_count": fv.TokenCount, "chunk_count": len(fv.Chunks), "section_count": len(fv.Sections),
		"content_type": o.ContentType, "updated_at": now, "ingested_at": fv.IngestedAt.Format(time.RFC3339Nano), "commit_seq": seq,
	}
	return &models.Object{Class: schema.DocumentClass, ID: strfmt.UUID(fv.FileID), Tenant: o.Project, Properties: a.documentProps(props)}
}

// deleteObjects are the objects a delete commits at seq: a Version that
// hides the file (its id is deleteID) and the Document, which stays as a
// tombstone; both readable by a.
func deleteObjects(d pipeline.FileDeleted, deleteID string, a labels, seq int64, now string) (version, document *models.Object) {
	o := d.Object
	version = &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(deleteID), Tenant: o.Project, Properties: a.newVersionProps(map[string]any{
		"file_id": d.FileID, "file_path": o.Path, "branch": o.Branch, "file_version_id": deleteID, "sequencer": o.Sequencer,
		"status": "deleted", "error": "", "deleted": true, "chunk_count": 0, "committed_at": now,
		"valid_from": seq,
	})}
	document = &models.Object{Class: schema.DocumentClass, ID: strfmt.UUID(d.FileID), Tenant: o.Project, Properties: a.documentProps(map[string]any{
		"file_id": d.FileID, "file_path": o.Path, "name": baseName(o.Path), "folder": folderOf(o.Path), "branch": o.Branch,
		"object_key": o.Key, "sequencer": o.Sequencer, "file_version_id": deleteID, "status": "deleted", "error": "",
		"deleted": true, "chunk_count": 0, "section_count": 0, "updated_at": now, "commit_seq": seq,
	})}
	return version, document
}

// versionFields are a Version's properties an access change copies.
var versionFields = []string{"file_id", "file_path", "branch", "file_version_id", "sequencer", "etag", "status", "error",
	"deleted", "title", "format", "chunk_count", "ingested_at"}

// accessVersion is the Version an access change commits at seq. Its object
// id is its own (the file version's Version keeps the file_version_id as
// its id, which decide looks up), derived from the sequence so a rewrite
// after a crash is an upsert. committed_at is now: it is a commit of its own.
func accessVersion(project string, visible map[string]any, want labels, seq int64, now string) *models.Object {
	props := map[string]any{}
	for _, f := range versionFields {
		switch v := visible[f].(type) {
		case nil:
		case float64:
			props[f] = int64(v)
		default:
			props[f] = v
		}
	}
	props["valid_from"], props["committed_at"] = seq, now
	fileID, fileVersionID := wvquery.Str(visible, "file_id"), wvquery.Str(visible, "file_version_id")
	id := ids.FileVersion(fileID, "access@"+strconv.FormatInt(seq, 10), fileVersionID)
	return &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(id), Tenant: project, Properties: want.newVersionProps(props)}
}

// vectorObjects are v's ChunkVector objects, one per chunk, with the
// readers and metadata of l (nil: not known yet, which only admins match
// until a commit sets them).
func vectorObjects(v pipeline.Vectors, l *labels) []*models.Object {
	objs := make([]*models.Object, 0, len(v.Chunks))
	name := schema.VectorName(v.Model)
	for _, c := range v.Chunks {
		props := map[string]any{
			"chunk_id": c.ChunkID, "file_id": v.FileID, "file_version_id": v.FileVersionID, "file_path": v.Object.Path,
			"branch": v.Object.Branch, "model": v.Model, "source_checksum": c.SourceChecksum, "dimensions": v.Dimensions,
		}
		if l != nil {
			l.chunkProps(props)
		}
		objs = append(objs, &models.Object{
			Class: schema.ChunkVectorClass, ID: strfmt.UUID(ids.ChunkVector(c.ChunkID, v.Model)), Tenant: v.Project,
			Properties: props, Vectors: models.Vectors{name: models.Vector(c.Vector)},
		})
	}
	return objs
}

// vectorIDs are the ids of v's ChunkVector objects.
func vectorIDs(v pipeline.Vectors) []string {
	out := make([]string, 0, len(v.Chunks))
	for _, c := range v.Chunks {
		out = append(out, ids.ChunkVector(c.ChunkID, v.Model))
	}
	return out
}

func kindOr(k string) string {
	if k == "" {
		return "text"
	}
	return k
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// baseName and folderOf are a path's name and folder (a member's folder
// is what holds it, objkey.Split).
func baseName(p string) string { _, name := objkey.Split(p); return name }

func folderOf(p string) string { folder, _ := objkey.Split(p); return folder }

// The properties that carry a version's labels (labels.go) on its objects.

// objectProps adds the readers to the properties of a Section.
func (a labels) objectProps(m map[string]any) map[string]any {
	m[schema.ReadersProperty] = nonNil(a.readers)
	return m
}

// chunkProps adds the readers and the metadata to the properties of a
// Chunk or ChunkVector: the tokens, and each number and date in its range
// property (but those the index has no room for).
func (a labels) chunkProps(m map[string]any) map[string]any {
	m[metadata.TokensProperty] = metadata.Tokens(a.meta)
	for name, v := range metadata.RangeValues(a.meta) {
		if !a.noRange[name] {
			m[name] = v
		}
	}
	return a.objectProps(m)
}

// versionProps adds the readers, the access error and the metadata to a
// Version's properties.
func (a labels) versionProps(m map[string]any) map[string]any {
	m["access_error"] = a.err
	m[schema.MetadataProperty] = metaJSON(a.meta)
	sources, _ := json.Marshal(a.sources)
	m[schema.MetadataSourcesProperty] = string(sources)
	m[schema.MetadataWarningsProperty] = nonNil(a.metaWarnings)
	return a.objectProps(m)
}

// metaJSON is m as the index stores it: JSON with its keys in order.
func metaJSON(m metadata.Metadata) string {
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m) // encoding/json writes map keys in order
	return string(b)
}

// newVersionProps is versionProps for a Version being committed: it also
// records the readers it is committed with, which merges never change
// (schema.CommittedReadersProperty).
func (a labels) newVersionProps(m map[string]any) map[string]any {
	m[schema.CommittedReadersProperty] = nonNil(a.readers)
	return a.versionProps(m)
}

// documentProps adds the readers, the access error and the time they were
// read to a Document's properties.
func (a labels) documentProps(m map[string]any) map[string]any {
	if !a.readAt.IsZero() {
		m["access_read_at"] = a.readAt.UTC().Format(time.RFC3339Nano)
	}
	return a.versionProps(m)
}
