package tools

// Strata's read-your-writes, change feed and failures tools.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/deadletters"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/stagehealth"
)

// ObjectStates reads per-object freshness (NATS KV strata_objects).
type ObjectStates interface {
	Get(ctx context.Context, project, objectKey string) (*pipeline.ObjectState, error)
}

// DeadLetters reads the dead-letter stream.
type DeadLetters interface {
	Recent(ctx context.Context, max int) ([]deadletters.Letter, error)
}

// ChangeReader lists committed versions.
type ChangeReader interface {
	Committed(ctx context.Context, project, branch string, from, to int64, limit int) ([]store.Version, error)
	VersionsAt(ctx context.Context, project string, fileIDs []string, at int64) (map[string]store.Version, error)
}

// StageHealth reads the worker replicas' reports (stagehealth.Read).
type StageHealth interface {
	Stages(ctx context.Context) ([]stagehealth.Report, error)
}

// SetStageHealth makes status name the worker replicas held back by a full
// disk or their memory budget (to admins).
func (t *Tools) SetStageHealth(h StageHealth) *Tools {
	t.stages = h
	return t
}

// SetStrata enables Strata's own tools that need the index's extra reads
// and the pipeline's state (any may be nil: its tools are not served).
func (t *Tools) SetStrata(k KeywordSearcher, c ChangeReader, states ObjectStates, dead DeadLetters) *Tools {
	t.keyword, t.changes, t.states, t.dead = k, c, states, dead
	return t
}

// MaxWait bounds object_status's wait.
const MaxWait = 30 * time.Second

const objectStatusDescription = "Read-your-writes: given an uploaded object's key (\"<project>[@<branch>]/<path>\", optionally its ETag), " +
	"report whether its latest upload is pending, indexed (keyword-searchable), embedded (vector-searchable too), failed (with the reason) or deleted, " +
	"and optionally wait up to 30 s until that version is searchable. The answer carries the index watermark."

type objectStatusArgs struct {
	Key         string   `json:"key"`
	ETag        *string  `json:"etag"`
	WaitSeconds *float64 `json:"wait_seconds"`
}

type objectStatusOut struct {
	Key           string `json:"key"`
	Project       string `json:"project"`
	State         string `json:"state"` // pending, indexed, embedded, failed, deleted or unknown (never seen)
	ETag          string `json:"etag,omitempty"`
	FileVersionID string `json:"file_version_id,omitempty"`
	Sequence      int64  `json:"sequence,omitempty"` // the commit it became visible at
	Error         string `json:"error,omitempty"`
	UpdatedAt     string `json:"updated_at,omitempty"`
	// Stages: when this upload was made, seen by the ingestor, extracted,
	// committed (keyword-searchable) and embedded (vector-searchable).
	Stages *objectStages `json:"stages,omitempty"`
	// Searchable: keyword search finds this version, and vector search too
	// when the server embeds queries.
	Searchable bool   `json:"searchable"`
	Note       string `json:"note,omitempty"`
	Watermark  int64  `json:"watermark"`
	WaitedMS   int64  `json:"waited_ms"`
	TimedOut   bool   `json:"timed_out"`
}

// objectStages are RFC 3339 times, absent until reached, and each step's
// milliseconds since the upload (MinIO's clock against the workers').
type objectStages struct {
	Uploaded    string `json:"uploaded,omitempty"`
	Seen        string `json:"seen,omitempty"`
	Extracted   string `json:"extracted,omitempty"`
	Committed   string `json:"committed,omitempty"`
	Embedded    string `json:"embedded,omitempty"`
	SinceUpload struct {
		Seen      *int64 `json:"seen,omitempty"`
		Extracted *int64 `json:"extracted,omitempty"`
		Committed *int64 `json:"committed,omitempty"`
		Embedded  *int64 `json:"embedded,omitempty"`
	} `json:"ms_since_upload"`
}

