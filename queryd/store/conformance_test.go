package store_test

// The readers of queryd/tools (tools/reader.go) against the real store: one
// test per interface, each calling every method of its own through the
// interface on the conformance fixture (WriteConformanceFixture) and
// checking the answer. A method shared by two interfaces is checked in each.

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/queryd/tools"
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
)

// The store is every reader the tools take, the optional ones too.
var (
	_ tools.Reader          = (*store.Store)(nil)
	_ tools.Base            = (*store.Store)(nil)
	_ tools.ViewReader      = (*store.Store)(nil)
	_ tools.SearchReader    = (*store.Store)(nil)
	_ tools.ChunksReader    = (*store.Store)(nil)
	_ tools.KnowledgeReader = (*store.Store)(nil)
	_ tools.LocalRAGReader  = (*store.Store)(nil)
	_ tools.StrataReader    = (*store.Store)(nil)
	_ tools.DocumentIndex   = (*store.Store)(nil)
	_ tools.MetadataIndex   = (*store.Store)(nil)
	_ tools.DocumentLister  = (*store.Store)(nil)
	_ tools.VectorReader    = (*store.Store)(nil)
)

const conformProject = "conform"

// conformFile is one file of the fixture: its ids, version and first chunk.
type conformFile struct {
	path, fileID, fv, section, chunk0, chunk1 string
}

func fixtureFile(path string) conformFile {
	fileID := ids.File(conformProject, "", path)
	fv := ids.FileVersion(fileID, "e", "s")
	return conformFile{path: path, fileID: fileID, fv: fv, section: ids.Section(fv, 0), chunk0: ids.Chunk(fv, 0), chunk1: ids.Chunk(fv, 1)}
}

var (
	openFile   = fixtureFile("public/open.md")
	secretFile = fixtureFile("hr/secret.md")
	splitFile  = fixtureFile("eng/split.md")
)

// conform writes the fixture and returns the store with an admin's context.
func conform(t *testing.T) (*store.Store, context.Context) {
	t.Helper()
	return store.WriteConformanceFixture(t, conformProject), access.System(context.Background())
}

func check(t *testing.T, method string, err error, ok bool, got any, want string) {
	t.Helper()
	switch {
	case err != nil:
		t.Errorf("%s: %v", method, err)
	case !ok:
		t.Errorf("%s = %+v, want %s", method, got, want)
	}
}

func pathsOf(docs []store.Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.FilePath)
	}
	slices.Sort(out)
	return out
}

func fixturePaths() []string {
	out := store.AccessFixtureFiles()
	slices.Sort(out)
	return out
}

// chunksOf reports whether every chunk is one of file's, and there are n.
func chunksOf(cs []store.Chunk, file conformFile, n int) bool {
	return len(cs) == n && !slices.ContainsFunc(cs, func(c store.Chunk) bool { return c.FileVersionID != file.fv })
}

func TestConformanceBase(t *testing.T) {
	s, ctx := conform(t)
	var r tools.Base = s
	projects, err := r.Projects(ctx)
	check(t, "Projects", err, slices.Contains(projects, conformProject), projects, "to hold "+conformProject)
	has, err := r.HasProject(ctx, conformProject)
	check(t, "HasProject", err, has, has, "true")
	has, err = r.HasProject(ctx, conformProject+"-missing")
	check(t, "HasProject(missing)", err, !has, has, "false")
	hr := access.WithGrant(context.Background(), access.Grant{Groups: []string{"hr"}})
	may, err := r.MayRead(hr, conformProject, secretFile.fileID)
	check(t, "MayRead(hr, hr/secret.md)", err, may, may, "true")
	may, err = r.MayRead(hr, conformProject, splitFile.fileID)
	check(t, "MayRead(hr, eng/split.md)", err, !may, may, "false")
	wm, err := r.Watermark(ctx, conformProject)
	check(t, "Watermark", err, wm == 1, wm, "1")
	ver, err := r.VersionAt(ctx, conformProject, "", openFile.path, 1)
	check(t, "VersionAt", err, ver != nil && ver.FileVersionID == openFile.fv && !ver.Deleted, ver, "version "+openFile.fv)
	docs, err := r.AllDocuments(ctx, conformProject, nil, 100)
	check(t, "AllDocuments", err, slices.Equal(pathsOf(docs), fixturePaths()), pathsOf(docs), strings.Join(fixturePaths(), ", "))
	st, err := r.Stats(ctx, conformProject)
	check(t, "Stats", err, st == store.Stats{Indexed: 5, Chunks: 10}, st, "5 indexed documents and 10 chunks")
}

func TestConformanceViewReader(t *testing.T) {
	s, ctx := conform(t)
	var r tools.ViewReader = s
	branches, err := r.Branches(ctx, conformProject)
	check(t, "Branches", err, slices.Equal(branches, []string{"preview"}), branches, "[preview]")
	rel, err := r.ReleaseByVersion(ctx, conformProject, "", "v1")
	check(t, "ReleaseByVersion", err, rel != nil && rel.Sequence == 1 && rel.Branch == "", rel, "v1 of main at 1")
	rel, err = r.ReleaseByID(ctx, conformProject, ids.Release(conformProject, "", "v1"))
	check(t, "ReleaseByID", err, rel != nil && rel.Version == "v1" && rel.Sequence == 1, rel, "v1 at 1")
}

