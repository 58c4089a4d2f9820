package index

// A file's delete: a commit of its own, of a Version that hides the file
// and a tombstone Document.

import (
	"context"
	"fmt"
	"time"

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
	// Its members go with it, at the same sequence (members.go); after a
	// crash, their tombstones are written again with the file's.
	var gone []goneMember
	if containerFormats[v.doc.format] || o.Branch != "" {
		if gone, err = w.goneMembers(ctx, o, nil); err != nil {
			return "", fmt.Errorf("members of %s: %w", o.Path, err)
		}
	}
	versions, tombstones := memberDeletes(o, gone, seq, now)
	versions, tombstones = append(versions, version), append(tombstones, tombstone)
	if v.done {
		return Duplicate, w.batch(ctx, tombstones)
	}
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
