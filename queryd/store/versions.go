package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// Version is one committed file version or delete. A file's visible version
// as of sequence W is its Version with the greatest ValidFrom <= W.
type Version struct {
	FileID        string
	FilePath      string
	Branch        string
	FileVersionID string
	Status        string
	Error         string
	Deleted       bool
	ValidFrom     int64
	Title         string
	// Readers are who may read the file (package access). A file's
	// current readers are those of its latest Version: an access change
	// commits a new Version, and releases are read with today's readers.
	Readers     []string
	AccessError string
	// Filled by the catalog's loads only.
	ChunkCount                      int
	Format, CommittedAt, IngestedAt string
	// Metadata is the document's metadata as the version was committed
	// (package metadata); MetadataWarnings what its merge dropped.
	Metadata         metadata.Metadata
	MetadataWarnings []string
}

// metadataOf reads a Version's or Document's metadata. An index written
// before metadata existed has none.
func metadataOf(r map[string]any) (metadata.Metadata, []string) {
	var m metadata.Metadata
	if s := wvquery.Str(r, schema.MetadataProperty); s != "" {
		_ = json.Unmarshal([]byte(s), &m) // written by the indexer from a Metadata
	}
	return m, wvquery.Strs(r, schema.MetadataWarningsProperty)
}

// Release is a pinned commit sequence of a project branch.
type Release struct {
	ID       string
	Version  string
	Branch   string
	Sequence int64
}

var versionFields = []graphql.Field{{Name: "file_id"}, {Name: "file_path"}, {Name: "branch"}, {Name: "file_version_id"},
	{Name: "status"}, {Name: "error"}, {Name: "deleted"}, {Name: "valid_from"}, {Name: "title"}, {Name: schema.ReadersProperty}, {Name: schema.CommittedReadersProperty}, {Name: "access_error"}}

func intLE(path string, v int64) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.LessThanEqual).WithValueInt(v)
}

// Watermark returns the project's published commit sequence; reads as of
// "latest" use it, so a commit becomes visible all at once.
func (s *Store) Watermark(ctx context.Context, project string) (int64, error) {
	if s.catalog != nil {
		// Once the catalog knows a project it is never behind what readers
		// saw: it only moves forward, and the mirror below is written later.
		if seq, ok := s.catalog.Watermark(project); ok {
			return seq, nil
		}
	}
	getter := s.wv.Data().ObjectsGetter().WithClassName(schema.ProjectStateClass).WithID(ids.Project(project)).WithTenant(project)
	if s.consistency != "" {
		getter = getter.WithConsistencyLevel(s.consistency)
	}
	objs, err := getter.Do(ctx)
	if err != nil {
		var ce *fault.WeaviateClientError
		// 404: nothing committed yet; "tenant not found": the project's
		// tenants are being created by its first commit, class by class.
		if errors.As(err, &ce) && (ce.StatusCode == 404 || strings.Contains(ce.Error(), "tenant not found")) {
			return 0, nil
		}
		return 0, fmt.Errorf("watermark of %s: %w", project, err)
	}
	if len(objs) == 0 {
		return 0, nil
	}
	props, _ := objs[0].Properties.(map[string]any)
	seq := int64(wvquery.Float(props, "sequence"))
	if seq > 0 && s.catalog != nil {
		s.readAhead(project)
	}
	return seq, nil
}

// VersionAt returns the visible version of path on branch ("" = main) as of
// sequence at, or nil when the file never existed there by then.
func (s *Store) VersionAt(ctx context.Context, project, branch, path string, at int64) (*Version, error) {
	if s.catalog.covers(project, at) {
		return s.catalog.visibleAt(ctx, project, ids.File(project, branch, path), at), nil
	}
	rows, err := s.get(ctx, schema.VersionClass, project, versionFields, wvquery.And(eq("file_path", path), eq("branch", branch), intLE("valid_from", at)), func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.
			WithSort(graphql.Sort{Path: []string{"valid_from"}, Order: graphql.Desc}).WithLimit(1)
	})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	v := version(rows[0])
	return &v, nil
}

// LatestVersions maps each of fileIDs to its visible file_version_id as of
// at ("" for files deleted by then).
func (s *Store) LatestVersions(ctx context.Context, project string, fileIDs []string, at int64) (map[string]string, error) {
	vs, err := s.VersionsAt(ctx, project, fileIDs, at)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(vs))
	for id, v := range vs {
		out[id] = v.FileVersionID
		if v.Deleted {
			out[id] = ""
		}
	}
	return out, nil
}

