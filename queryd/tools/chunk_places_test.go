package tools

import (
	"context"
	"log/slog"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
)

// placeReader is a queryRecorder with a catalog that knows each document's
// current version (as the store's does; its listings answer "cannot"), and
// that counts the anchor reads read_around makes without a place.
type placeReader struct {
	*queryRecorder
	anchorReads, sectionReads atomic.Int32
	// uncovered: the catalog cannot answer (not loaded, or behind the watermark).
	uncovered atomic.Bool
}

func (r *placeReader) GetSection(ctx context.Context, p, id string, at int64) (*store.Section, error) {
	r.sectionReads.Add(1)
	return r.queryRecorder.GetSection(ctx, p, id, at)
}

func newPlaceReader(x *kbIndex) *placeReader {
	return &placeReader{queryRecorder: &queryRecorder{kbReader: newKBReader(x)}}
}

func (r *placeReader) GetChunkDetail(ctx context.Context, p, id string, at int64) (*store.ChunkDetail, error) {
	r.anchorReads.Add(1)
	return r.queryRecorder.GetChunkDetail(ctx, p, id, at)
}

// DocumentAt is the store's: a file's current document, deleted ones not found.
func (r *placeReader) DocumentAt(_ context.Context, project, fileID string, _ int64) (store.Document, bool, bool) {
	if r.uncovered.Load() {
		return store.Document{}, false, false
	}
	d := r.x.documentByID(project, fileID)
	if d == nil || d.Deleted {
		return store.Document{}, false, true
	}
	return d.Document, true, true
}

func (r *placeReader) DocumentsNamed(context.Context, string, string, int) ([]store.Document, bool) {
	return nil, false
}
func (r *placeReader) DocumentsUnder(context.Context, string, []store.PathScope, int) ([]store.Document, bool) {
	return nil, false
}
func (r *placeReader) FailedDocuments(context.Context, string, int) ([]store.Document, bool) {
	return nil, false
}
func (r *placeReader) CatalogFolders(context.Context, string, int) ([]string, bool) {
	return nil, false
}

// placeServers serves a fixture whose chunks record their sections twice:
// want as before places, got with places and a catalog (r).
func placeServers(t *testing.T) (f *kbFixture, want, got *server.MCPServer, r *placeReader) {
	t.Helper()
	f = newKBFixture()
	carrySections(f.x)
	r = newPlaceReader(f.x)
	return f, readerServer(t, newKBReader(f.x), 0), readerServer(t, r, 0), r
}

// trips returns the anchor reads and chunk queries since the last call.
func (r *placeReader) trips() (anchorReads, chunkQueries int) {
	bySection, byVersion := r.asked()
	return int(r.anchorReads.Swap(0)), bySection + byVersion
}

// TestReadAroundFromPlace: read_around of a chunk queryd has returned
// before asks one query, and answers exactly as read_around that reads its
// anchor first, at every window and budget.
func TestReadAroundFromPlace(t *testing.T) {
	f := newKBFixture()
	carrySections(f.x)
	for _, budget := range []int{0, 500, 50} {
		want := readerServer(t, newKBReader(f.x), budget)
		r := newPlaceReader(f.x)
		got := readerServer(t, r, budget)
		for i := range 10 {
			for _, window := range []int{1, 3} {
				args := map[string]any{"chunk_id": ids.Chunk(f.guideFV, i), "window": window}
				w := mustCall(t, want, "*", "read_around", args)
				first := mustCall(t, got, "*", "read_around", args)
				r.trips()
				again := mustCall(t, got, "*", "read_around", args)
				if anchors, queries := r.trips(); anchors != 0 || queries != 1 {
					t.Fatalf("budget %d %v again: %d anchor reads and %d chunk queries, want 0 and 1", budget, args, anchors, queries)
				}
				if !reflect.DeepEqual(w, first) || !reflect.DeepEqual(w, again) {
					t.Fatalf("budget %d %v:\n want  %v\n first %v\n again %v", budget, args, w, first, again)
				}
			}
		}
	}

	// A section read inline and a search remember their chunks too.
	r := newPlaceReader(f.x)
	s := readerServer(t, r, 0)
	mustCall(t, s, "*", "read", map[string]any{"path_part_id": f.guideSecs[1]})
	r.trips()
	mustCall(t, s, "*", "read_around", map[string]any{"chunk_id": ids.Chunk(f.guideFV, 2)})
	if anchors, queries := r.trips(); anchors != 0 || queries != 1 {
		t.Fatalf("after reading its section: %d anchor reads and %d chunk queries, want 0 and 1", anchors, queries)
	}
	hits := field(mustCall(t, s, "acme", "search_keyword", map[string]any{"query": "guide"}), "results", "path_part_id")
	if len(hits) == 0 {
		t.Fatal("search_keyword found nothing to remember")
	}
	plain, current := readerServer(t, newKBReader(f.x), 0), 0
	for _, hit := range hits {
		// The fake's search also finds replaced versions' chunks: those
		// must answer as without a place (not found).
		args := map[string]any{"chunk_id": hit}
		w, werr := callTool(t, plain, "acme", "read_around", args)
		r.trips()
		g, gerr := callTool(t, s, "acme", "read_around", args)
		anchors, queries := r.trips()
		if werr != gerr || !reflect.DeepEqual(w, g) {
			t.Fatalf("search hit %v:\n want %v %q\n got  %v %q", hit, w, werr, g, gerr)
		}
		if werr == "" {
			current++
			if anchors != 0 || queries != 1 {
				t.Fatalf("search hit %v: %d anchor reads and %d chunk queries, want 0 and 1", hit, anchors, queries)
			}
		}
	}
	if current == 0 {
		t.Fatal("no search hit of a current version")
	}
}

