package index

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

// WriteWithoutCommit writes the objects a commit of fv and then its vectors
// would write (sections, chunks, Version, Document and ChunkVectors), in
// the same batches, but none of the commit protocol: no lock, no watermark,
// no outcome decision, no object state. Readers never see them (their
// valid_from is 1 and no watermark is published). It exists to measure the
// commit path against Weaviate's own cost of the same writes
// (strata-bench -load-path batch); never use it on an index readers share.
func (w *Writer) WriteWithoutCommit(ctx context.Context, fv pipeline.FileVersion, v pipeline.Vectors) error {
	if err := validateVectors(v); err != nil {
		return err
	}
	if err := w.ensureTenant(ctx, fv.Object.Project); err != nil {
		return err
	}
	now := w.now().UTC().Format(time.RFC3339Nano)
	a := labelsOf(fv)
	objs := append(versionObjects(fv, a, 1, now), fileDocument(fv, a, 1, now))
	if err := w.batch(ctx, objs); err != nil {
		return fmt.Errorf("write %s without a commit: %w", fv.FileVersionID, err)
	}
	if err := w.ensureVectorSpace(ctx, v.Project, v.Model); err != nil {
		return err
	}
	if err := w.batch(ctx, vectorObjects(v, &a)); err != nil {
		return fmt.Errorf("write vectors of %s without a commit: %w", v.FileVersionID, err)
	}
	return nil
}
