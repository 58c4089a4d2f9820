package tools

// object_status: Strata's read-your-writes, an uploaded object's state.

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
)

const objectStatusDescription = "Read-your-writes: given an uploaded object's key (\"<project>[@<branch>]/<path>\", optionally its ETag), " +
	"report whether its latest upload is pending, indexed (keyword-searchable), embedded (vector-searchable too), failed (with the reason) or deleted, " +
	"and optionally wait up to 30 s until that version is searchable. The answer carries the index watermark."

//go:embed schemas/object_status.input.json
var objectStatusInput string

var objectStatusTool = define(ToolsetStrata, "object_status", objectStatusDescription, objectStatusInput, (*Tools).objectStatus).
	when("queryd reads the objects' states in NATS KV (`-nats-url`)", func(t *Tools) bool { return t.states != nil })

// MaxWait bounds object_status's wait.
const MaxWait = 30 * time.Second

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
		// A member (a file inside an uploaded one, "acme/mail/a.eml//notes.txt")
		// is no object of the bucket: it has no upload, no ETag and no state
		// of its own, and is committed with its container, at the same
		// sequence. The answer names the container to ask about instead.
		if d, derr := objkey.ParseDocument(strings.TrimPrefix(a.Key, "/")); derr == nil {
			if !p.CanRead(d.Project) {
				return nil, userErrorf("project not found: %q", clip(d.Project))
			}
			container, _ := objkey.ContainerOf(d.Path)
			key := objectKey(d.Project, d.Branch, d.Path)
			return nil, userErrorf("%q is not an uploaded object but a file inside one (a member of %s, indexed with it at the same sequence): "+
				"call object_status with key %q, the container's; read the member itself with its path (list_file_chunks, list_files)",
				clip(a.Key), clip(container), clip(key))
		}
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
	wm, err := t.base.Watermark(ctx, k.Project)
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
		if ok, err := t.base.MayRead(ctx, k.Project, ids.File(k.Project, k.Branch, k.Path)); err != nil {
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
