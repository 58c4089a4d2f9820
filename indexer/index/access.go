package index

// An access change (pipeline.KindTagsChanged): a file's groups changed
// without new content. Nothing is extracted or embedded again and no file
// version is made: the readers of every object the file has, of every
// version, are merged in place (releases are read with the groups a
// document has now), and a Version repeating the visible file version with
// the new readers is committed, so readers of the catalog (listings,
// list_changes) see the change at a sequence like any other.
//
// Readers follow the change before its objects do: it is announced
// (relabels.go) before the project's lock is taken, queryd reads the file
// with the announced readers, and the announcement is withdrawn once the
// change is done.
//
// Order, so that a crash anywhere is finished by the redelivery:
//  1. every object but the visible Version and the Document;
//  2. the new Version, and publishing its sequence;
//  3. the Version that was visible before;
//  4. the Document, whose access_read_at says the change is done (a
//     redelivery that is not newer is then ignored);
//  5. the file's vectors once more (see vectors.go: vectors written while
//     the change ran either are found here or find the new Document).
//
// Until step 2 the visible Version still has the old readers, so a
// redelivery commits the new Version; after it, the visible Version has
// the new readers and no second one is made.

import (
	"context"
	"fmt"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// Absent is the outcome of an access change of a file the index has no
// document of. Nothing is written: the file's first version may still be
// on its way, read with the groups before the change, so HandleChunks has
// the change delivered again (see absentAccessChange); once that version
// is committed, the redelivery is newer than its read and applies.
const Absent Outcome = "absent"

// ApplyAccessChange gives every object of ac's file the readers of
// ac.Access and the metadata merged from ac's tags and user metadata with
// the document's own file metadata, unless the document records a read of
// the tags that is as new or newer. Once the document holds ac's read, its
// tags digest is recorded in the object's state (recordTags).
func (w *Writer) ApplyAccessChange(ctx context.Context, ac pipeline.TagsChanged) (Outcome, error) {
	out, err := w.applyAccessChange(ctx, ac)
	if err == nil && (out == Applied || out == Duplicate) {
		w.recordTags(ctx, ac)
	}
	return out, err
}

func (w *Writer) applyAccessChange(ctx context.Context, ac pipeline.TagsChanged) (Outcome, error) {
	if err := validateAccessChange(ac); err != nil {
		return "", err
	}
	project, want := ac.Object.Project, labels{readAt: ac.Access.ReadAt}
	// A change may be a project's first message: reads need its tenants.
	if err := w.ensureTenant(ctx, project); err != nil {
		return "", err
	}
	// Without the lock first: a stale or early change costs one read.
	doc, err := w.document(ctx, project, ac.FileID)
	if err != nil {
		return "", err
	}
	if out, skip := skipAccess(doc, want); skip {
		return out, nil
	}
	// A container's members take its tags (members.go): announced from
	// here, relabelled as the lock finds them.
	var members []memberDoc
	if containerFormats[doc.format] || doc.deleted {
		if members, err = w.memberDocuments(ctx, project, ac.Object.Branch, ac.Object.Path); err != nil {
			return "", fmt.Errorf("access change of %s: members: %w", ac.Object.Path, err)
		}
	}
	// Before the lock: readers follow the change from now on, even while
	// another commit of the project (or this file's previous change) runs.
	withdraw := w.announceRelabel(ctx, ac, doc.fileVersionID)
	defer withdraw()
	for _, m := range members {
		mac := ac
		mac.FileID, mac.Object.Path = m.fileID, m.path
		defer w.announceRelabel(ctx, mac, m.fileVersionID)()
	}
	ctx, h, err := w.lock(ctx, project)
	if err != nil {
		return "", err
	}
	defer h.unlock()
	return w.changeAccess(ctx, h, ac)
}

func validateAccessChange(ac pipeline.TagsChanged) error {
	if ac.Object.Project == "" || !ids.Valid(ac.FileID) {
		return fmt.Errorf("access change: project and a file_id UUID are required (got %q, %q)", ac.Object.Project, ac.FileID)
	}
	return nil
}

// skipAccess says whether an access change has nothing to do: the file has
// no document yet, or the document records a read at least as new.
func skipAccess(doc current, want labels) (Outcome, bool) {
	switch {
	case !doc.exists:
		return Absent, true
	case want.readAt.Equal(doc.labels.readAt):
		return Duplicate, true
	case want.readAt.Before(doc.labels.readAt):
		return Stale, true
	}
	return "", false
}

// changeAccess applies a tag change under the project's commit lock, to
// the file and to its members: each member's readers and metadata are the
// change's, merged with its own file metadata. Their access Versions are
// committed at one sequence; the container's Document is written last, as
// it says the change is done.
func (w *Writer) changeAccess(ctx context.Context, h *hold, ac pipeline.TagsChanged) (Outcome, error) {
	project := h.project
	doc, err := w.document(ctx, project, ac.FileID) // again: a commit may have run while we waited
	if err != nil {
		return "", err
	}
	// The file's own metadata is the current version's, which the document holds.
	want := labelsOfChange(ac, doc.labels.sources.File)
	if out, skip := skipAccess(doc, want); skip {
		return out, nil
	}
	wm, err := w.settle(ctx, h)
	if err != nil {
		return "", err
	}
	var members []memberDoc // as the lock finds them: a commit may have added some
	if containerFormats[doc.format] || doc.deleted {
		if members, err = w.lockedMembers(ctx, project, ac.Object.Branch, ac.Object.Path, wm); err != nil {
			return "", fmt.Errorf("access change of %s: members: %w", ac.Object.Path, err)
		}
	}
	var files []relabeled // the members first: the container's Document is last
	for _, m := range members {
		if mw := labelsOfChange(ac, m.labels.sources.File); mw.readAt.After(m.labels.readAt) {
			files = append(files, relabeled{fileID: m.fileID, want: mw})
		}
	}
	files = append(files, relabeled{fileID: ac.FileID, want: want})
	for i := range files {
		if err := w.prepareMetadata(ctx, &files[i].want); err != nil {
			return "", err
		}
	}
	now := w.now().UTC().Format(time.RFC3339Nano)
	var versions []*models.Object
	for i := range files {
		f := &files[i]
		if f.visible, err = w.visibleVersion(ctx, project, f.fileID, wm); err != nil {
			return "", err
		}
		if err := h.fenced(ctx, "write"); err != nil {
			return "", err
		}
		if err := w.setFileReaders(ctx, project, f.fileID, objectID(f.visible), f.want); err != nil {
			return "", err
		}
		// A deleted file is not listed: its readers change (a release may
		// still show it) but there is no new state of it to commit.
		if f.visible != nil && f.visible["deleted"] != true && !labelsOfProps(f.visible).same(f.want) {
			versions = append(versions, accessVersion(project, f.visible, f.want, wm+1, now))
		}
	}
	if len(versions) > 0 {
		if err := w.commitAccess(ctx, h, versions, wm+1); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		if f.visible != nil {
			if _, err := w.syncObjects(ctx, schema.VersionClass, project, idFilter(objectID(f.visible)), f.want.versionProps(map[string]any{})); err != nil {
				return "", fmt.Errorf("access change of %s: %w", f.fileID, err)
			}
		}
		if err := w.merge(ctx, schema.DocumentClass, project, []string{f.fileID}, f.want.documentProps(map[string]any{})); err != nil {
			return "", fmt.Errorf("access change of %s: %w", f.fileID, err)
		}
		if err := w.syncVectorReaders(ctx, project, textFilter("file_id", f.fileID), f.want); err != nil {
			return "", fmt.Errorf("access change of %s: %w", f.fileID, err)
		}
	}
	return Applied, nil
}

// relabeled is a file an access change relabels: the labels it gets, and
// its Version visible before the change (nil: none).
type relabeled struct {
	fileID  string
	want    labels
	visible map[string]any
}

// setFileReaders merges want into every Section, Chunk, ChunkVector and
// Version of the file but the Version with id visibleID ("" for none).
func (w *Writer) setFileReaders(ctx context.Context, project, fileID, visibleID string, want labels) error {
	file := textFilter("file_id", fileID)
	if _, err := w.syncObjects(ctx, schema.SectionClass, project, file, want.objectProps(map[string]any{})); err != nil {
		return fmt.Errorf("access change of %s: %w", fileID, err)
	}
	if _, err := w.syncObjects(ctx, schema.ChunkClass, project, file, want.chunkProps(map[string]any{})); err != nil {
		return fmt.Errorf("access change of %s: %w", fileID, err)
	}
	if err := w.syncVectorReaders(ctx, project, file, want); err != nil {
		return fmt.Errorf("access change of %s: %w", fileID, err)
	}
	versions := file
	if visibleID != "" {
		versions = wvquery.And(file, filters.Where().WithPath([]string{"_id"}).WithOperator(filters.NotEqual).WithValueText(visibleID))
	}
	if _, err := w.syncObjects(ctx, schema.VersionClass, project, versions, want.versionProps(map[string]any{})); err != nil {
		return fmt.Errorf("access change of %s: %w", fileID, err)
	}
	return nil
}

// commitAccess commits the access change at seq: for each file, a Version
// repeating the visible one (the same file_version_id, so its chunks stay
// the visible ones) with the new readers (accessVersion).
func (w *Writer) commitAccess(ctx context.Context, h *hold, versions []*models.Object, seq int64) error {
	project := h.project
	if err := h.intend(ctx, seq); err != nil {
		return err
	}
	if err := h.fenced(ctx, "write"); err != nil {
		return err
	}
	if err := w.batch(ctx, versions); err != nil {
		return fmt.Errorf("write %d access versions of %s: %w", len(versions), project, err)
	}
	if err := w.publish(ctx, h, seq); err != nil {
		return fmt.Errorf("publish commit %d of %s: %w", seq, project, err)
	}
	return nil
}

// visibleVersion returns the file's Version visible at watermark (with its
// object id), or nil.
func (w *Writer) visibleVersion(ctx context.Context, project, fileID string, watermark int64) (map[string]any, error) {
	fields := []graphql.Field{{Name: "valid_from"}, {Name: schema.ReadersProperty}, {Name: "access_error"}, {Name: schema.MetadataProperty},
		{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}}}
	for _, f := range versionFields {
		fields = append(fields, graphql.Field{Name: f})
	}
	resp, err := w.wv.GraphQL().Get().WithClassName(schema.VersionClass).WithTenant(project).
		WithWhere(wvquery.And(textFilter("file_id", fileID), intFilter("valid_from", filters.LessThanEqual, watermark))).
		WithSort(graphql.Sort{Path: []string{"valid_from"}, Order: graphql.Desc}).WithLimit(1).WithFields(fields...).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("read visible version of %s: %w", fileID, err)
	}
	if len(resp.Errors) > 0 {
		return nil, fmt.Errorf("read visible version of %s: %s", fileID, resp.Errors[0].Message)
	}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.VersionClass].([]any)
	if len(rows) == 0 {
		return nil, nil
	}
	row, _ := rows[0].(map[string]any)
	return row, nil
}

// lockedMembers are the members of the container at path on branch an
// access change relabels: their Documents (which hold the tags read each
// has), and the members with a Version visible at wm but no Document (a
// crash after their commit's publish lost it), which any read is newer than.
func (w *Writer) lockedMembers(ctx context.Context, project, branch, path string, wm int64) ([]memberDoc, error) {
	docs, err := w.memberDocuments(ctx, project, branch, path)
	if err != nil {
		return nil, err
	}
	versions, err := w.memberVersions(ctx, project, branch, path, wm)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, d := range docs {
		have[d.fileID] = true
	}
	for _, v := range versions {
		if !have[v.fileID] {
			v.labels.readAt = time.Time{}
			docs = append(docs, v)
		}
	}
	return docs, nil
}
