package store

// Document metadata in reads (package metadata): the filter a search runs
// inside Weaviate, the keys a caller may filter by, and the metadata of hits.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/metafilter"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// MetadataWhere is f as a filter on chunks and chunk vectors (both carry
// the metadata; shared/metafilter). A range on a key the index keeps no
// range property of is an error wrapping metafilter.ErrNoRanges.
func (s *Store) MetadataWhere(ctx context.Context, f metadata.Filter) (*Where, error) {
	return metafilter.Where(f, func(prop string) (bool, error) { return s.hasRangeProperty(ctx, prop) })
}

// hasRangeProperty reports whether Chunk (and ChunkVector, once it exists)
// has a range property; a property, once added, stays.
func (s *Store) hasRangeProperty(ctx context.Context, prop string) (bool, error) {
	return s.facts.check("range:"+prop, func() (bool, error) {
		for _, class := range []string{schema.ChunkClass, schema.ChunkVectorClass} {
			props, err := schema.RangeProperties(ctx, s.wv, class)
			if err != nil {
				return false, err
			}
			if props != nil && !props[prop] {
				return false, nil
			}
		}
		return true, nil
	})
}

// MetadataKeys are the metadata keys of project's live documents the
// caller in ctx may read, with the kinds each holds: what a filter may
// name (a key only hidden documents have is unknown, as if no document
// had it).
func (s *Store) MetadataKeys(ctx context.Context, project string) (map[string]metadata.Kinds, error) {
	out := map[string]metadata.Kinds{}
	add := func(m metadata.Metadata) {
		for k, v := range m {
			out[k] = out[k].Add(v.Kind)
		}
	}
	if s.catalog.readProject(project, func(pc *projectCatalog) {
		for _, list := range pc.files {
			if v := list[len(list)-1]; !v.Deleted && len(v.Metadata) > 0 && pc.readable(ctx, v) {
				add(v.Metadata)
			}
		}
	}) {
		return out, nil
	}
	docs, err := s.AllDocuments(ctx, project, nil, versionPage)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		add(d.Metadata)
	}
	return out, nil
}

// HitMetadata is the metadata of the file versions of hits, by file
// version id (from the catalog, else one read of their Versions).
func (s *Store) HitMetadata(ctx context.Context, project string, hits []Chunk) (map[string]metadata.Metadata, error) {
	out := map[string]metadata.Metadata{}
	var missing []string
	ok := s.catalog.readProject(project, func(pc *projectCatalog) {
		for _, h := range hits {
			if _, done := out[h.FileVersionID]; done {
				continue
			}
			list := pc.files[h.FileID]
			// The latest Version of the file version: a tag change commits it again.
			for i := len(list) - 1; i >= 0; i-- {
				if list[i].FileVersionID == h.FileVersionID {
					out[h.FileVersionID] = list[i].Metadata
					break
				}
			}
		}
	})
	for _, h := range hits {
		if _, done := out[h.FileVersionID]; !done && !slices.Contains(missing, h.FileVersionID) {
			missing = append(missing, h.FileVersionID)
		}
	}
	if ok || len(missing) == 0 {
		return out, nil
	}
	rows, err := s.get(ctx, schema.VersionClass, project, []graphql.Field{{Name: "file_version_id"}, {Name: "valid_from"}, {Name: schema.MetadataProperty}},
		filters.Where().WithPath([]string{"file_version_id"}).WithOperator(filters.ContainsAny).WithValueText(missing...),
		func(g *graphql.GetBuilder) *graphql.GetBuilder {
			return g.WithSort(graphql.Sort{Path: []string{"valid_from"}, Order: graphql.Asc}).WithLimit(versionPage)
		})
	if err != nil {
		return nil, fmt.Errorf("metadata of %d file versions: %w", len(missing), err)
	}
	for _, r := range rows { // oldest first: the latest wins
		out[wvquery.Str(r, "file_version_id")], _ = metadataOf(r)
	}
	return out, nil
}

// ListDocuments lists the live documents on branch the caller in ctx may
// read whose path starts with pathPrefix and whose metadata matches f,
// sorted by path, from after (a path, exclusive), at most limit; more says
// whether others follow. It needs the catalog (ok false while not ready).
func (s *Store) ListDocuments(ctx context.Context, project, branch, pathPrefix string, f metadata.Filter, after string, limit int) (docs []Document, more, ok bool) {
	ok = s.catalog.readProject(project, func(pc *projectCatalog) {
		start := max(pathPrefix, after)
		for i := sortSearch(pc.docs.sorted, start); i < len(pc.docs.sorted); i++ {
			k := pc.docs.sorted[i]
			path, b, _ := strings.Cut(k, "\x00")
			if !strings.HasPrefix(path, pathPrefix) {
				break
			}
			if b != branch || (after != "" && path <= after) {
				continue
			}
			v := pc.current(pc.docs.byKey[k])
			if !pc.readable(ctx, v) || !f.Match(v.Metadata) {
				continue
			}
			if len(docs) == limit {
				more = true
				return
			}
			docs = append(docs, documentOfVersion(v))
		}
	})
	return docs, more, ok
}

func sortSearch(sorted []string, key string) int {
	i, _ := slices.BinarySearch(sorted, key)
	return i
}