// TestReadAroundPlaceWithoutCatalog: while the catalog cannot answer as of
// the watermark, remembered places and section chunks are not trusted; the
// anchor and the Section object are read as before, with the same answers.
func TestReadAroundPlaceWithoutCatalog(t *testing.T) {
	f, want, got, r := placeServers(t)
	around := map[string]any{"chunk_id": ids.Chunk(f.guideFV, 5)}
	mustCall(t, got, "*", "read_around", around) // remembered
	r.uncovered.Store(true)
	r.trips()
	if w, g := mustCall(t, want, "*", "read_around", around), mustCall(t, got, "*", "read_around", around); !reflect.DeepEqual(w, g) {
		t.Fatalf("read_around:\n want %v\n got  %v", w, g)
	}
	if anchors, _ := r.trips(); anchors != 1 {
		t.Fatalf("read_around without the catalog: %d anchor reads, want 1", anchors)
	}
	read := map[string]any{"path_part_id": f.guideSecs[1]}
	if w, g := mustCall(t, want, "*", "read", read), mustCall(t, got, "*", "read", read); !reflect.DeepEqual(w, g) {
		t.Fatalf("read:\n want %v\n got  %v", w, g)
	}
	if n := r.sectionReads.Swap(0); n == 0 {
		t.Fatal("a section was resolved from its chunks without the catalog")
	}
}

// TestReadAroundPlaceAfterCommit: a remembered place never outlives its
// version: once a commit makes another version current (or deletes the
// document), read_around of the old chunk answers as if no place were known.
func TestReadAroundPlaceAfterCommit(t *testing.T) {
	f, want, got, r := placeServers(t)
	current := map[string]any{"chunk_id": ids.Chunk(f.guideFV, 5)}
	mustCall(t, got, "*", "read_around", current)
	r.trips()
	mustCall(t, got, "*", "read_around", current)
	if anchors, _ := r.trips(); anchors != 0 {
		t.Fatalf("the second read_around read its anchor %d times, want 0 (remembered)", anchors)
	}

	var doc *store.DocumentDetail
	for i := range f.x.docs["acme"] {
		if d := &f.x.docs["acme"][i]; d.FileID == f.guide && d.Branch == "" {
			doc = d
		}
	}
	same := func(label string, args map[string]any) {
		t.Helper()
		w, werr := callTool(t, want, "*", "read_around", args)
		g, gerr := callTool(t, got, "*", "read_around", args)
		if werr != gerr || !reflect.DeepEqual(w, g) {
			t.Fatalf("%s: with places %v %q, without %v %q", label, g, gerr, w, werr)
		}
	}
	doc.FileVersionID = f.guideOldFV // a commit makes the older version current again
	same("replaced version", current)
	if _, errText := callTool(t, got, "*", "read_around", current); errText == "" {
		t.Fatal("the replaced version's chunk is still served")
	}
	same("now current version", map[string]any{"chunk_id": f.oldChunk})
	doc.FileVersionID = f.guideFV
	same("current again", current)
	doc.Status = "deleted" // a deletion as its status records it: the place is not trusted
	r.trips()
	same("deleted by status", current)
	if anchors, _ := r.trips(); anchors == 0 {
		t.Fatal("read_around used the place of a chunk whose document's status is deleted")
	}
	doc.Status = ""
	doc.Deleted = true
	same("deleted", current)
}

