package store

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// TestCatalogDocumentIndexes: listings, name search, folders and failures
// follow replacements, deletes and branches exactly.
func TestCatalogDocumentIndexes(t *testing.T) {
	ctx := access.System(context.Background())
	c := &Catalog{log: slog.New(slog.DiscardHandler), byKey: map[string]*projectCatalog{}, marks: map[string]map[string]map[string]bool{}}
	c.ready.Store(true)
	c.marksReady.Store(true)
	s := (&Store{}).SetCatalog(c)
	pc := newProjectCatalog()
	c.byKey["acme"] = pc
	seq := int64(0)
	commit := func(branch, path, status string, deleted bool) {
		seq++
		pc.add([]Version{{FileID: ids.File("acme", branch, path), FilePath: path, Branch: branch, FileVersionID: path + "@" + string(rune('a'+seq)),
			Status: status, Deleted: deleted, ValidFrom: seq, ChunkCount: 1}}, seq, nil)
	}
	commit("", "docs/guide.md", pipeline.StatusIndexed, false)
	commit("", "docs/api/Reference.MD", pipeline.StatusIndexed, false)
	commit("", "docs-old/guide.md", pipeline.StatusIndexed, false)
	commit("", "notes.txt", pipeline.StatusFailed, false)
	commit("preview", "docs/guide.md", pipeline.StatusIndexed, false)
	commit("", "docs/gone.md", pipeline.StatusIndexed, false)
	commit("", "docs/gone.md", "deleted", true)
	commit("", "notes.txt", pipeline.StatusIndexed, false) // fixed

	paths := func(docs []Document, ok bool) []string {
		t.Helper()
		if !ok {
			t.Fatal("catalog did not answer")
		}
		var out []string
		for _, d := range docs {
			out = append(out, d.Branch+":"+d.FilePath)
		}
		return out
	}
	if got := paths(s.DocumentsNamed(ctx, "acme", "GUIDE", 10)); !slices.Equal(got, []string{":docs-old/guide.md", ":docs/guide.md"}) {
		t.Fatalf("named guide: %v", got)
	}
	if got := paths(s.DocumentsNamed(ctx, "acme", "ref", 10)); !slices.Equal(got, []string{":docs/api/Reference.MD"}) {
		t.Fatalf("named ref (short needle): %v", got)
	}
	if got := paths(s.DocumentsNamed(ctx, "acme", "gone", 10)); len(got) != 0 {
		t.Fatalf("a deleted file is found: %v", got)
	}
	if got := paths(s.DocumentsUnder(ctx, "acme", []PathScope{{Path: "docs"}}, 10)); !slices.Equal(got, []string{":docs/api/Reference.MD", ":docs/guide.md"}) {
		t.Fatalf("under docs: %v", got)
	}
	if got := paths(s.DocumentsUnder(ctx, "acme", []PathScope{{Branch: "preview", Path: ""}}, 10)); !slices.Equal(got, []string{"preview:docs/guide.md"}) {
		t.Fatalf("branch preview: %v", got)
	}
	if got := paths(s.DocumentsUnder(ctx, "acme", nil, 3)); !slices.Equal(got, []string{":docs-old/guide.md", ":docs/api/Reference.MD", ":docs/guide.md"}) {
		t.Fatalf("first three: %v", got)
	}
	if got := paths(s.FailedDocuments(ctx, "acme", 10)); len(got) != 0 {
		t.Fatalf("a fixed file is still failed: %v", got)
	}
	if got, ok := s.CatalogFolders(ctx, "acme", 10); !ok || !slices.Equal(got, []string{"docs", "docs-old", "docs/api"}) {
		t.Fatalf("folders: %v", got)
	}
	if st, _ := c.Stats(ctx, "acme"); st != (Stats{Indexed: 5, Chunks: 5}) {
		t.Fatalf("stats %+v", st)
	}
}

// TestCatalogNeverCommitted: an id is known to be no document only when the
// catalog is ready and holds no version of it (a deleted file still has
// versions; another project's file is not this one's).
func TestCatalogNeverCommitted(t *testing.T) {
	ctx := access.System(context.Background())
	c := &Catalog{log: slog.New(slog.DiscardHandler), byKey: map[string]*projectCatalog{}, marks: map[string]map[string]map[string]bool{}}
	pc := newProjectCatalog()
	c.byKey["acme"] = pc
	kept, gone := ids.File("acme", "", "a.md"), ids.File("acme", "", "b.md")
	pc.add([]Version{{FileID: kept, FilePath: "a.md", FileVersionID: "a1", Status: pipeline.StatusIndexed, ValidFrom: 1}}, 1, nil)
	pc.add([]Version{{FileID: gone, FilePath: "b.md", FileVersionID: "b1", Status: pipeline.StatusIndexed, ValidFrom: 2}}, 2, nil)
	pc.add([]Version{{FileID: gone, FilePath: "b.md", Status: "deleted", Deleted: true, ValidFrom: 3}}, 3, nil)
	other := ids.File("other", "", "a.md")
	if c.neverCommitted(ctx, "acme", other) {
		t.Fatal("answered before the catalog is ready")
	}
	c.ready.Store(true)
	c.marksReady.Store(true)
	for id, want := range map[string]bool{kept: false, gone: false, other: true, ids.Chunk(ids.FileVersion(kept, "e", "s"), 0): true} {
		if got := c.neverCommitted(ctx, "acme", id); got != want {
			t.Errorf("neverCommitted(acme, %s) = %v, want %v", id, got, want)
		}
	}
	if !c.neverCommitted(ctx, "empty", kept) {
		t.Error("a project with no commits has documents")
	}
	var none *Catalog
	if none.neverCommitted(ctx, "acme", other) {
		t.Error("no catalog answered")
	}
}

