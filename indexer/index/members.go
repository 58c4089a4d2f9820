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
	"sort"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
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

// memberDoc is a member as the index has it: its Document, or its
// Version visible at a sequence (memberVersions).
type memberDoc struct {
	fileID, path, fileVersionID, sequencer string
	deleted                                bool
	labels                                 labels
}

// memberFields are the fields memberDocuments and memberVersions read.
var memberFields = []graphql.Field{{Name: "file_id"}, {Name: "file_path"}, {Name: "file_version_id"}, {Name: "deleted"},
	{Name: "sequencer"}, {Name: schema.ReadersProperty}, {Name: "access_error"}, {Name: schema.MetadataProperty},
	{Name: schema.MetadataSourcesProperty}, {Name: schema.MetadataWarningsProperty}}

// memberPrefix is the filter of the paths of container's members on
// branch, and the prefix to check them by again: Like's wildcards in a path
// match themselves and more.
func memberPrefix(branch, container string) (*filters.WhereBuilder, string) {
	paths, prefix := memberPaths(container)
	return wvquery.And(textFilter("branch", branch), paths), prefix
}

// memberPaths is the filter of the paths of container's members on every
// branch, and the prefix to check them by again.
func memberPaths(container string) (*filters.WhereBuilder, string) {
	prefix := objkey.MemberPath(container, "")
	pattern := strings.NewReplacer("*", "?", "?", "?").Replace(prefix) + "*"
	return filters.Where().WithPath([]string{"file_path"}).WithOperator(filters.Like).WithValueText(pattern), prefix
}

func memberOf(r map[string]any) memberDoc {
	return memberDoc{fileID: wvquery.Str(r, "file_id"), path: wvquery.Str(r, "file_path"), fileVersionID: wvquery.Str(r, "file_version_id"),
		sequencer: wvquery.Str(r, "sequencer"), deleted: r["deleted"] == true, labels: labelsOfProps(r)}
}

// memberDocuments returns the Documents of the members of the file at
// container on branch, tombstones included: what an access change
// relabels (a Document records the tags read it holds).
func (w *Writer) memberDocuments(ctx context.Context, project, branch, container string) ([]memberDoc, error) {
	where, prefix := memberPrefix(branch, container)
	var out []memberDoc
	err := w.eachPage(ctx, schema.DocumentClass, project, where, append(memberFields, graphql.Field{Name: "access_read_at"}), func(rows []map[string]any) error {
		for _, r := range rows {
			if strings.HasPrefix(wvquery.Str(r, "file_path"), prefix) {
				out = append(out, memberOf(r))
			}
		}
		return nil
	})
	return out, err
}

