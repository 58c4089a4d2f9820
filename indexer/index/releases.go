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
	ctx, h, err := w.lock(ctx, req.Project)
	if err != nil {
		return nil, err
	}
	defer h.unlock()
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
