package store

import (
	"fmt"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// MemberFixtureFile is one document of the member fixture (for the
// external tests, members_test.go): its path, the word only its chunks
// contain, its chunks and the sequence it was committed at.
type MemberFixtureFile struct {
	Path, Word string
	Chunks     int
	Seq        int64
}

// MemberFixtureFiles: a file committed at 1, then (one commit, at 2) an
// e-mail and its attachment, and a ZIP and a file in a folder of it, each
// container and member a document of its own (issue 52).
var MemberFixtureFiles = []MemberFixtureFile{
	{"intro.md", "introheron", 1, 1},
	{"mail/launch.eml", "launchlemur", 1, 2},
	{objkey.MemberPath("mail/launch.eml", "notes.txt"), "notesokapi", 2, 2},
	{"share/bundle.zip", "bundlebison", 1, 2},
	{objkey.MemberPath("share/bundle.zip", "reports/q3.docx"), "quarterquail", 1, 2},
}

// WriteMemberFixture stores MemberFixtureFiles in project the way the
// indexer writes any file's objects (Document, Version, Section, Chunks,
// readable by everyone; a member's file_path its member path, its file_id
// ids.File of it, its folder and name objkey.Split's), with the watermark
// published at 2.
func WriteMemberFixture(t testing.TB, project string) *Store {
	t.Helper()
	wv := weaviateWithTenant(t, project)
	objs := []*models.Object{{Class: schema.ProjectStateClass, ID: strfmt.UUID(ids.Project(project)), Tenant: project,
		Properties: map[string]any{"sequence": 2}}}
	readers := []string{access.Everyone}
	for _, f := range MemberFixtureFiles {
		fileID := ids.File(project, "", f.Path)
		fv := ids.FileVersion(fileID, "e", "s")
		sec := ids.Section(fv, 0)
		folder, name := objkey.Split(f.Path)
		objs = append(objs,
			&models.Object{Class: schema.DocumentClass, ID: strfmt.UUID(fileID), Tenant: project, Properties: map[string]any{
				"file_id": fileID, "file_path": f.Path, "name": name, "folder": folder, "branch": "", "file_version_id": fv,
				"status": pipeline.StatusIndexed, "deleted": false, "chunk_count": f.Chunks, "commit_seq": f.Seq, "title": f.Word,
				"section_count": 1, "token_count": 4 * f.Chunks, schema.ReadersProperty: readers}},
			&models.Object{Class: schema.VersionClass, ID: strfmt.UUID(fv), Tenant: project, Properties: map[string]any{
				"file_id": fileID, "file_path": f.Path, "branch": "", "file_version_id": fv, "status": pipeline.StatusIndexed,
				"deleted": false, "valid_from": f.Seq, "chunk_count": f.Chunks, "title": f.Word, schema.ReadersProperty: readers}},
			&models.Object{Class: schema.SectionClass, ID: strfmt.UUID(sec), Tenant: project, Properties: map[string]any{
				"file_id": fileID, "file_version_id": fv, "file_path": f.Path, "branch": "", "ordinal": 0, "title": "S",
				"heading_path": []string{"S"}, "level": 1, "token_count": 4 * f.Chunks, "chunk_count": f.Chunks, "valid_from": f.Seq,
				schema.ReadersProperty: readers}})
		start := 0
		for c := range f.Chunks {
			text := fmt.Sprintf("%s text number %d.", f.Word, c)
			objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, c)), Tenant: project, Properties: map[string]any{
				"content": text, schema.ContentTermsProperty: text, "file_id": fileID, "file_version_id": fv, "file_path": f.Path,
				"branch": "", "index": c, "start_offset": start, "end_offset": start + len(text), "token_count": 4, "section_id": sec,
				"heading_path": []string{"S"}, "kind": "text", "valid_from": f.Seq, "source_checksum": "s", schema.ReadersProperty: readers}})
			start += len(text) + 1
		}
	}
	putObjects(t, wv, objs...)
	return New(wv)
}
