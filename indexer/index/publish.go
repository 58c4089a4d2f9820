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
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// publishVersions commits at seq the versions of group still to commit
// (those neither decide nor the repair concluded), and concludes them: it
// writes their objects, publishes seq, and then writes their documents and
// records their states.
func (w *Writer) publishVersions(ctx context.Context, project string, group []*pendingVersion, seq int64, now string) {
	var apply []*pendingVersion
	for _, p := range group {
		if !p.finished {
			apply = append(apply, p)
		}
	}
	if len(apply) == 0 {
		return
	}
	fail := func(err error) { concludeAll(apply, "", err) }
	var objs, docs []*models.Object
	for _, p := range apply {
		if err := w.prepareMetadata(ctx, &p.labels); err != nil {
			fail(fmt.Errorf("metadata properties of %s: %w", project, err))
			return
		}
		objs = append(objs, versionObjects(p.fv, p.labels, seq, now, p.terms)...)
		docs = append(docs, fileDocument(p.fv, p.labels, seq, now))
	}
	if err := w.fenced(ctx, project, "write"); err != nil {
		fail(err)
		return
	}
	if err := w.batch(ctx, objs); err != nil {
		fail(fmt.Errorf("write %d file versions of %s: %w", len(apply), project, err))
		return
	}
	if err := w.publish(ctx, project, seq); err != nil {
		fail(fmt.Errorf("publish commit %d of %s: %w", seq, project, err))
		return
	}
	// Documents are the files' current state for listings, written once the commit is visible.
	if err := w.batch(ctx, docs); err != nil {
		fail(fmt.Errorf("write %d documents of %s: %w", len(docs), project, err))
		return
	}
	// Each file's state (and, with its vectors there, embedded) is a write
	// and a read of its own: at once too.
	inParallel(len(apply), perFileParallel, func(i int) {
		p := apply[i]
		fv := p.fv
		state := pipeline.StateIndexed
		if fv.Status != pipeline.StatusIndexed {
			state = pipeline.StateFailed
		}
		w.recordState(ctx, fv.Object, state, fv.Error, seq, fv.FileVersionID, fv.ExtractedAt, fv.Access)
		if p.replaces {
			w.closeReplacedOrWarn(ctx, project, fv.FileID, seq)
		}
		if state == pipeline.StateIndexed {
			if err := w.markEmbedded(ctx, fv, p.labels, seq); err != nil {
				p.conclude("", err)
				return
			}
		}
		p.conclude(Applied, nil)
	})
}

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
	if w.pauseHook != nil {
		w.pauseHook("publish")
	}
	fence, ok := w.fences.Load(project)
	if !ok {
		return fmt.Errorf("publish %d of %s: no fence: the commit did not intend its sequence", seq, project)
	}
	if err := w.seqs.Publish(ctx, project, seq, fence.(uint64)); err != nil {
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
