package index

// The second step of a commit: what becomes of each event. An event is
// applied unless it was committed already (Duplicate) or a newer event of
// its file was (Stale); a committed one may also have lost its document
// (repaired, recover.go) or be torn by a Weaviate crash (its objects
// deleted by id and committed again, rollback.go).

import (
	"context"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// decideGroup decides what becomes of each version of group, whose commit
// follows watermark: it concludes the versions that are stale, duplicates
// or failed, and marks those whose document to repair; the others are to
// be committed. Of two events of one file in group the older is stale (or,
// the same version, a duplicate).
func (w *Writer) decideGroup(ctx context.Context, project string, group []*pendingVersion, watermark int64) {
	newest := map[string]*pendingVersion{}
	for _, p := range group {
		cur := newest[p.fv.FileID]
		if cur == nil || pipeline.CompareSequencers(p.fv.Object.Sequencer, cur.fv.Object.Sequencer) > 0 {
			newest[p.fv.FileID] = p
		}
	}
	// Each file's decision is two reads; they run at once, as the commit
	// lock is held meanwhile and every other writer of the project waits.
	type decision struct {
		verdict
		err error
	}
	decisions := make([]decision, len(group))
	inParallel(len(group), perFileParallel, func(i int) {
		p := group[i]
		if newest[p.fv.FileID] == p {
			o := p.fv.Object
			d := &decisions[i]
			d.verdict, d.err = w.decide(ctx, project, p.fv.FileID, o.Sequencer, p.fv.FileVersionID, watermark)
			// An access change applied while fv was on its way wins over fv's older read.
			p.labels = d.doc.labelsFor(p.fv)
			p.replaces = d.doc.exists && !d.doc.deleted
		}
	})
	for i, p := range group {
		if n := newest[p.fv.FileID]; n != p {
			out := Stale
			if n.fv.FileVersionID == p.fv.FileVersionID {
				out = Duplicate
			}
			p.conclude(out, nil)
			continue
		}
		out, done, err := decisions[i].out, decisions[i].done, decisions[i].err
		switch {
		case err != nil:
			p.conclude("", err)
		case done && out == repairDocument:
			p.repair = true
		case done && out == tornVersion:
			// Committed again once its objects are gone.
			if err := w.deleteVersionObjects(ctx, p.fv); err != nil {
				p.conclude("", err)
			}
		case done && out == Duplicate:
			// A redelivery, maybe of a commit whose vectors could not be
			// looked up or given their readers (markEmbedded): again, and
			// for the current version the embedded state with them.
			doc := decisions[i].doc
			if doc.fileVersionID == p.fv.FileVersionID && p.fv.Status == pipeline.StatusIndexed {
				p.conclude(out, w.markEmbedded(ctx, p.fv, doc.labels, doc.commitSeq))
			} else {
				p.conclude(out, w.syncVectorReaders(ctx, project, textFilter("file_version_id", p.fv.FileVersionID), doc.labels))
			}
		case done:
			p.conclude(out, nil)
		}
	}
}

// verdict is decide's answer about an event.
type verdict struct {
	out  Outcome
	done bool    // false: apply the event
	doc  current // the file's document as decide read it
}

// repairDocument is decide's answer for a committed event whose document
// write was lost: rewrite the document, commit nothing.
const repairDocument Outcome = "repair-document"

// tornVersion is decide's answer for a committed version whose chunks a
// filtered read does not all find: delete its objects by id and commit it
// again.
const tornVersion Outcome = "torn-version"

// decide says whether an event was committed already (its Version exists at
// or below the watermark: Duplicate) or is older than the file's current
// event (Stale). done=false means apply it.
//
// A Duplicate whose document is behind (a crash after publishing, before the
// document was written) is reported as repairDocument.
//
// The Version is looked up by its object id, which is the file_version_id
// of the commit that wrote it; an access change's Version repeats the
// file_version_id under an id of its own (access.go), so it is never taken
// for the file version's commit.
func (w *Writer) decide(ctx context.Context, project, fileID, sequencer, versionID string, watermark int64) (verdict, error) {
	cur, err := w.document(ctx, project, fileID)
	if err != nil {
		return verdict{}, err
	}
	newer := cur.exists && pipeline.CompareSequencers(cur.sequencer, sequencer) > 0
	v, err := w.object(ctx, schema.VersionClass, project, versionID)
	if err != nil {
		return verdict{}, err
	}
	switch {
	case newer:
		return verdict{Stale, true, cur}, nil
	case v != nil && int64(wvquery.Float(v, "valid_from")) <= watermark:
		// Committed, by its Version found by id; readers find chunks by
		// filters, which a weaviate-server killed inside a batch may have
		// left without some objects' index entries (a torn version, rollback.go).
		if whole, err := w.chunksFound(ctx, project, versionID, int(wvquery.Float(v, "chunk_count"))); err != nil || !whole {
			return verdict{tornVersion, err == nil, cur}, err
		}
		if !cur.exists || cur.fileVersionID != versionID {
			return verdict{repairDocument, true, cur}, nil
		}
		return verdict{Duplicate, true, cur}, nil
	}
	return verdict{doc: cur}, nil
}

// chunksFound reports whether a filtered read finds all want chunks of a
// file version.
func (w *Writer) chunksFound(ctx context.Context, project, fileVersionID string, want int) (bool, error) {
	if want <= 0 {
		return true, nil
	}
	resp, err := w.wv.GraphQL().Get().WithClassName(schema.ChunkClass).WithTenant(project).WithLimit(want).
		WithWhere(textFilter("file_version_id", fileVersionID)).WithFields(graphql.Field{Name: "index"}).Do(ctx)
	if err != nil {
		return false, fmt.Errorf("count chunks of %s: %w", fileVersionID, err)
	}
	if len(resp.Errors) > 0 {
		return false, fmt.Errorf("count chunks of %s: %s", fileVersionID, resp.Errors[0].Message)
	}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.ChunkClass].([]any)
	return len(rows) >= want, nil
}