func stagesOut(st pipeline.StageTimes) *objectStages {
	if st == (pipeline.StageTimes{}) {
		return nil
	}
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	since := func(t time.Time) *int64 {
		if t.IsZero() || st.Uploaded.IsZero() {
			return nil
		}
		ms := t.Sub(st.Uploaded).Milliseconds()
		return &ms
	}
	out := &objectStages{Uploaded: stamp(st.Uploaded), Seen: stamp(st.Seen), Extracted: stamp(st.Extracted),
		Committed: stamp(st.Committed), Embedded: stamp(st.Embedded)}
	out.SinceUpload.Seen, out.SinceUpload.Extracted = since(st.Seen), since(st.Extracted)
	out.SinceUpload.Committed, out.SinceUpload.Embedded = since(st.Committed), since(st.Embedded)
	return out
}

// objectStatusPoll is how often a waiting object_status looks again: an
// upload is searchable about 100 ms after its PUT, so the wait adds little.
const objectStatusPoll = 25 * time.Millisecond

func (t *Tools) objectStatus(ctx context.Context, p auth.Principal, a objectStatusArgs) (any, error) {
	k, err := objkey.Parse(strings.TrimPrefix(a.Key, "/"))
	if err != nil {
		return nil, userErrorf("key must be an object key \"<project>[@<branch>]/<path>\": %v", err)
	}
	if !p.CanRead(k.Project) {
		return nil, userErrorf("project not found: %q", clip(k.Project))
	}
	wait, err := intArg("wait_seconds", a.WaitSeconds, 0, 0, int(MaxWait/time.Second))
	if err != nil {
		return nil, err
	}
	etag := ""
	if a.ETag != nil {
		etag = strings.Trim(*a.ETag, `"`)
	}
	started := time.Now()
	deadline := started.Add(time.Duration(wait) * time.Second)
	for {
		out, err := t.objectState(ctx, k, strings.TrimPrefix(a.Key, "/"), etag)
		if err != nil {
			return nil, err
		}
		settled := out.Searchable || out.State == pipeline.StateFailed || out.State == pipeline.StateDeleted
		if settled || !time.Now().Before(deadline) {
			out.WaitedMS = time.Since(started).Milliseconds()
			out.TimedOut = wait > 0 && !settled
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(objectStatusPoll):
		}
	}
}

func (t *Tools) objectState(ctx context.Context, k objkey.Key, key, etag string) (objectStatusOut, error) {
	out := objectStatusOut{Key: key, Project: k.Project, State: "unknown"}
	wm, err := t.read.Watermark(ctx, k.Project)
	if err != nil {
		return out, err
	}
	out.Watermark = wm
	st, err := t.states.Get(ctx, k.Project, key)
	if err != nil {
		return out, err
	}
	if st != nil && !access.GrantFrom(ctx).Admin {
		// Groups are known once a version is committed: until then, and for
		// a document the caller may not read, the answer is a missing key's.
		if ok, err := t.read.MayRead(ctx, k.Project, ids.File(k.Project, k.Branch, k.Path)); err != nil {
			return out, err
		} else if !ok {
			st = nil
		}
	}
	if st == nil {
		out.Note = "no upload of this key has been seen yet"
		return out, nil
	}
	out.State, out.ETag, out.FileVersionID, out.Sequence, out.Error = st.State, st.ETag, st.FileVersionID, st.Sequence, st.Error
	out.UpdatedAt = st.UpdatedAt.UTC().Format(time.RFC3339Nano)
	out.Stages = stagesOut(st.Stages)
	if etag != "" && st.ETag != etag && st.State != pipeline.StateDeleted {
		out.State = pipeline.StatePending
		out.Note = fmt.Sprintf("the latest processed upload has ETag %s, not %s", st.ETag, etag)
		return out, nil
	}
	visible := st.Sequence > 0 && st.Sequence <= wm
	switch st.State {
	case pipeline.StateEmbedded:
		out.Searchable = visible
	case pipeline.StateIndexed:
		out.Searchable = visible && t.queries == nil
		if t.queries != nil {
			out.Note = "keyword-searchable; vectors are not written yet"
		}
	}
	return out, nil
}

