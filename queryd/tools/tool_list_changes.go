package tools

// list_changes: Strata's change feed, the files added, updated and deleted between two commits.

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/access"
)

const listChangesDescription = "Change feed: what changed in a project (files added, updated or deleted, with file_version_id and commit sequence) " +
	"since a commit sequence or a release, or between two releases; one entry per file (its net change), oldest first, paginated. " +
	"Keep next_since_sequence to ask again later."

//go:embed schemas/list_changes.input.json
var listChangesInput string

var listChangesTool = define(ToolsetStrata, "list_changes", listChangesDescription, listChangesInput, (*Tools).listChanges).
	when("the store lists commits (always in queryd)", func(t *Tools) bool { return t.changes != nil })

type listChangesArgs struct {
	ProjectReference string   `json:"project_reference"`
	BranchID         *string  `json:"branch_id"`
	SinceSequence    *float64 `json:"since_sequence"`
	SinceRelease     *string  `json:"since_release"`
	UntilRelease     *string  `json:"until_release"`
	cursorArgs
}

type change struct {
	Path          string `json:"path"`
	FileID        string `json:"file_id"`
	Change        string `json:"change"` // added, updated or deleted
	FileVersionID string `json:"file_version_id,omitempty"`
	Sequence      int64  `json:"sequence"`
	Status        string `json:"status,omitempty"`
}

type listChangesOut struct {
	Project           string   `json:"project"`
	From              int64    `json:"from_sequence"` // exclusive
	To                int64    `json:"to_sequence"`   // inclusive
	Changes           []change `json:"changes"`
	NextCursor        *string  `json:"next_cursor"`
	NextSinceSequence int64    `json:"next_since_sequence"`
}

// maxChangeVersions bounds the versions one change listing reads.
const maxChangeVersions = 10000

func (t *Tools) listChanges(ctx context.Context, p auth.Principal, a listChangesArgs) (any, error) {
	project, err := t.resolveProject(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	limit, err := intArg("limit", a.Limit, 100, 1, 500)
	if err != nil {
		return nil, err
	}
	branch, err := t.resolveBranch(ctx, project, a.BranchID)
	if err != nil {
		return nil, err
	}
	release := func(ref string) (int64, error) {
		var rel *store.Release
		var err error
		if len(ref) > 64 {
			return 0, userErrorf("a release is named by its version or release_id (at most 64 characters)")
		}
		if rel, err = t.view.ReleaseByVersion(ctx, project, branch, ref); err == nil && rel == nil {
			rel, err = t.view.ReleaseByID(ctx, project, ref)
		}
		if err != nil {
			return 0, err
		}
		if rel == nil {
			return 0, userErrorf("release not found: %q", clip(ref))
		}
		return rel.Sequence, nil
	}
	var from, to int64
	offset := 0
	pos, err := t.position(a.cursorArgs, "list_changes", project, func(pos cursor.Position) bool {
		return strings.Contains(pos.Scope, "-")
	})
	if err != nil {
		return nil, err
	}
	switch {
	case pos != nil:
		f, tt, _ := strings.Cut(pos.Scope, "-")
		from, _ = strconv.ParseInt(f, 10, 64)
		to, _ = strconv.ParseInt(tt, 10, 64)
		offset = pos.Offset
	default:
		if a.SinceSequence != nil && a.SinceRelease != nil {
			return nil, userErrorf("give since_sequence or since_release, not both")
		}
		if a.SinceSequence != nil {
			n, err := intArg("since_sequence", a.SinceSequence, 0, 0, 1<<53)
			if err != nil {
				return nil, err
			}
			from = int64(n)
		}
		if a.SinceRelease != nil {
			if from, err = release(*a.SinceRelease); err != nil {
				return nil, err
			}
		}
		if a.UntilRelease != nil {
			if to, err = release(*a.UntilRelease); err != nil {
				return nil, err
			}
		} else if to, err = t.base.Watermark(ctx, project); err != nil {
			return nil, err
		}
		if to < from {
			return nil, userErrorf("until_release (sequence %d) is before the start (sequence %d)", to, from)
		}
	}
	// Every version is read, whoever asks, and judged by the readers it was
	// committed with: a file the caller could read at from and cannot at to
	// is deleted for them, one they could not and now can is added.
	sys := access.System(ctx)
	grant := p.Grant()
	versions, err := t.changes.Committed(sys, project, branch, from, to, maxChangeVersions)
	if err != nil {
		return nil, err
	}
	versions, to = wholeSequences(versions, maxChangeVersions, to)
	// Net change per file: its last version in the range against its state at from.
	last := map[string]store.Version{}
	var order []string
	for _, v := range versions {
		if _, seen := last[v.FileID]; !seen {
			order = append(order, v.FileID)
		}
		last[v.FileID] = v
	}
	before, err := t.changes.VersionsAt(sys, project, order, from)
	if err != nil {
		return nil, err
	}
	all := []change{}
	for _, id := range order {
		v := last[id]
		prev, existed := before[id]
		existed = existed && !prev.Deleted && grant.Matches(prev.Readers)
		gone := v.Deleted || !grant.Matches(v.Readers)
		c := change{Path: v.FilePath, FileID: id, FileVersionID: v.FileVersionID, Sequence: v.ValidFrom, Status: v.Status}
		switch {
		case gone && !existed:
			continue // added and deleted within the range, or never readable
		case gone:
			c.Change, c.FileVersionID, c.Status = "deleted", "", ""
		case existed && prev.FileVersionID == v.FileVersionID:
			continue // replaced and restored: no net change
		case existed:
			c.Change = "updated"
		default:
			c.Change = "added"
		}
		all = append(all, c)
	}
	// Oldest change first.
	sortChanges(all)
	out := listChangesOut{Project: project, From: from, To: to, Changes: all[min(offset, len(all)):min(offset+limit, len(all))], NextSinceSequence: to}
	if offset+limit < len(all) {
		s := t.cursor.Encode(cursor.Position{Tool: "list_changes", Project: project, Scope: fmt.Sprintf("%d-%d", from, to), Offset: offset + limit, Limit: limit})
		out.NextCursor = &s
	}
	return out, nil
}

// wholeSequences cuts a listing that read as many versions as it may
// (limit) back to the sequences it read whole, and returns where it then
// ends: the versions of its last sequence may be only some of them (a
// group commit writes many at one sequence), and the rest are read from
// next_since_sequence. A listing that read fewer ends at to.
func wholeSequences(versions []store.Version, limit int, to int64) ([]store.Version, int64) {
	if len(versions) < limit || len(versions) == 0 {
		return versions, to
	}
	last := versions[len(versions)-1].ValidFrom
	keep := len(versions)
	for keep > 0 && versions[keep-1].ValidFrom == last {
		keep--
	}
	if keep == 0 { // one sequence of limit versions: a group commit holds at most 64 files
		return versions, last
	}
	return versions[:keep], versions[keep-1].ValidFrom
}

func sortChanges(cs []change) {
	slices.SortStableFunc(cs, func(x, y change) int {
		if c := cmp.Compare(x.Sequence, y.Sequence); c != 0 {
			return c
		}
		return strings.Compare(x.Path, y.Path)
	})
}
