// Package index writes file versions into Weaviate: sections and chunks of the
// new version, the document's current state, and removal of the versions it
// replaces. Every write is an upsert by deterministic ID, so replays and
// duplicate messages change nothing; the event sequencer stored on the
// document keeps an older event from undoing a newer one.
package index

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// batchSize bounds one batch request to Weaviate.
const batchSize = 200

// Writer applies pipeline messages to the index.
type Writer struct {
	wv      *weaviate.Client
	log     *slog.Logger
	tenants sync.Map // project -> struct{}: tenants known to exist
	// fileLocks serialise versions of one file within this process, so two
	// concurrent versions never interleave their writes and deletes.
	fileLocks [64]sync.Mutex
	now       func() time.Time
}

// New returns a Writer.
func New(wv *weaviate.Client, log *slog.Logger) *Writer {
	return &Writer{wv: wv, log: log, now: time.Now}
}

// Outcome says what an apply did.
type Outcome string

const (
	Applied Outcome = "applied"
	Stale   Outcome = "stale" // a newer event of the same file was applied already
)

// current is the stored state of a document.
type current struct {
	exists        bool
	sequencer     string
	fileVersionID string
}

func (w *Writer) ensureTenant(ctx context.Context, project string) error {
	if _, ok := w.tenants.Load(project); ok {
		return nil
	}
	if err := schema.EnsureTenant(ctx, w.wv, project); err != nil {
		return err
	}
	w.tenants.Store(project, struct{}{})
	return nil
}

func (w *Writer) document(ctx context.Context, project, fileID string) (current, error) {
	objs, err := w.wv.Data().ObjectsGetter().WithClassName(schema.DocumentClass).WithID(fileID).WithTenant(project).Do(ctx)
	if err != nil {
		if se, ok := err.(*fault.WeaviateClientError); ok && se.StatusCode == 404 {
			return current{}, nil
		}
		return current{}, fmt.Errorf("read document %s: %w", fileID, err)
	}
	if len(objs) == 0 {
		return current{}, nil
	}
	props, _ := objs[0].Properties.(map[string]any)
	str := func(k string) string { s, _ := props[k].(string); return s }
	return current{exists: true, sequencer: str("sequencer"), fileVersionID: str("file_version_id")}, nil
}

// ApplyFileVersion makes fv the file's current version.
func (w *Writer) ApplyFileVersion(ctx context.Context, fv pipeline.FileVersion) (Outcome, error) {
	o := fv.Object
	unlock := w.lockFile(fv.FileID)
	defer unlock()
	if err := w.ensureTenant(ctx, o.Project); err != nil {
		return "", err
	}
	cur, err := w.document(ctx, o.Project, fv.FileID)
	if err != nil {
		return "", err
	}
	if cur.exists && pipeline.CompareSequencers(cur.sequencer, o.Sequencer) > 0 {
		return Stale, nil
	}
	now := w.now().UTC().Format(time.RFC3339Nano)
	var objs []*models.Object
	for _, s := range fv.Sections {
		objs = append(objs, &models.Object{Class: schema.SectionClass, ID: strfmt.UUID(s.ID), Tenant: o.Project, Properties: map[string]any{
			"file_id": fv.FileID, "file_version_id": fv.FileVersionID, "file_path": o.Path, "branch": o.Branch,
			"ordinal": s.Ordinal, "title": s.Title, "heading_path": nonNil(s.HeadingPath), "level": s.Level,
			"start_offset": s.StartOffset, "end_offset": s.EndOffset, "token_count": s.TokenCount, "chunk_count": s.ChunkCount,
			"page_start": s.PageStart, "page_end": s.PageEnd,
		}})
	}
	for _, c := range fv.Chunks {
		objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(c.ID), Tenant: o.Project, Properties: map[string]any{
			"content": c.Content, "file_id": fv.FileID, "file_version_id": fv.FileVersionID, "file_path": o.Path,
			"branch": o.Branch, "index": c.Index, "start_offset": c.StartOffset, "end_offset": c.EndOffset,
			"token_count": c.TokenCount, "source_checksum": c.SourceChecksum, "created_at": now,
			"section_id": c.SectionID, "heading_path": nonNil(c.HeadingPath),
			"embedding_status": pipeline.EmbeddingMissing, "embedding_model": "",
			"kind": kindOr(c.Kind), "page_start": c.PageStart, "page_end": c.PageEnd, "image_ref": c.ImageRef, "image_mime": c.ImageMIME,
		}})
	}
	if err := w.batch(ctx, objs); err != nil {
		return "", fmt.Errorf("write file version %s: %w", fv.FileVersionID, err)
	}
	doc := &models.Object{Class: schema.DocumentClass, ID: strfmt.UUID(fv.FileID), Tenant: o.Project, Properties: map[string]any{
		"file_id": fv.FileID, "file_path": o.Path, "name": baseName(o.Path), "folder": folderOf(o.Path), "branch": o.Branch,
		"object_key": o.Key, "etag": o.ETag, "version_id": o.VersionID, "sequencer": o.Sequencer,
		"file_version_id": fv.FileVersionID, "checksum": fv.Checksum, "format": fv.Format, "title": fv.Title,
		"language": fv.Language, "pages": fv.Pages, "warnings": nonNil(fv.Warnings),
		"status": fv.Status, "error": fv.Error, "deleted": false, "size": o.Size, "text_length": fv.TextLength,
		"token_count": fv.TokenCount, "chunk_count": len(fv.Chunks), "section_count": len(fv.Sections),
		"content_type": o.ContentType, "updated_at": now, "ingested_at": fv.IngestedAt.Format(time.RFC3339Nano),
	}}
	if err := w.batch(ctx, []*models.Object{doc}); err != nil {
		return "", fmt.Errorf("write document %s: %w", fv.FileID, err)
	}
	// Only now remove what the new version replaces, so the file is never absent.
	if err := w.deleteOtherVersions(ctx, o.Project, fv.FileID, fv.FileVersionID); err != nil {
		return "", err
	}
	return Applied, nil
}

