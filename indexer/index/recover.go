package index

// Recovering from an interrupted commit. A crash before publishing leaves
// objects above the watermark, which the next commit rolls back
// (rollback.go) before it intends its own sequence; a crash after
// publishing may lose the mirror's write, caught up here too, or the
// documents' write, which repairDocuments makes once the events are
// delivered again.

import (
	"context"

	"github.com/weaviate/weaviate/entities/models"
)

// settle returns the watermark of project, whose commit lock the caller
// holds, after undoing what an interrupted commit left behind.
func (w *Writer) settle(ctx context.Context, project string) (watermark int64, err error) {
	wm, err := w.Watermark(ctx, project)
	if err != nil {
		return 0, err
	}
	if err := w.recover(ctx, project, wm); err != nil {
		return 0, err
	}
	return wm, nil
}

// recover undoes what an interrupted commit left: objects above the
// watermark and a lost mirror write. It runs on this process's first commit
// of a project and whenever an intent lies above the watermark; otherwise
// the last commit completed and there is nothing to undo.
func (w *Writer) recover(ctx context.Context, project string, wm int64) error {
	intent, err := w.seqs.Intent(ctx, project)
	if err != nil {
		return err
	}
	if _, seen := w.checked.Load(project); seen && intent <= wm {
		return nil
	}
	if err := w.rollback(ctx, project, wm); err != nil {
		return err
	}
	if wm > 0 {
		if err := w.mirror(ctx, project, wm); err != nil { // catches up a mirror write lost in a crash
			return err
		}
	}
	w.checked.Store(project, struct{}{})
	return nil
}

// repairDocuments writes the documents of the versions of group that
// decide found committed at or below watermark without their document (a
// crash after publishing), and concludes them: Duplicate, as nothing is
// committed.
func (w *Writer) repairDocuments(ctx context.Context, project string, group []*pendingVersion, watermark int64, now string) {
	var repair []*pendingVersion
	var docs []*models.Object
	for _, p := range group {
		if !p.finished && p.repair {
			repair = append(repair, p)
			docs = append(docs, fileDocument(p.fv, p.labels, watermark, now))
		}
	}
	if len(repair) == 0 {
		return
	}
	err := w.batch(ctx, docs)
	for _, p := range repair {
		if err != nil {
			p.conclude(Duplicate, err)
			continue
		}
		// Vectors written while the document was missing have no readers.
		p.conclude(Duplicate, w.syncVectorReaders(ctx, project, textFilter("file_version_id", p.fv.FileVersionID), p.labels))
	}
}