// TestReadAroundPlaceChecks: a place is used only by a key that reads its
// project, only for the id it derives, and only when the anchor row comes
// back as the place says; otherwise the anchor is read first, and the
// answer is the same.
func TestReadAroundPlaceChecks(t *testing.T) {
	f := newKBFixture()
	carrySections(f.x)
	want := readerServer(t, newKBReader(f.x), 0)
	r := newPlaceReader(f.x)
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	tl := New(r, signer, slog.New(slog.DiscardHandler))
	got := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	tl.Register(got)

	id := ids.Chunk(f.guideFV, 5)
	args := map[string]any{"chunk_id": id}
	w := mustCall(t, want, "*", "read_around", args)
	mustCall(t, got, "*", "read_around", args)
	mustFail(t, got, "beta", "read_around", args, "chunk_id not found")

	pl, ok := tl.places.lookup(id)
	if !ok {
		t.Fatal("read_around did not remember its anchor")
	}
	row := *f.x.getChunk("acme", id)
	if !pl.matches(row) {
		t.Fatalf("place %v does not match its own row %v", pl, row)
	}
	for _, c := range []struct {
		label string
		edit  func(*chunkPlace)
	}{
		{"other section totals", func(p *chunkPlace) { p.sectionChunks-- }},
		{"another section", func(p *chunkPlace) { p.sectionID = uuid.MustParse(f.guideSecs[1]) }},
		{"no section", func(p *chunkPlace) { p.sectionID = uuid.UUID{} }},
		{"another document", func(p *chunkPlace) { p.fileID = uuid.MustParse(f.readme) }},
	} {
		bad := pl
		c.edit(&bad)
		if bad.matches(row) {
			t.Fatalf("%s: matched", c.label)
		}
		tl.places.put(uuid.MustParse(id), bad)
		r.trips()
		g := mustCall(t, got, "*", "read_around", args)
		if anchors, _ := r.trips(); anchors != 1 {
			t.Fatalf("%s: %d anchor reads, want 1 (the place refused)", c.label, anchors)
		}
		if !reflect.DeepEqual(w, g) {
			t.Fatalf("%s:\n want %v\n got  %v", c.label, w, g)
		}
	}

	// A place under an id its version and index do not derive is not used.
	shifted := pl
	shifted.index = 4
	tl.places.put(uuid.MustParse(id), shifted)
	if _, ok := tl.places.lookup(id); ok {
		t.Fatal("a place of another chunk was used")
	}
}

// TestChunkPlacesGenerations: the places kept are bounded, and a place used
// recently survives the older generation being dropped.
func TestChunkPlacesGenerations(t *testing.T) {
	var p chunkPlaces
	fv := ids.FileVersion(ids.File("acme", "", "a.md"), "1", "1")
	put := func(from, to int) {
		for i := from; i < to; i++ {
			p.put(uuid.MustParse(ids.Chunk(fv, i)), chunkPlace{fileVersionID: uuid.MustParse(fv), index: i})
		}
	}
	const n = placesPerGeneration
	put(0, n)                                     // generation one: chunks 0 to n-1
	put(n, n+n/2)                                 // generation two begins; one is the older
	if _, ok := p.lookup(ids.Chunk(fv, 0)); !ok { // used: moves into generation two
		t.Fatal("chunk 0 lost while its generation is kept")
	}
	put(n+n/2, 2*n+n/4) // generation three begins; one is dropped
	if _, ok := p.lookup(ids.Chunk(fv, 0)); !ok {
		t.Fatal("a place used recently was dropped")
	}
	if _, ok := p.lookup(ids.Chunk(fv, 1)); ok {
		t.Fatal("a place of a dropped generation is still kept")
	}
	if kept := len(p.cur) + len(p.old); kept > 2*n {
		t.Fatalf("%d places kept, bound %d", kept, 2*n)
	}
	// Branch chunks, section chunks without their section's totals and
	// chunks whose ids are not UUIDs are not remembered.
	other := ids.FileVersion(ids.File("acme", "", "b.md"), "1", "1")
	fileID := ids.File("acme", "", "b.md")
	p.remember("acme",
		store.Chunk{ID: ids.Chunk(other, 0), Index: 0, FileID: fileID, FileVersionID: other, Branch: "preview"},
		store.Chunk{ID: ids.Chunk(other, 1), Index: 1, FileID: fileID, FileVersionID: other, SectionID: ids.Section(other, 0)},
		store.Chunk{ID: ids.Chunk(other, 2), Index: 2, FileID: "not-a-uuid", FileVersionID: other},
		store.Chunk{ID: ids.Chunk(other, 3), Index: 3, FileID: fileID, FileVersionID: other})
	for i, want := range []bool{false, false, false, true} {
		if _, ok := p.lookup(ids.Chunk(other, i)); ok != want {
			t.Errorf("chunk %d remembered: %v, want %v", i, ok, want)
		}
	}
}