// ApplyDelete removes a file; the document stays as a tombstone carrying the
// delete's sequencer, so a late older upload event cannot resurrect it.
func (w *Writer) ApplyDelete(ctx context.Context, d pipeline.FileDeleted) (Outcome, error) {
	o := d.Object
	unlock := w.lockFile(d.FileID)
	defer unlock()
	if err := w.ensureTenant(ctx, o.Project); err != nil {
		return "", err
	}
	cur, err := w.document(ctx, o.Project, d.FileID)
	if err != nil {
		return "", err
	}
	if cur.exists && pipeline.CompareSequencers(cur.sequencer, o.Sequencer) > 0 {
		return Stale, nil
	}
	now := w.now().UTC().Format(time.RFC3339Nano)
	doc := &models.Object{Class: schema.DocumentClass, ID: strfmt.UUID(d.FileID), Tenant: o.Project, Properties: map[string]any{
		"file_id": d.FileID, "file_path": o.Path, "name": baseName(o.Path), "folder": folderOf(o.Path), "branch": o.Branch,
		"object_key": o.Key, "sequencer": o.Sequencer, "file_version_id": "", "status": "deleted", "error": "",
		"deleted": true, "chunk_count": 0, "section_count": 0, "updated_at": now,
	}}
	if err := w.batch(ctx, []*models.Object{doc}); err != nil {
		return "", fmt.Errorf("write tombstone %s: %w", d.FileID, err)
	}
	if err := w.deleteOtherVersions(ctx, o.Project, d.FileID, ""); err != nil {
		return "", err
	}
	return Applied, nil
}

func (w *Writer) lockFile(fileID string) func() {
	h := fnv.New32a()
	h.Write([]byte(fileID))
	m := &w.fileLocks[h.Sum32()%uint32(len(w.fileLocks))]
	m.Lock()
	return m.Unlock
}

func (w *Writer) batch(ctx context.Context, objs []*models.Object) error {
	for start := 0; start < len(objs); start += batchSize {
		end := min(start+batchSize, len(objs))
		resp, err := w.wv.Batch().ObjectsBatcher().WithObjects(objs[start:end]...).Do(ctx)
		if err != nil {
			return fmt.Errorf("batch of %d objects: %w", end-start, err)
		}
		for _, r := range resp {
			if r.Result != nil && r.Result.Errors != nil && len(r.Result.Errors.Error) > 0 {
				return fmt.Errorf("batch object %s: %s", r.ID, r.Result.Errors.Error[0].Message)
			}
		}
	}
	return nil
}

// deleteOtherVersions removes the file's sections and chunks whose version is
// not keep ("" removes all).
func (w *Writer) deleteOtherVersions(ctx context.Context, project, fileID, keep string) error {
	where := filters.Where().WithPath([]string{"file_id"}).WithOperator(filters.Equal).WithValueText(fileID)
	if keep != "" {
		where = filters.Where().WithOperator(filters.And).WithOperands([]*filters.WhereBuilder{
			where,
			filters.Where().WithPath([]string{"file_version_id"}).WithOperator(filters.NotEqual).WithValueText(keep),
		})
	}
	for _, class := range []string{schema.ChunkClass, schema.SectionClass} {
		_, err := w.wv.Batch().ObjectsBatchDeleter().WithClassName(class).WithTenant(project).WithWhere(where).WithOutput("minimal").Do(ctx)
		if err != nil {
			return fmt.Errorf("delete old %s objects of %s: %w", class, fileID, err)
		}
	}
	return nil
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

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

func folderOf(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}
