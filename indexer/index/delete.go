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
	version, tombstone := deleteObjects(d, deleteID, deletedLabels(v.doc), seq, w.now().UTC().Format(time.RFC3339Nano))
	if v.done {
		return Duplicate, w.batch(ctx, []*models.Object{tombstone})
	}
	if err := h.fenced(ctx, "write"); err != nil {
		return "", err
	}
	if err := w.batch(ctx, []*models.Object{version}); err != nil {
		return "", fmt.Errorf("write delete of %s: %w", d.FileID, err)
	}
	if err := w.publish(ctx, h, seq); err != nil {
		return "", fmt.Errorf("publish commit %d of %s: %w", seq, o.Project, err)
	}
	if err := w.batch(ctx, []*models.Object{tombstone}); err != nil {
		return "", fmt.Errorf("write tombstone %s: %w", d.FileID, err)
	}
	w.recordState(ctx, o, pipeline.StateDeleted, "", seq, deleteID, time.Time{}, pipeline.Access{})
	w.closeReplacedOrWarn(ctx, o.Project, d.FileID, seq)
	return Applied, nil
}