// VersionsAt maps each of fileIDs to its Version visible as of at (deletes
// included), with the readers it was committed with.
func (s *Store) VersionsAt(ctx context.Context, project string, fileIDs []string, at int64) (map[string]Version, error) {
	out := map[string]Version{}
	if len(fileIDs) == 0 {
		return out, nil
	}
	if s.catalog.covers(project, at) {
		for _, id := range fileIDs {
			if v := s.catalog.visibleAt(ctx, project, id, at); v != nil {
				out[id] = *v
			}
		}
		return out, nil
	}
	rows, err := s.get(ctx, schema.VersionClass, project, versionFields, wvquery.And(filters.Where().WithPath([]string{"file_id"}).WithOperator(filters.ContainsAny).WithValueText(fileIDs...),
		intLE("valid_from", at)), func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithLimit(10000)
	})
	if err != nil {
		return nil, err
	}
	best := map[string]int64{}
	for _, r := range rows {
		v := version(r)
		if from, ok := best[v.FileID]; ok && from >= v.ValidFrom {
			continue
		}
		best[v.FileID] = v.ValidFrom
		out[v.FileID] = v
	}
	return out, nil
}

// Branches lists the branches of a project that have files (main excluded).
func (s *Store) Branches(ctx context.Context, project string) ([]string, error) {
	rows, err := s.get(ctx, schema.VersionClass, project, []graphql.Field{{Name: "branch"}}, filters.Where().WithPath([]string{"branch"}).WithOperator(filters.NotEqual).WithValueText(""), func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithLimit(10000)
	})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		if b := wvquery.Str(r, "branch"); b != "" && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	return out, nil
}

// ReleaseByID returns a release, or nil.
func (s *Store) ReleaseByID(ctx context.Context, project, id string) (*Release, error) {
	return s.release(ctx, project, ChunkFilter(id))
}

// ReleaseByVersion returns the release of a version string on branch, or nil.
func (s *Store) ReleaseByVersion(ctx context.Context, project, branch, version string) (*Release, error) {
	return s.release(ctx, project, wvquery.And(eq("version", version), eq("branch", branch)))
}

func (s *Store) release(ctx context.Context, project string, where *filters.WhereBuilder) (*Release, error) {
	rows, err := s.get(ctx, schema.ReleaseClass, project, []graphql.Field{{Name: "version"}, {Name: "branch"}, {Name: "sequence"},
		{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}}}, where, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithLimit(1)
	})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	add, _ := rows[0]["_additional"].(map[string]any)
	return &Release{ID: wvquery.Str(add, "id"), Version: wvquery.Str(rows[0], "version"), Branch: wvquery.Str(rows[0], "branch"), Sequence: int64(wvquery.Float(rows[0], "sequence"))}, nil
}

// committedReaders are the readers a Version was committed with; a Version
// written before they were recorded has only its (current) readers.
func committedReaders(r map[string]any) []string {
	if rs := wvquery.Strs(r, schema.CommittedReadersProperty); len(rs) > 0 {
		return rs
	}
	return wvquery.Strs(r, schema.ReadersProperty)
}

func version(r map[string]any) Version {
	return Version{FileID: wvquery.Str(r, "file_id"), FilePath: wvquery.Str(r, "file_path"), Branch: wvquery.Str(r, "branch"),
		FileVersionID: wvquery.Str(r, "file_version_id"), Status: wvquery.Str(r, "status"), Error: wvquery.Str(r, "error"),
		Deleted: r["deleted"] == true, ValidFrom: int64(wvquery.Float(r, "valid_from")), Title: wvquery.Str(r, "title"),
		Readers: committedReaders(r), AccessError: wvquery.Str(r, "access_error")}
}

// Committed lists the versions (and deletes) of branch ("" = main)
// committed in (from, to], oldest first, at most limit.
func (s *Store) Committed(ctx context.Context, project, branch string, from, to int64, limit int) ([]Version, error) {
	rows, err := s.get(ctx, schema.VersionClass, project, versionFields, wvquery.And(eq("branch", branch), intLE("valid_from", to),
		filters.Where().WithPath([]string{"valid_from"}).WithOperator(filters.GreaterThan).WithValueInt(from)), func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.
			WithSort(graphql.Sort{Path: []string{"valid_from"}, Order: graphql.Asc}).WithLimit(limit)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Version, 0, len(rows))
	for _, r := range rows {
		out = append(out, version(r))
	}
	return out, nil
}
