package index

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/nats-io/nats.go"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

var versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)
var branchRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// CreateRelease pins the project's current watermark under a version string.
// A version string is unique per project and branch.
func (w *Writer) CreateRelease(ctx context.Context, req pipeline.ReleaseRequest) (*pipeline.Release, error) {
	switch {
	case !objkey.ValidProject(req.Project):
		return nil, fmt.Errorf("invalid project %q", req.Project)
	case req.Branch != "" && (!branchRE.MatchString(req.Branch) || req.Branch == "main"):
		return nil, fmt.Errorf("invalid branch %q (omit it for main)", req.Branch)
	case !versionRE.MatchString(req.Version):
		return nil, fmt.Errorf("invalid version %q: 1-64 of letters, digits and . _ + -, starting with a letter or digit", req.Version)
	}
	ok, err := schema.TenantExists(ctx, w.wv, req.Project)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("project %q has no indexed files", req.Project)
	}
	unlock, err := w.lock(ctx, req.Project)
	if err != nil {
		return nil, err
	}
	defer unlock()
	id := ids.Release(req.Project, req.Branch, req.Version)
	existing, err := w.object(ctx, schema.ReleaseClass, req.Project, id)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return nil, fmt.Errorf("release %q of project %q already exists (release_id %s, sequence %d): version strings cannot be reused",
			req.Version, req.Project, id, int64(wvquery.Float(existing, "sequence")))
	}
	seq, err := w.Watermark(ctx, req.Project)
	if err != nil {
		return nil, err
	}
	now := w.now().UTC()
	if err := w.batch(ctx, []*models.Object{{Class: schema.ReleaseClass, ID: strfmt.UUID(id), Tenant: req.Project, Properties: map[string]any{
		"version": req.Version, "branch": req.Branch, "sequence": seq, "created_at": now.Format(time.RFC3339Nano),
	}}}); err != nil {
		return nil, fmt.Errorf("create release %s: %w", req.Version, err)
	}
	r := &pipeline.Release{ReleaseID: id, Project: req.Project, Branch: req.Branch, Version: req.Version, Sequence: seq, CreatedAt: now}
	if req.Branch != "" {
		r.BranchID = ids.Branch(req.Project, req.Branch)
	}
	return r, nil
}

// Releases lists a project's releases, oldest first.
func (w *Writer) Releases(ctx context.Context, project string) ([]pipeline.Release, error) {
	resp, err := w.wv.GraphQL().Get().WithClassName(schema.ReleaseClass).WithTenant(project).WithLimit(10000).
		WithFields(graphql.Field{Name: "version"}, graphql.Field{Name: "branch"}, graphql.Field{Name: "sequence"}, graphql.Field{Name: "created_at"},
			graphql.Field{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}}).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("list releases of %s: %w", project, err)
	}
	if len(resp.Errors) > 0 {
		return nil, fmt.Errorf("list releases of %s: %s", project, resp.Errors[0].Message)
	}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.ReleaseClass].([]any)
	out := make([]pipeline.Release, 0, len(rows))
	for _, r := range rows {
		m := r.(map[string]any)
		created, _ := time.Parse(time.RFC3339Nano, wvquery.Str(m, "created_at"))
		out = append(out, pipeline.Release{ReleaseID: m["_additional"].(map[string]any)["id"].(string), Project: project,
			Branch: wvquery.Str(m, "branch"), Version: wvquery.Str(m, "version"), Sequence: int64(wvquery.Float(m, "sequence")), CreatedAt: created})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sequence < out[j].Sequence })
	return out, nil
}