func TestConformanceSearchReader(t *testing.T) {
	s, ctx := conform(t)
	var r tools.SearchReader = s
	hits, err := r.SearchKeyword(ctx, conformProject, "openquokka", 10, nil, 1)
	check(t, "SearchKeyword", err, chunksOf(hits, openFile, 2), hits, "open.md's 2 chunks")
	docs, err := r.Documents(ctx, conformProject, 100)
	check(t, "Documents", err, slices.Equal(pathsOf(docs), fixturePaths()), pathsOf(docs), strings.Join(fixturePaths(), ", "))
	c, err := r.GetChunk(ctx, conformProject, openFile.chunk1, 1)
	check(t, "GetChunk", err, c != nil && c.Index == 1 && strings.HasPrefix(c.Content, "openquokka"), c, "open.md's chunk 1")
	exists, err := r.SectionExists(ctx, conformProject, openFile.section)
	check(t, "SectionExists", err, exists, exists, "true")
	exists, err = r.SectionExists(ctx, conformProject, ids.Section(openFile.fv, 7))
	check(t, "SectionExists(missing)", err, !exists, exists, "false")
}

func TestConformanceChunksReader(t *testing.T) {
	s, ctx := conform(t)
	var r tools.ChunksReader = s
	rows, err := r.ListChunks(ctx, conformProject, openFile.fv, 1, 10)
	check(t, "ListChunks", err, chunksOf(rows, openFile, 1) && rows[0].Index == 1, rows, "open.md's chunk 1 (offset 1)")
	c, err := r.GetChunk(ctx, conformProject, secretFile.chunk0, 1)
	check(t, "GetChunk", err, c != nil && c.FilePath == secretFile.path && c.Index == 0, c, "secret.md's chunk 0")
}

func TestConformanceKnowledgeReader(t *testing.T) {
	s, ctx := conform(t)
	var r tools.KnowledgeReader = s
	doc, err := r.DocumentByID(ctx, conformProject, openFile.fileID)
	check(t, "DocumentByID", err, doc != nil && doc.FilePath == openFile.path && doc.FileVersionID == openFile.fv, doc, openFile.path)
	folders, err := r.Folders(ctx, conformProject, 100)
	slices.Sort(folders)
	check(t, "Folders", err, slices.Equal(folders, []string{"bad", "eng", "hr", "old", "public"}), folders, "bad, eng, hr, old, public")
	docs, total, err := r.FolderDocuments(ctx, conformProject, "hr", 0, 10)
	check(t, "FolderDocuments", err, total == 1 && slices.Equal(pathsOf(docs), []string{secretFile.path}), pathsOf(docs), "hr/secret.md of 1")
	secs, err := r.Sections(ctx, conformProject, openFile.fv, 1, 0, 10)
	check(t, "Sections", err, len(secs) == 1 && secs[0].ID == openFile.section, secs, "open.md's one section")
	sec, err := r.GetSection(ctx, conformProject, openFile.section, 1)
	check(t, "GetSection", err, sec != nil && sec.ChunkCount == 2 && sec.TokenCount == 4, sec, "2 chunks of 4 tokens")
	cd, err := r.GetChunkDetail(ctx, conformProject, openFile.chunk1, 1)
	check(t, "GetChunkDetail", err, cd != nil && cd.Index == 1 && cd.SectionID == openFile.section, cd, "chunk 1 of open.md's section")
	q := store.ChunkQuery{FileVersionID: openFile.fv, To: -1, Limit: 10, At: 1}
	details, err := r.ChunkDetails(ctx, conformProject, q)
	check(t, "ChunkDetails", err, len(details) == 2 && details[0].Index == 0 && details[1].Index == 1, details, "chunks 0 and 1")
	n, err := r.CountChunks(ctx, conformProject, store.ChunkQuery{FileVersionID: openFile.fv, From: 1, To: -1, At: 1})
	check(t, "CountChunks", err, n == 1, n, "1 (from index 1)")
}

func TestConformanceLocalRAGReader(t *testing.T) {
	s, ctx := conform(t)
	var r tools.LocalRAGReader = s
	rows, err := r.ListChunks(ctx, conformProject, secretFile.fv, 0, 10)
	check(t, "ListChunks", err, chunksOf(rows, secretFile, 2) && rows[0].Index == 0, rows, "secret.md's 2 chunks in order")
	hits, err := r.SearchKeyword(ctx, conformProject, "secretwombat", 1, nil, 1)
	check(t, "SearchKeyword", err, chunksOf(hits, secretFile, 1), hits, "one chunk of secret.md (limit 1)")
}

func TestConformanceStrataReader(t *testing.T) {
	s, ctx := conform(t)
	var r tools.StrataReader = s
	hits, err := r.SearchKeywordMatching(ctx, conformProject, "splitnarwhal", store.MatchExact, 10, nil, "", 1)
	check(t, "SearchKeywordMatching", err, chunksOf(hits, splitFile, 2), hits, "split.md's 2 chunks")
	versions, err := r.Committed(ctx, conformProject, "", 0, 1, 100)
	var paths []string
	for _, v := range versions {
		paths = append(paths, v.FilePath)
	}
	slices.Sort(paths)
	check(t, "Committed", err, slices.Equal(paths, fixturePaths()), paths, "main's 5 versions")
	at, err := r.VersionsAt(ctx, conformProject, []string{openFile.fileID, ids.File(conformProject, "", "nope.md")}, 1)
	check(t, "VersionsAt", err, len(at) == 1 && at[openFile.fileID].FileVersionID == openFile.fv, at, "open.md's version only")
}
