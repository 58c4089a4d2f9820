package index

// A container's members: the files inside an uploaded file (a message's
// attachments, an archive's files, a mailbox's messages, and theirs), each
// a document of its own at <container path>//<member path>
// (objkey.MemberPath). They come inside the container's file version
// (pipeline.FileVersion.Members) and are one version with it:
//
//   - committed in the same group commit, at one sequence (commit.go: a
//     set is never split by MaxGroup, and when one of its versions fails
//     the whole set fails and is delivered again);
//   - an overwrite deletes, at the same sequence, the members the new
//     version no longer has; on a branch also main's members it does not
//     have, which the branch's container hides (goneMembers);
//   - a delete of the container deletes every member with it (delete.go);
//   - a tag change relabels every member with it (access.go).
//
// Which members a container has is read from the index itself: the
// Documents of its branch whose path starts with the container's path and
// "//", which no uploaded file's path can (objkey.Parse refuses an empty
// segment). A member has no object of its own in the bucket, so no object
// state is recorded for it (recordState) and the reconcile pass, which
// compares object states with the bucket, never sees one.

import (
	"context"
	"fmt"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// containerFormats are the formats whose files have members: a file whose
// document was one of these may leave members behind when it changes.
var containerFormats = map[string]bool{"email": true, "mbox": true, "zip": true}

// isMember reports whether path names a member of a container.
func isMember(path string) bool {
	_, member := objkey.ContainerOf(path)
	return member
}

// memberDoc is a member's Document as the index has it.
type memberDoc struct {
	fileID, path, fileVersionID string
	deleted                     bool
	labels                      labels
}

// memberFields are the Document fields memberDocuments reads.
var memberFields = []graphql.Field{{Name: "file_id"}, {Name: "file_path"}, {Name: "file_version_id"}, {Name: "deleted"},
	{Name: schema.ReadersProperty}, {Name: "access_error"}, {Name: "access_read_at"}, {Name: schema.MetadataProperty},
	{Name: schema.MetadataSourcesProperty}, {Name: schema.MetadataWarningsProperty}}

// memberDocuments returns the Documents of the members of the file at
// container on branch, tombstones included.
func (w *Writer) memberDocuments(ctx context.Context, project, branch, container string) ([]memberDoc, error) {
	prefix := objkey.MemberPath(container, "")
	// Like's wildcards in a path match themselves and more: the prefix is
	// checked again below.
	pattern := strings.NewReplacer("*", "?", "?", "?").Replace(prefix) + "*"
	where := wvquery.And(textFilter("branch", branch),
		filters.Where().WithPath([]string{"file_path"}).WithOperator(filters.Like).WithValueText(pattern))
	var out []memberDoc
	err := w.eachPage(ctx, schema.DocumentClass, project, where, memberFields, func(rows []map[string]any) error {
		for _, r := range rows {
			p := wvquery.Str(r, "file_path")
			if !strings.HasPrefix(p, prefix) {
				continue
			}
			out = append(out, memberDoc{fileID: wvquery.Str(r, "file_id"), path: p, fileVersionID: wvquery.Str(r, "file_version_id"),
				deleted: r["deleted"] == true, labels: labelsOfProps(r)})
		}
		return nil
	})
	return out, err
}

// goneMember is a member a commit deletes: fileID on branch (the commit's,
// but for a main member hidden on a branch), readable by labels (its last
// readers).
type goneMember struct {
	fileID, path, branch string
	labels               labels
	// own is false for main's member hidden on a branch: the branch had no
	// rows of it to close.
	own bool
}

// mayHaveMembers reports whether a commit of p must look for members to
// delete: p has members, its file's document was a container, or p is a
// branch's first version of a file main may have as a container.
func mayHaveMembers(p *pendingVersion) bool {
	return len(p.fv.Members) > 0 || containerFormats[p.had] || (p.fv.Object.Branch != "" && !p.hadDocument)
}

// goneMembers are the members a commit of the container at o (with the
// members keep, nil for a delete) deletes: those of its branch not in
// keep, and on a branch main's not in keep that the branch has no
// document of (the branch's container hides them).
func (w *Writer) goneMembers(ctx context.Context, o pipeline.Object, keep []pipeline.FileVersion) ([]goneMember, error) {
	kept := make(map[string]bool, len(keep))
	for _, m := range keep {
		kept[m.Object.Path] = true
	}
	own, err := w.memberDocuments(ctx, o.Project, o.Branch, o.Path)
	if err != nil {
		return nil, err
	}
	var gone []goneMember
	seen := map[string]bool{}
	for _, d := range own {
		seen[d.path] = true
		if !d.deleted && !kept[d.path] {
			gone = append(gone, goneMember{fileID: d.fileID, path: d.path, branch: o.Branch, labels: d.labels, own: true})
		}
	}
	if o.Branch == "" {
		hidden, err := w.hiddenOnBranches(ctx, o, keep)
		return append(gone, hidden...), err
	}
	mains, err := w.memberDocuments(ctx, o.Project, "", o.Path)
	if err != nil {
		return nil, err
	}
	for _, d := range mains {
		if !d.deleted && !kept[d.path] && !seen[d.path] {
			gone = append(gone, goneMember{fileID: ids.File(o.Project, o.Branch, d.path), path: d.path, branch: o.Branch, labels: d.labels})
		}
	}
	return gone, nil
}

// hiddenOnBranches are the members of main's container at o, committed
// with the members keep, that a branch with a container of its own at the
// same path (a version or a delete) must not show: those it has no
// document of. A branch's container hides main's, members and all.
func (w *Writer) hiddenOnBranches(ctx context.Context, o pipeline.Object, keep []pipeline.FileVersion) ([]goneMember, error) {
	if len(keep) == 0 {
		return nil, nil
	}
	var branches []memberDoc // the container's Document on each branch that has one
	where := wvquery.And(textFilter("file_path", o.Path), filters.Where().WithPath([]string{"branch"}).WithOperator(filters.NotEqual).WithValueText(""))
	err := w.eachPage(ctx, schema.DocumentClass, o.Project, where, append(memberFields, graphql.Field{Name: "branch"}), func(rows []map[string]any) error {
		for _, r := range rows {
			branches = append(branches, memberDoc{path: wvquery.Str(r, "branch"), labels: labelsOfProps(r)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var hidden []goneMember
	for _, b := range branches {
		docs, err := w.memberDocuments(ctx, o.Project, b.path, o.Path)
		if err != nil {
			return nil, err
		}
		has := map[string]bool{}
		for _, d := range docs {
			has[d.path] = true
		}
		for _, m := range keep {
			if !has[m.Object.Path] {
				hidden = append(hidden, goneMember{fileID: ids.File(o.Project, b.path, m.Object.Path), path: m.Object.Path, branch: b.path, labels: b.labels})
			}
		}
	}
	return hidden, nil
}

// memberDeletes are the delete Versions and tombstone Documents of gone
// members, committed at seq by the commit of the container at o.
func memberDeletes(o pipeline.Object, gone []goneMember, seq int64, now string) (versions, tombstones []*models.Object) {
	for _, g := range gone {
		mo := o
		mo.Path, mo.Branch = g.path, g.branch
		if g.branch != o.Branch {
			container, _ := objkey.ContainerOf(g.path)
			mo.Key = o.Project + "@" + g.branch + "/" + container
		}
		d := pipeline.FileDeleted{Object: mo, FileID: g.fileID}
		v, t := deleteObjects(d, ids.FileVersion(g.fileID, "delete@"+o.Sequencer, ""), g.labels, seq, now)
		versions, tombstones = append(versions, v), append(tombstones, t)
	}
	return versions, tombstones
}

// goneMembersOf are, for each version of ps, the members its commit
// deletes (goneMembers; none for a member, or a version that cannot have
// any), read at once.
func (w *Writer) goneMembersOf(ctx context.Context, ps []*pendingVersion) ([][]goneMember, error) {
	gone := make([][]goneMember, len(ps))
	errs := make([]error, len(ps))
	inParallel(len(ps), perFileParallel, func(i int) {
		p := ps[i]
		if p.container == nil && !isMember(p.fv.Object.Path) && mayHaveMembers(p) {
			gone[i], errs[i] = w.goneMembers(ctx, p.fv.Object, p.fv.Members)
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("members of %s: %w", ps[i].fv.Object.Path, err)
		}
	}
	return gone, nil
}