// ServeReleases answers release requests on NATS (queue group "indexer", so
// one replica answers each): `nats req strata.release.create '{"project":"acme","version":"v1.2.0"}'`.
func (w *Writer) ServeReleases(ctx context.Context, nc *nats.Conn) (func(), error) {
	reply := func(m *nats.Msg, v any) {
		b, _ := json.Marshal(v)
		_ = m.Respond(b)
	}
	create, err := nc.QueueSubscribe(pipeline.ReleaseCreateSubject, "indexer", func(m *nats.Msg) {
		var req pipeline.ReleaseRequest
		if err := json.Unmarshal(m.Data, &req); err != nil {
			reply(m, pipeline.ReleaseReply{Error: "want JSON {\"project\": ..., \"version\": ..., \"branch\": optional}: " + err.Error()})
			return
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		r, err := w.CreateRelease(rctx, req)
		if err != nil {
			reply(m, pipeline.ReleaseReply{Error: err.Error()})
			return
		}
		w.log.Info("release created", "project", r.Project, "branch", r.Branch, "version", r.Version, "sequence", r.Sequence)
		reply(m, pipeline.ReleaseReply{Release: r})
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", pipeline.ReleaseCreateSubject, err)
	}
	list, err := nc.QueueSubscribe(pipeline.ReleaseListSubject, "indexer", func(m *nats.Msg) {
		var req struct{ Project string }
		if err := json.Unmarshal(m.Data, &req); err != nil || !objkey.ValidProject(req.Project) {
			reply(m, map[string]string{"error": "want JSON {\"project\": ...}"})
			return
		}
		rs, err := w.Releases(ctx, req.Project)
		if err != nil {
			reply(m, map[string]string{"error": err.Error()})
			return
		}
		reply(m, map[string]any{"releases": rs})
	})
	if err != nil {
		_ = create.Unsubscribe()
		return nil, fmt.Errorf("subscribe %s: %w", pipeline.ReleaseListSubject, err)
	}
	return func() { _ = create.Drain(); _ = list.Drain() }, nil
}

// CollectGarbage deletes file versions that were superseded more than
// retention ago and that no release pins (a release at R pins the version
// visible at R), with their sections and chunks. The latest version of every
// file is always kept. It returns how many versions it deleted.
func (w *Writer) CollectGarbage(ctx context.Context, project string, retention time.Duration) (int, error) {
	unlock, err := w.lock(ctx, project)
	if err != nil {
		return 0, err
	}
	defer unlock()
	releases, err := w.Releases(ctx, project)
	if err != nil {
		return 0, err
	}
	pins := make([]int64, 0, len(releases))
	for _, r := range releases {
		pins = append(pins, r.Sequence)
	}
	wm, err := w.Watermark(ctx, project)
	if err != nil {
		return 0, err
	}
	resp, err := w.wv.GraphQL().Get().WithClassName(schema.VersionClass).WithTenant(project).WithLimit(10000).
		WithWhere(intFilter("valid_from", filters.LessThanEqual, wm)).
		WithFields(graphql.Field{Name: "file_id"}, graphql.Field{Name: "branch"}, graphql.Field{Name: "file_path"},
			graphql.Field{Name: "file_version_id"}, graphql.Field{Name: "valid_from"}, graphql.Field{Name: "committed_at"}).Do(ctx)
	if err != nil {
		return 0, fmt.Errorf("gc versions of %s: %w", project, err)
	}
	if len(resp.Errors) > 0 {
		return 0, fmt.Errorf("gc versions of %s: %s", project, resp.Errors[0].Message)
	}
	byFile := map[string][]gcVersion{}
	rows, _ := resp.Data["Get"].(map[string]any)[schema.VersionClass].([]any)
	for _, r := range rows {
		m := r.(map[string]any)
		committed, _ := time.Parse(time.RFC3339Nano, wvquery.Str(m, "committed_at"))
		byFile[wvquery.Str(m, "file_id")] = append(byFile[wvquery.Str(m, "file_id")], gcVersion{wvquery.Str(m, "file_version_id"), int64(wvquery.Float(m, "valid_from")), committed})
	}
	classes := []string{schema.ChunkClass, schema.SectionClass, schema.VersionClass}
	if _, ok := w.vectorTenants.Load(project); ok || w.vectorClassExists(ctx) {
		// The collection may exist for other projects only: deleting from a
		// tenant that is not there fails, so make sure of it first.
		if err := w.ensureVectorTenant(ctx, project); err != nil {
			return 0, fmt.Errorf("gc vectors of %s: %w", project, err)
		}
		classes = append([]string{schema.ChunkVectorClass}, classes...)
	}
	cutoff := w.now().Add(-retention)
	deleted := 0
	for _, vs := range byFile {
		sort.Slice(vs, func(i, j int) bool { return vs[i].from < vs[j].from })
		runs := versionRuns(vs)
		for i := 0; i+1 < len(runs); i++ {
			run, next := vs[runs[i]], vs[runs[i+1]]
			if next.committed.After(cutoff) || pinned(pins, run.from, next.from) || laterRun(vs, runs, i) {
				continue
			}
			for _, class := range classes {
				if _, err := w.wv.Batch().ObjectsBatchDeleter().WithClassName(class).WithTenant(project).WithOutput("minimal").
					WithWhere(textFilter("file_version_id", run.id)).Do(ctx); err != nil {
					return deleted, fmt.Errorf("gc %s of version %s: %w", class, run.id, err)
				}
			}
			deleted++
		}
	}
	return deleted, nil
}

// versionRuns returns where each run of a file's Versions (sorted by
// valid_from) begins: consecutive Versions of one file version (an access
// change repeats the visible one, access.go) are one version, visible from
// its first Version's sequence until the next run's. Garbage collection
// deletes by file_version_id, so a run goes whole or not at all.
func versionRuns(vs []gcVersion) []int {
	var starts []int
	for i := range vs {
		if i == 0 || vs[i].id != vs[i-1].id {
			starts = append(starts, i)
		}
	}
	return starts
}

// laterRun reports whether the file version of the i-th run is visible
// again in a later run: its objects are then still in use. Not expected
// (a file version's id names its event), but deleting them would empty a
// visible version.
func laterRun(vs []gcVersion, runs []int, i int) bool {
	for _, r := range runs[i+1:] {
		if vs[r].id == vs[runs[i]].id {
			return true
		}
	}
	return false
}

// gcVersion is a Version as garbage collection reads it.
type gcVersion struct {
	id        string // file_version_id
	from      int64
	committed time.Time
}

// pinned reports whether some release sequence r has from <= r < to.
func pinned(pins []int64, from, to int64) bool {
	for _, r := range pins {
		if from <= r && r < to {
			return true
		}
	}
	return false
}

// vectorClassExists reports whether any vectors were ever written.
func (w *Writer) vectorClassExists(ctx context.Context) bool {
	exists, err := w.wv.Schema().ClassExistenceChecker().WithClassName(schema.ChunkVectorClass).Do(ctx)
	return err == nil && exists
}
