package index

// A file's delete: a commit of its own, of a Version that hides the file
// and a tombstone Document.

import (
	"context"
	"fmt"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// ApplyDelete commits a file's removal. The document stays as a tombstone
// carrying the delete's sequencer, so a late, older upload event cannot
// resurrect it; a delete Version hides the file from W on (on a branch: main's copy too).
// Both keep the file's last readers (deletedACL).
func (w *Writer) ApplyDelete(ctx context.Context, d pipeline.FileDeleted) (Outcome, error) {
	o := d.Object
	seq, unlock, err := w.begin(ctx, o.Project)
	if err != nil {
		return "", err
	}
	defer unlock()
	deleteID := ids.FileVersion(d.FileID, "delete@"+o.Sequencer, "")
	v, err := w.decide(ctx, o.Project, d.FileID, o.Sequencer, deleteID, seq-1)
	if err != nil || (v.done && v.out != repairDocument) {
		return v.out, err
	}
	a := deletedLabels(v.doc)
	now := w.now().UTC().Format(time.RFC3339Nano)
	objs := []*models.Object{{Class: schema.VersionClass, ID: strfmt.UUID(deleteID), Tenant: o.Project, Properties: a.newVersionProps(map[string]any{
		"file_id": d.FileID, "file_path": o.Path, "branch": o.Branch, "file_version_id": deleteID, "sequencer": o.Sequencer,
		"status": "deleted", "error": "", "deleted": true, "chunk_count": 0, "committed_at": now,
		"valid_from": seq,
	})}, {Class: schema.DocumentClass, ID: strfmt.UUID(d.FileID), Tenant: o.Project, Properties: a.documentProps(map[string]any{
		"file_id": d.FileID, "file_path": o.Path, "name": baseName(o.Path), "folder": folderOf(o.Path), "branch": o.Branch,
		"object_key": o.Key, "sequencer": o.Sequencer, "file_version_id": deleteID, "status": "deleted", "error": "",
		"deleted": true, "chunk_count": 0, "section_count": 0, "updated_at": now, "commit_seq": seq,
	})}}
	if v.done {
		return Duplicate, w.batch(ctx, objs[1:])
	}
	if err := w.batch(ctx, objs[:1]); err != nil {
		return "", fmt.Errorf("write delete of %s: %w", d.FileID, err)
	}
	if err := w.publish(ctx, o.Project, seq); err != nil {
		return "", fmt.Errorf("publish commit %d of %s: %w", seq, o.Project, err)
	}
	if err := w.batch(ctx, objs[1:]); err != nil {
		return "", fmt.Errorf("write tombstone %s: %w", d.FileID, err)
	}
	w.recordState(ctx, o, pipeline.StateDeleted, "", seq, deleteID, time.Time{})
	return Applied, nil
}