// TestCatalogDocumentAt: a document node as of a sequence, from the
// catalog: the version visible then, nothing once deleted, and no answer
// for a sequence the catalog does not cover.
func TestCatalogDocumentAt(t *testing.T) {
	ctx := access.System(context.Background())
	c := &Catalog{log: slog.New(slog.DiscardHandler), byKey: map[string]*projectCatalog{}, marks: map[string]map[string]map[string]bool{}}
	s := (&Store{}).SetCatalog(c)
	pc := newProjectCatalog()
	c.byKey["acme"] = pc
	id := ids.File("acme", "", "docs/a.md")
	pc.add([]Version{{FileID: id, FilePath: "docs/a.md", FileVersionID: "v1", Status: pipeline.StatusIndexed, Title: "One", ValidFrom: 1}}, 1, nil)
	pc.add([]Version{{FileID: id, FilePath: "docs/a.md", FileVersionID: "v2", Status: pipeline.StatusIndexed, Title: "Two", ValidFrom: 2}}, 2, nil)
	pc.add([]Version{{FileID: id, FilePath: "docs/a.md", Status: "deleted", Deleted: true, ValidFrom: 3}}, 3, nil)
	if _, _, ok := s.DocumentAt(ctx, "acme", id, 1); ok {
		t.Fatal("answered before the catalog is ready")
	}
	c.ready.Store(true)
	c.marksReady.Store(true)
	for at, want := range map[int64]string{1: "v1", 2: "v2", 3: "", 0: ""} {
		d, found, ok := s.DocumentAt(ctx, "acme", id, at)
		if !ok || found != (want != "") || d.FileVersionID != want {
			t.Errorf("at %d: %+v found=%v ok=%v, want version %q", at, d, found, ok, want)
		}
		if found && (d.Name != "a.md" || d.Folder != "docs") {
			t.Errorf("at %d: name %q folder %q", at, d.Name, d.Folder)
		}
	}
	if _, _, ok := s.DocumentAt(ctx, "acme", id, 4); ok {
		t.Error("answered for a sequence past the catalog's watermark")
	}
	if _, _, ok := s.DocumentAt(ctx, "other", id, 1); ok {
		t.Error("answered for a project the catalog does not hold")
	}
}

// TestCatalogMembers: a member (a file inside a container,
// "mail/launch.eml//notes.txt") is in the folder of its container's path,
// named as the member; a container's scope holds the container and its
// members.
func TestCatalogMembers(t *testing.T) {
	ctx := access.System(context.Background())
	c := &Catalog{log: slog.New(slog.DiscardHandler), byKey: map[string]*projectCatalog{}, marks: map[string]map[string]map[string]bool{}}
	c.ready.Store(true)
	c.marksReady.Store(true)
	s := (&Store{}).SetCatalog(c)
	pc := newProjectCatalog()
	c.byKey["acme"] = pc
	var vs []Version
	for _, p := range []string{"mail/launch.eml", "mail/launch.eml//notes.txt", "share/b.zip", "share/b.zip//reports/q3.docx", "mail/launch.emlx"} {
		vs = append(vs, Version{FileID: ids.File("acme", "", p), FilePath: p, FileVersionID: p + "@1", Status: pipeline.StatusIndexed, ValidFrom: 1, ChunkCount: 1,
			Readers: []string{access.Everyone}})
	}
	pc.add(vs, 1, nil) // one commit: containers and members together

	if got, ok := s.CatalogFolders(ctx, "acme", 10); !ok || !slices.Equal(got, []string{"mail", "mail/launch.eml", "share", "share/b.zip//reports"}) {
		t.Fatalf("folders: %v", got)
	}
	if got := readableFolders(access.WithGrant(context.Background(), access.Grant{}), pc); !slices.Contains(got, "mail/launch.eml") || slices.Contains(got, "mail/launch.eml/") {
		t.Fatalf("readable folders: %v", got)
	}
	docs, ok := s.DocumentsUnder(ctx, "acme", []PathScope{{Path: "mail/launch.eml"}}, 10)
	var paths []string
	for _, d := range docs {
		paths = append(paths, d.FilePath)
	}
	if !ok || !slices.Equal(paths, []string{"mail/launch.eml", "mail/launch.eml//notes.txt"}) {
		t.Fatalf("under mail/launch.eml: %v", paths)
	}
	d, found, ok := s.DocumentAt(ctx, "acme", ids.File("acme", "", "share/b.zip//reports/q3.docx"), 1)
	if !ok || !found || d.Name != "q3.docx" || d.Folder != "share/b.zip//reports" {
		t.Fatalf("member document %+v", d)
	}
	named, ok := s.DocumentsNamed(ctx, "acme", "notes", 10)
	if !ok || len(named) != 1 || named[0].Name != "notes.txt" || named[0].Folder != "mail/launch.eml" {
		t.Fatalf("named notes: %+v", named)
	}
}
