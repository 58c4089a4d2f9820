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

// TestCatalogAnswersOnlyWhatTheCallerMayRead: every answer the catalog
// gives (listings, names, folders, failures, documents by id, counts,
// embedded counts) holds only the documents the caller's grant matches,
// and a hidden document is answered as one never committed. An access
// change (a new Version of the same file version) decides for every
// sequence, old ones included.
func TestCatalogAnswersOnlyWhatTheCallerMayRead(t *testing.T) {
	c := &Catalog{log: slog.New(slog.DiscardHandler), byKey: map[string]*projectCatalog{},
		marks: map[string]map[string]map[string]bool{"acme": {"m": {}}}}
	c.ready.Store(true)
	c.marksReady.Store(true)
	s := (&Store{}).SetCatalog(c)
	pc := newProjectCatalog()
	c.byKey["acme"] = pc
	seq := int64(0)
	commit := func(path, status string, readers ...string) string {
		seq++
		id := ids.File("acme", "", path)
		fv := ids.FileVersion(id, "e", "s")
		c.marks["acme"]["m"][fv] = true
		pc.add([]Version{{FileID: id, FilePath: path, FileVersionID: fv, Status: status, ValidFrom: seq, ChunkCount: 2, Readers: readers}}, seq, c.marks["acme"])
		return id
	}
	public := commit("handbook/intro.md", pipeline.StatusIndexed, access.Everyone)
	hr := commit("hr/salaries.md", pipeline.StatusIndexed, "hr")
	commit("hr/broken.pdf", pipeline.StatusFailed, "hr")
	bad := commit("legal/x.md", pipeline.StatusIndexed, access.Nobody)
	legacy := commit("old/y.md", pipeline.StatusIndexed) // written before access: admins only

	grants := map[string]access.Grant{
		"admin": {Admin: true}, "hr": {Groups: []string{"hr"}}, "finance": {Groups: []string{"finance"}}, "none": {},
	}
	want := map[string][]string{
		"admin":   {"handbook/intro.md", "hr/broken.pdf", "hr/salaries.md", "legal/x.md", "old/y.md"},
		"hr":      {"handbook/intro.md", "hr/broken.pdf", "hr/salaries.md"},
		"finance": {"handbook/intro.md"},
		"none":    {"handbook/intro.md"},
	}
	for name, g := range grants {
		ctx := access.WithGrant(context.Background(), g)
		docs, ok := s.DocumentsUnder(ctx, "acme", nil, 100)
		if got := docPaths(docs); !ok || !slices.Equal(got, want[name]) {
			t.Errorf("%s: DocumentsUnder = %v, want %v", name, got, want[name])
		}
		docs, _ = s.DocumentsUnder(ctx, "acme", []PathScope{{Path: "hr"}}, 100)
		if got, wantHR := len(docs), map[bool]int{true: 2, false: 0}[slices.Contains(want[name], "hr/salaries.md")]; got != wantHR {
			t.Errorf("%s: DocumentsUnder(hr) = %d documents, want %d", name, got, wantHR)
		}
		named, _ := s.DocumentsNamed(ctx, "acme", "salaries", 10)
		if got := len(named) == 1; got != slices.Contains(want[name], "hr/salaries.md") {
			t.Errorf("%s: DocumentsNamed(salaries) = %v", name, docPaths(named))
		}
		failed, _ := s.FailedDocuments(ctx, "acme", 10)
		if got := len(failed) == 1; got != slices.Contains(want[name], "hr/broken.pdf") {
			t.Errorf("%s: FailedDocuments = %v", name, docPaths(failed))
		}
		folders, _ := s.CatalogFolders(ctx, "acme", 10)
		slices.Sort(folders)
		var wantFolders []string
		for _, p := range want[name] {
			wantFolders = append(wantFolders, folderOfPath(p))
		}
		wantFolders = slices.Compact(wantFolders)
		if !slices.Equal(folders, wantFolders) {
			t.Errorf("%s: CatalogFolders = %v, want %v", name, folders, wantFolders)
		}
		st, _ := c.Stats(ctx, "acme")
		indexed := 0
		for _, p := range want[name] {
			if p != "hr/broken.pdf" {
				indexed++
			}
		}
		if st.Indexed != indexed || st.Chunks != 2*indexed || st.Failed != len(want[name])-indexed {
			t.Errorf("%s: Stats = %+v, want %d indexed", name, st, indexed)
		}
		if n, _ := c.Embedded(ctx, "acme", "m"); n != 2*indexed {
			t.Errorf("%s: Embedded = %d, want %d", name, n, 2*indexed)
		}
		for id, path := range map[string]string{public: "handbook/intro.md", hr: "hr/salaries.md", bad: "legal/x.md", legacy: "old/y.md"} {
			readable := slices.Contains(want[name], path)
			_, found, ok := s.DocumentAt(ctx, "acme", id, seq)
			if !ok || found != readable {
				t.Errorf("%s: DocumentAt(%s) found=%v, want %v", name, path, found, readable)
			}
			if got := c.neverCommitted(ctx, "acme", id); got == readable {
				t.Errorf("%s: neverCommitted(%s) = %v, want %v", name, path, got, !readable)
			}
			for i, wantKnown := range []bool{true, true, false} { // two chunks; no third
				chunk := ids.Chunk(ids.FileVersion(id, "e", "s"), i)
				got, known := c.chunkReadable(ctx, "acme", chunk)
				if !known || got != (readable && wantKnown) {
					t.Errorf("%s: chunkReadable(%s chunk %d) = %v (known %v), want %v", name, path, i, got, known, readable && wantKnown)
				}
			}
		}
	}

	// HR's file is given to finance alone: an access change commits the same
	// file version again with new readers, and it decides for old sequences too.
	seq++
	pc.add([]Version{{FileID: hr, FilePath: "hr/salaries.md", FileVersionID: ids.FileVersion(hr, "e", "s"), Status: pipeline.StatusIndexed,
		ValidFrom: seq, ChunkCount: 2, Readers: []string{"finance"}}}, seq, c.marks["acme"])
	hrCtx := access.WithGrant(context.Background(), grants["hr"])
	finCtx := access.WithGrant(context.Background(), grants["finance"])
	for at := int64(2); at <= seq; at++ {
		if _, found, _ := s.DocumentAt(hrCtx, "acme", hr, at); found {
			t.Errorf("hr still reads the file at sequence %d after losing it", at)
		}
		if _, found, _ := s.DocumentAt(finCtx, "acme", hr, at); !found {
			t.Errorf("finance does not read the file at sequence %d after gaining it", at)
		}
	}
	if r, _ := c.chunkReadable(hrCtx, "acme", ids.Chunk(ids.FileVersion(hr, "e", "s"), 0)); r {
		t.Error("hr still reads the file's chunks by id after losing it")
	}
	if r, _ := c.chunkReadable(finCtx, "acme", ids.Chunk(ids.FileVersion(hr, "e", "s"), 1)); !r {
		t.Error("finance does not read the file's chunks by id after gaining it")
	}
	if st, _ := c.Stats(access.System(context.Background()), "acme"); st.Indexed != 4 || st.Chunks != 8 {
		t.Errorf("admin counts after an access change = %+v, want 4 indexed documents, 8 chunks (the version counted once)", st)
	}
}

func docPaths(docs []Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.FilePath)
	}
	slices.Sort(out)
	return out
}

// asSystem is the context of tests about other things than access: they
// read as Strata itself, every document whatever its readers.
func asSystem() context.Context { return access.System(context.Background()) }
