package index

// The last step of a commit: once its objects are written at the intended
// sequence, the sequence is published (readers switch to them at once);
// the documents and object states follow.

import (
	"context"
	"fmt"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
)

// publish makes seq visible: first in the authoritative store, then in the
// ProjectState mirror that queryd reads.
func (w *Writer) publish(ctx context.Context, project string, seq int64) error {
	if w.publishHook != nil {
		return w.publishHook()
	}
	if lost, ok := w.leaseLost.Load(project); ok && lost.(func() bool)() {
		// Another indexer may hold the project now; its next commit rolls this one back.
		return fmt.Errorf("commit lease of %s lost before publishing %d", project, seq)
	}
	if err := w.seqs.Set(ctx, project, seq); err != nil {
		return err
	}
	w.published.Add(1)
	return w.mirror(ctx, project, seq)
}

// Commits is how many commits this writer has made visible: one per
// sequence, which may hold many file versions (commit.go).
func (w *Writer) Commits() int64 { return w.published.Load() }

func (w *Writer) mirror(ctx context.Context, project string, seq int64) error {
	return w.batch(ctx, []*models.Object{{Class: schema.ProjectStateClass, ID: strfmt.UUID(ids.Project(project)), Tenant: project,
		Properties: map[string]any{"sequence": seq, "updated_at": w.now().UTC().Format(time.RFC3339Nano)}}})
}
