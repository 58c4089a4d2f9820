package index

// A file's delete: a commit of its own, of a Version that hides the file
// and a tombstone Document.

import (
	"context"
	"fmt"
	"time"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// ApplyDelete commits a file's removal. The document stays as a tombstone
// carrying the delete's sequencer, so a late, older upload event cannot
// resurrect it; a delete Version hides the file from W on (on a branch: main's copy too).
// Both keep the file's last readers (deletedLabels).
func (w *Writer) ApplyDelete(ctx context.Context, d pipeline.FileDeleted) (Outcome, error) {
	o := d.Object
	ctx, h, seq, err := w.begin(ctx, o.Project)
	if err != nil {
		return "", err
	}
	defer h.unlock()
	deleteID := ids.FileVersion(d.FileID, "delete@"+o.Sequencer, "")
	v, err := w.decide(ctx, o.Project, d.FileID, o.Sequencer, deleteID, seq-1)
	if err != nil || (v.done && v.out != repairDocument) {
		return v.out, err
	}
	now := w.now().UTC().Format(time.RFC3339Nano)
	version, tombstone := deleteObjects(d, deleteID, deletedLabels(v.doc), seq, now)
	// Its members go with it, at the same sequence (members.go), their
	// tombstones written before the file's (which a redelivery checks);
	// after a crash, they are written again with it.
	if v.done {
		tombstones, err := w.deletedAt(ctx, o, v.seq, now)
		if err != nil {
			return "", fmt.Errorf("members of %s: %w", o.Path, err)
		}
		if err := w.batch(ctx, tombstones); err != nil {
			return "", err
		}
		return Duplicate, w.batch(ctx, []*models.Object{tombstone})
	}
	var gone []goneMember
	mainHad := ""
	if o.Branch != "" && !containerFormats[v.doc.format] {
		if mainHad, err = w.mainFormat(ctx, o.Project, o.Path); err != nil {
			return "", err
		}
	}
	if containerFormats[v.doc.format] || containerFormats[mainHad] {
		if gone, err = w.goneMembers(ctx, o, nil, seq); err != nil {
			return "", fmt.Errorf("members of %s: %w", o.Path, err)
		}
	}
	versions, tombstones := memberDeletes(o, gone, seq, now)
	versions = append(versions, version)
	if err := h.fenced(ctx, "write"); err != nil {
		return "", err
	}
	if err := w.batch(ctx, versions); err != nil {
		return "", fmt.Errorf("write delete of %s: %w", d.FileID, err)
	}
	if err := w.publish(ctx, h, seq); err != nil {
		return "", fmt.Errorf("publish commit %d of %s: %w", seq, o.Project, err)
	}
	if err := w.batch(ctx, tombstones); err != nil {
		return "", fmt.Errorf("write tombstones of the members of %s: %w", d.FileID, err)
	}
	if err := w.batch(ctx, []*models.Object{tombstone}); err != nil {
		return "", fmt.Errorf("write tombstone %s: %w", d.FileID, err)
	}
	w.recordState(ctx, o, pipeline.StateDeleted, "", seq, deleteID, time.Time{}, pipeline.Access{})
	w.closeReplacedOrWarn(ctx, o.Project, d.FileID, seq)
	for _, g := range gone {
		if g.own {
			w.closeReplacedOrWarn(ctx, o.Project, g.fileID, seq)
		}
	}
	return Applied, nil
}
