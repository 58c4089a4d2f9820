package store

import (
	"context"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// documentClasses are the collections whose objects belong to a document
// and carry its readers. Every read of them goes through withReaders (get,
// find, aggregate) or readableObject (reads by id): the one place access
// is enforced, inside Weaviate's filter, so a hidden document never takes
// a place in a result, a count or a page.
var documentClasses = map[string]bool{
	schema.DocumentClass: true, schema.SectionClass: true, schema.ChunkClass: true,
	schema.VersionClass: true, schema.ChunkVectorClass: true,
}

// withReaders is where restricted to the documents the caller in ctx may
// read (access.GrantFrom; admins and Strata's own reads are not filtered),
// with the access changes being applied to project's files (relabels.go).
func (s *Store) withReaders(ctx context.Context, project, class string, where *filters.WhereBuilder) *filters.WhereBuilder {
	if !documentClasses[class] {
		return where
	}
	grant := access.GrantFrom(ctx)
	values := grant.FilterValues()
	if values == nil {
		return where
	}
	readers := filters.Where().WithPath([]string{schema.ReadersProperty}).WithOperator(filters.ContainsAny).WithValueText(values...)
	if allow, deny := s.catalog.relabelled(project, grant); len(allow)+len(deny) > 0 {
		readers = relabelledReaders(readers, allow, deny)
	}
	if where == nil {
		return readers
	}
	return wvquery.And(where, readers)
}

// readableObject is o when the caller in ctx may read it, else nil: an
// object read by id that the caller may not read is answered exactly as
// one that does not exist.
func (s *Store) readableObject(ctx context.Context, project, class string, o *models.Object) *models.Object {
	if o == nil || !documentClasses[class] {
		return o
	}
	props, _ := o.Properties.(map[string]any)
	if !s.catalog.relabelledObject(ctx, project, wvquery.Str(props, "file_id"), wvquery.Strs(props, schema.ReadersProperty)) {
		return nil
	}
	return o
}

// Readable reports whether the caller in ctx may read a document with readers.
func Readable(ctx context.Context, readers []string) bool {
	return access.GrantFrom(ctx).Matches(readers)
}

// MayRead reports whether the caller in ctx may read fileID's document
// (deleted ones too: a tombstone keeps its last readers); false for a file
// never committed. Admins read every file that exists.
func (s *Store) MayRead(ctx context.Context, project, fileID string) (bool, error) {
	if c := s.catalog; c.Ready() {
		readable := false
		c.readProject(project, func(pc *projectCatalog) {
			list := pc.files[fileID]
			readable = len(list) > 0 && pc.readable(ctx, list[len(list)-1])
		})
		return readable, nil
	}
	rows, err := s.get(ctx, schema.DocumentClass, project, []graphql.Field{{Name: "file_id"}}, FileFilter(fileID),
		func(g *graphql.GetBuilder) *graphql.GetBuilder { return g.WithLimit(1) })
	return len(rows) > 0, err
}