const listChangesDescription = "Change feed: what changed in a project (files added, updated or deleted, with file_version_id and commit sequence) " +
	"since a commit sequence or a release, or between two releases; one entry per file (its net change), oldest first, paginated. " +
	"Keep next_since_sequence to ask again later."

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
		if rel, err = t.read.ReleaseByVersion(ctx, project, branch, ref); err == nil && rel == nil {
			rel, err = t.read.ReleaseByID(ctx, project, ref)
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
		} else if to, err = t.read.Watermark(ctx, project); err != nil {
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

func sortChanges(cs []change) {
	slices.SortStableFunc(cs, func(x, y change) int {
		if c := cmp.Compare(x.Sequence, y.Sequence); c != 0 {
			return c
		}
		return strings.Compare(x.Path, y.Path)
	})
}

const listFailuresDescription = "Failures view: files that could not be ingested or indexed, with the stage (extract, or the pipeline stage that " +
	"dead-lettered the message), the reason, the attempts and the time; filterable by project and path prefix, newest first."

type listFailuresArgs struct {
	ProjectReference *string  `json:"project_reference"`
	PathPrefix       *string  `json:"path_prefix"`
	Limit            *float64 `json:"limit"`
}

type failureOut struct {
	Project  string `json:"project"`
	Key      string `json:"key"` // the object key
	Path     string `json:"path"`
	Branch   string `json:"branch,omitempty"`
	Stage    string `json:"stage"` // extract (recorded on the document) or ingestor / indexer / embedder (dead letter)
	Status   string `json:"status,omitempty"`
	Reason   string `json:"reason"`
	Attempts *int   `json:"attempts"` // dead letters: deliveries before giving up
	Time     string `json:"time"`
}

// accessFailure is the reason shown for a document whose groups could not
// be read.
func accessFailure(reason string) string {
	return "groups not applied, readable by admins only: " + reason
}

// MaxDeadLetterScan bounds the dead letters list_failures reads.
const MaxDeadLetterScan = 2000

func (t *Tools) listFailures(ctx context.Context, p auth.Principal, a listFailuresArgs) (any, error) {
	limit, err := intArg("limit", a.Limit, 50, 1, 200)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if a.PathPrefix != nil {
		prefix = strings.TrimPrefix(*a.PathPrefix, "/")
	}
	projects, err := t.projectsNamed(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	out := []failureOut{}
	for _, project := range projects {
		docs, err := t.failedDocuments(ctx, project, 10000)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if !strings.HasPrefix(d.FilePath, prefix) {
				continue
			}
			key := project + "/" + d.FilePath
			if d.Branch != "" {
				key = project + "@" + d.Branch + "/" + d.FilePath
			}
			if d.AccessError != "" {
				out = append(out, failureOut{Project: project, Key: key, Path: d.FilePath, Branch: d.Branch, Stage: "access", Status: d.Status,
					Reason: accessFailure(d.AccessError), Time: d.UpdatedAt})
			}
			if d.Status == pipeline.StatusFailed || d.Status == pipeline.StatusUnsupported {
				out = append(out, failureOut{Project: project, Key: key, Path: d.FilePath, Branch: d.Branch, Stage: "extract", Status: d.Status,
					Reason: d.Error, Time: d.UpdatedAt})
			}
		}
	}
	// Dead letters name objects whose groups were never read: only admins
	// of a project see its dead letters.
	if t.dead != nil && p.Admin() {
		letters, err := t.dead.Recent(ctx, MaxDeadLetterScan)
		if err != nil {
			return nil, err
		}
		readable := map[string]bool{}
		for _, pr := range projects {
			readable[pr] = true
		}
		for _, l := range letters {
			if !readable[l.Project] {
				continue // unknown or foreign objects are not shown
			}
			k, err := objkey.Parse(l.ObjectKey)
			if err != nil || !strings.HasPrefix(k.Path, prefix) {
				continue
			}
			out = append(out, failureOut{Project: l.Project, Key: l.ObjectKey, Path: k.Path, Branch: k.Branch, Stage: l.Stage, Reason: l.Error,
				Attempts: ptr(l.Attempts), Time: l.FailedAt.UTC().Format(time.RFC3339Nano)})
		}
	}
	sortFailures(out)
	return map[string]any{"failures": out[:min(limit, len(out))], "total": len(out)}, nil
}

// sortFailures orders failures newest first (RFC 3339 times of one zone sort as text).
func sortFailures(fs []failureOut) {
	slices.SortStableFunc(fs, func(x, y failureOut) int { return strings.Compare(y.Time, x.Time) })
}
