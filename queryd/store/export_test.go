package store

import (
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// For the external tests (conformance_test.go, package store_test, which
// imports queryd/tools).

// AccessFixtureFiles are the paths of the access fixture's files (accessFiles).
func AccessFixtureFiles() []string {
	var out []string
	for _, f := range accessFiles {
		out = append(out, f.path)
	}
	return out
}

// WriteConformanceFixture is the access fixture (writeAccessFixture: five
// files in five folders, a section and two chunks each, committed at 1)
// with project's watermark published at 1, release "v1" of main at 1 and a
// version of preview.md on branch "preview".
func WriteConformanceFixture(t testing.TB, project string) *Store {
	t.Helper()
	s := writeAccessFixture(t, project)
	fileID := ids.File(project, "preview", "preview.md")
	fv := ids.FileVersion(fileID, "e", "s")
	putObjects(t, s.wv,
		&models.Object{Class: schema.ProjectStateClass, ID: strfmt.UUID(ids.Project(project)), Tenant: project,
			Properties: map[string]any{"sequence": 1}},
		&models.Object{Class: schema.ReleaseClass, ID: strfmt.UUID(ids.Release(project, "", "v1")), Tenant: project,
			Properties: map[string]any{"version": "v1", "branch": "", "sequence": 1}},
		&models.Object{Class: schema.VersionClass, ID: strfmt.UUID(ids.Section(fv, 99)), Tenant: project, Properties: map[string]any{
			"file_id": fileID, "file_path": "preview.md", "branch": "preview", "file_version_id": fv, "status": pipeline.StatusIndexed,
			"deleted": false, "valid_from": 1, "chunk_count": 0}})
	return s
}