// memberVersions returns, for each member of the file at container on
// branch that has a Version visible at sequence at, that Version (a
// delete's too). Versions, not Documents: a commit's Versions are what it
// published, while its Documents are written after the publish and may be
// lost with a crash until the commit's redelivery repairs them.
func (w *Writer) memberVersions(ctx context.Context, project, branch, container string, at int64) ([]memberDoc, error) {
	where, prefix := memberPrefix(branch, container)
	where = wvquery.And(where, intFilter("valid_from", filters.LessThanEqual, at))
	latest := map[string]memberDoc{}
	from := map[string]int64{}
	err := w.eachPage(ctx, schema.VersionClass, project, where, append(memberFields, graphql.Field{Name: "valid_from"}), func(rows []map[string]any) error {
		for _, r := range rows {
			m, vf := memberOf(r), int64(wvquery.Float(r, "valid_from"))
			if !strings.HasPrefix(m.path, prefix) {
				continue
			}
			if cur, ok := from[m.fileID]; !ok || vf > cur {
				latest[m.fileID], from[m.fileID] = m, vf
			}
		}
		return nil
	})
	out := make([]memberDoc, 0, len(latest))
	for _, m := range latest {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

// goneMember is a member a commit deletes: fileID on branch (the commit's,
// but for a main member hidden on a branch), readable by labels (its last
// readers), with the sequencer of the container event that deletes it.
type goneMember struct {
	fileID, path, branch, sequencer string
	labels                          labels
	// own is false for main's member hidden on a branch: the branch had no
	// rows of it to close.
	own bool
}

// mayHaveMembers reports whether a commit of p must look for members to
// delete: p has members, its file's document was a container, or p is a
// branch's first version of a file main has as a container (mainFormat).
func mayHaveMembers(p *pendingVersion) bool {
	return len(p.fv.Members) > 0 || containerFormats[p.had] || containerFormats[p.mainHad]
}

// mainFormat is the format of main's Document of the file at path ("" for
// none, or a deleted one): on a branch without a document of its own, what
// the branch shows of it.
func (w *Writer) mainFormat(ctx context.Context, project, path string) (string, error) {
	props, err := w.object(ctx, schema.DocumentClass, project, ids.File(project, "", path))
	if err != nil || props == nil || props["deleted"] == true {
		return "", err
	}
	return wvquery.Str(props, "format"), nil
}

// goneMembers are the members a commit at seq of the container at o (with
// the members keep, nil for a delete) deletes, as the index stands at
// seq-1: those of its branch not in keep, and on a branch main's not in
// keep that the branch has no version of (the branch's container hides
// them); on main, also main's new members on each branch with a container
// of its own (hiddenOnBranches).
func (w *Writer) goneMembers(ctx context.Context, o pipeline.Object, keep []pipeline.FileVersion, seq int64) ([]goneMember, error) {
	kept := make(map[string]bool, len(keep))
	for _, m := range keep {
		kept[m.Object.Path] = true
	}
	own, err := w.memberVersions(ctx, o.Project, o.Branch, o.Path, seq-1)
	if err != nil {
		return nil, err
	}
	var gone []goneMember
	seen := map[string]bool{}
	for _, d := range own {
		seen[d.path] = true
		if !d.deleted && !kept[d.path] {
			gone = append(gone, goneMember{fileID: d.fileID, path: d.path, branch: o.Branch, sequencer: o.Sequencer, labels: d.labels, own: true})
		}
	}
	if o.Branch == "" {
		hidden, err := w.hiddenOnBranches(ctx, o, keep, seq)
		return append(gone, hidden...), err
	}
	mains, err := w.memberVersions(ctx, o.Project, "", o.Path, seq-1)
	if err != nil {
		return nil, err
	}
	for _, d := range mains {
		if !d.deleted && !kept[d.path] && !seen[d.path] {
			gone = append(gone, goneMember{fileID: ids.File(o.Project, o.Branch, d.path), path: d.path, branch: o.Branch, sequencer: o.Sequencer, labels: d.labels})
		}
	}
	return gone, nil
}

// hiddenOnBranches are the members of main's container at o, committed at
// seq with the members keep, that a branch with a container of its own at
// the same path (a version or a delete) must not show: those it has no
// version of. A branch's container hides main's, members and all. Each
// delete carries the branch container's sequencer, not main's: events of
// two keys are not ordered, and the branch's next version of its
// container must not find its own member stale.
func (w *Writer) hiddenOnBranches(ctx context.Context, o pipeline.Object, keep []pipeline.FileVersion, seq int64) ([]goneMember, error) {
	if len(keep) == 0 {
		return nil, nil
	}
	var branches []memberDoc // the container's Document on each branch that has one
	where := wvquery.And(textFilter("file_path", o.Path), filters.Where().WithPath([]string{"branch"}).WithOperator(filters.NotEqual).WithValueText(""))
	err := w.eachPage(ctx, schema.DocumentClass, o.Project, where, append(memberFields, graphql.Field{Name: "branch"}), func(rows []map[string]any) error {
		for _, r := range rows {
			b := memberOf(r)
			b.path = wvquery.Str(r, "branch")
			branches = append(branches, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var hidden []goneMember
	for _, b := range branches {
		versions, err := w.memberVersions(ctx, o.Project, b.path, o.Path, seq-1)
		if err != nil {
			return nil, err
		}
		has := map[string]bool{}
		for _, d := range versions {
			has[d.path] = true
		}
		for _, m := range keep {
			if !has[m.Object.Path] {
				hidden = append(hidden, goneMember{fileID: ids.File(o.Project, b.path, m.Object.Path), path: m.Object.Path, branch: b.path,
					sequencer: b.sequencer, labels: b.labels})
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
		mo.Path, mo.Branch, mo.Sequencer = g.path, g.branch, g.sequencer
		if g.branch != o.Branch {
			container, _ := objkey.ContainerOf(g.path)
			mo.Key = o.Project + "@" + g.branch + "/" + container
		}
		d := pipeline.FileDeleted{Object: mo, FileID: g.fileID}
		v, t := deleteObjects(d, ids.FileVersion(g.fileID, "delete@"+g.sequencer, ""), g.labels, seq, now)
		versions, tombstones = append(versions, v), append(tombstones, t)
	}
	return versions, tombstones
}

// deletedAt are the tombstones of the members the commit at seq of the
// container at o deleted (on its branch and, from main, on the branches
// that hide main's members), for a repair of that commit's documents: a
// crash after its publish lost them. A member committed again since has a
// document of its own that no tombstone may cover.
func (w *Writer) deletedAt(ctx context.Context, o pipeline.Object, seq int64, now string) ([]*models.Object, error) {
	paths, prefix := memberPaths(o.Path)
	where := wvquery.And(paths, intFilter("valid_from", filters.Equal, seq),
		filters.Where().WithPath([]string{"deleted"}).WithOperator(filters.Equal).WithValueBoolean(true))
	if o.Branch != "" { // a branch's commit deletes on its branch alone
		where = wvquery.And(where, textFilter("branch", o.Branch))
	}
	var rows []map[string]any
	err := w.eachPage(ctx, schema.VersionClass, o.Project, where, append(memberFields, graphql.Field{Name: "branch"}), func(page []map[string]any) error {
		rows = append(rows, page...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var tombstones []*models.Object
	for _, r := range rows {
		m := memberOf(r)
		if !strings.HasPrefix(m.path, prefix) {
			continue
		}
		if later, err := w.committedAfter(ctx, o.Project, m.fileID, seq); err != nil || later {
			if err != nil {
				return nil, err
			}
			continue
		}
		mo := o
		mo.Path, mo.Branch, mo.Sequencer, mo.Key = m.path, wvquery.Str(r, "branch"), m.sequencer, o.Project+"/"+o.Path
		if mo.Branch != "" {
			mo.Key = o.Project + "@" + mo.Branch + "/" + o.Path
		}
		_, t := deleteObjects(pipeline.FileDeleted{Object: mo, FileID: m.fileID}, m.fileVersionID, m.labels, seq, now)
		tombstones = append(tombstones, t)
	}
	return tombstones, nil
}

// committedAfter reports whether fileID has a Version committed after seq.
func (w *Writer) committedAfter(ctx context.Context, project, fileID string, seq int64) (bool, error) {
	later := false
	where := wvquery.And(textFilter("file_id", fileID), intFilter("valid_from", filters.GreaterThan, seq))
	err := w.eachPage(ctx, schema.VersionClass, project, where, []graphql.Field{{Name: "valid_from"}}, func(rows []map[string]any) error {
		later = later || len(rows) > 0
		return nil
	})
	return later, err
}

// goneMembersOf are, for each version of ps committed at seq, the members
// its commit deletes (goneMembers; none for a member, or a version that
// cannot have any), read at once; a member deleted twice (by main's commit
// and a branch's in one group) or also committed by the group is left out.
func (w *Writer) goneMembersOf(ctx context.Context, ps []*pendingVersion, seq int64) ([][]goneMember, error) {
	gone := make([][]goneMember, len(ps))
	errs := make([]error, len(ps))
	inParallel(len(ps), perFileParallel, func(i int) {
		p := ps[i]
		if p.container == nil && !isMember(p.fv.Object.Path) && mayHaveMembers(p) {
			gone[i], errs[i] = w.goneMembers(ctx, p.fv.Object, p.fv.Members, seq)
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("members of %s: %w", ps[i].fv.Object.Path, err)
		}
	}
	taken := map[string]bool{}
	for _, p := range ps {
		taken[p.fv.FileID] = true
	}
	for i := range gone {
		kept := gone[i][:0]
		for _, g := range gone[i] {
			if !taken[g.fileID] {
				taken[g.fileID] = true
				kept = append(kept, g)
			}
		}
		gone[i] = kept
	}
	return gone, nil
}

// inheritLabels are a member's labels under its container's c (a later
// read of the container's tags than the member's own): c's readers, error
// and tags, with the member's own file metadata.
func inheritLabels(c labels, fv pipeline.FileVersion) labels {
	l := c
	l.sources.File = fv.MetadataSources.File
	l.meta, l.metaWarnings = metadata.Merge(l.sources)
	return l
}
