package store

import (
	"context"
	"slices"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
)

// TestProjectsIncludeAProjectReadAheadOfTheCatalog: a project's first commit
// reaches Weaviate's mirror before this replica's catalog watch delivers it.
// A tool naming the project reads its watermark from Weaviate and shows the
// file; a search over every project must then search it too, not answer
// from the catalog's older list (the e2e test's upload-then-search flake).
func TestProjectsIncludeAProjectReadAheadOfTheCatalog(t *testing.T) {
	const project = "acme"
	s := writeAccessFixture(t, project)
	putObjects(t, s.wv, &models.Object{Class: schema.ProjectStateClass, ID: strfmt.UUID(ids.Project(project)), Tenant: project,
		Properties: map[string]any{"sequence": 1}})
	c := newTestCatalog(&committedLog{})
	c.ready.Store(true)
	c.marksReady.Store(true)
	s.SetCatalog(c)
	ctx := context.Background()

	before, err := s.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(before, project) {
		t.Fatalf("nothing has read %s yet, and the catalog does not know it: %v", project, before)
	}
	seq, err := s.Watermark(ctx, project)
	if err != nil || seq != 1 {
		t.Fatalf("watermark from Weaviate's mirror: %d %v", seq, err)
	}
	after, err := s.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(after, project) {
		t.Fatalf("%s was shown at sequence %d, but the project list still omits it: %v", project, seq, after)
	}
}
