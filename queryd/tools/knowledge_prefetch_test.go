package tools

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
)

// queryRecorder is a kbReader that records the chunk queries asked of it
// and can fail those by section id alone (the speculative ones).
type queryRecorder struct {
	*kbReader
	failBySection bool

	mu      sync.Mutex
	queries []store.ChunkQuery
}

func (r *queryRecorder) ChunkDetails(ctx context.Context, p string, q store.ChunkQuery) ([]store.ChunkDetail, error) {
	r.mu.Lock()
	r.queries = append(r.queries, q)
	r.mu.Unlock()
	if r.failBySection && q.FileVersionID == "" {
		return nil, errors.New("weaviate unavailable")
	}
	return r.kbReader.ChunkDetails(ctx, p, q)
}

// asked returns the queries recorded since the last call, by section id
// alone (speculative) and with a version (after resolving).
func (r *queryRecorder) asked() (bySection, byVersion int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.queries {
		if q.FileVersionID == "" {
			bySection++
		} else {
			byVersion++
		}
	}
	r.queries = nil
	return bySection, byVersion
}

// readerServer serves r's index with a token budget (0 = default).
func readerServer(t *testing.T, r Reader, budget int) *server.MCPServer {
	t.Helper()
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	New(r, signer, slog.New(slog.DiscardHandler)).SetTokenBudget(budget).Register(s)
	return s
}

// TestReadSectionPrefetch: a section read inline takes its chunks from the
// query by section id asked while the section was being resolved; every
// other read answers as it did, and a failed speculative query only costs
// the usual one.
func TestReadSectionPrefetch(t *testing.T) {
	f := newKBFixture()
	r := &queryRecorder{kbReader: newKBReader(f.x)}
	s := readerServer(t, r, 0)
	read := func(id string) map[string]any {
		t.Helper()
		return mustCall(t, s, "*", "read", map[string]any{"path_part_id": id})
	}

	// The key reads every project: one speculative query in each.
	projects := len(f.x.docs)
	out := read(f.guideSecs[2])
	eqList(t, "Usage", nums(field(out, "chunks", "index")), []int{4, 5, 6, 7, 8, 9})
	if bySection, byVersion := r.asked(); bySection != projects || byVersion != 0 {
		t.Fatalf("inline section read asked %d queries by section and %d by version, want %d and 0", bySection, byVersion, projects)
	}

	// A replaced version's section is not found, whatever the speculative query saw.
	mustFail(t, s, "*", "read", map[string]any{"path_part_id": f.oldSection}, "path_part_id not found")
	r.asked()

	// A chunk id: the speculative query finds nothing and is not used.
	out = read(f.imageChunk)
	eqList(t, "chunk", strs(field(out, "chunks", "path_part_id")), []string{f.imageChunk})
	r.asked()

	// Over the budget: paginated with its own queries, the speculative one dropped.
	small := readerServer(t, r, 500)
	out = mustCall(t, small, "*", "read", map[string]any{"path_part_id": f.guideSecs[2], "limit": 2})
	eqList(t, "Usage page 1", nums(field(out, "chunks", "index")), []int{4, 5})
	if _, byVersion := r.asked(); byVersion != 1 {
		t.Fatalf("paginated section read asked %d queries by version, want 1", byVersion)
	}

	// The speculative query fails: the section is read the usual way.
	r.failBySection = true
	out = read(f.guideSecs[2])
	eqList(t, "Usage after a failed prefetch", nums(field(out, "chunks", "index")), []int{4, 5, 6, 7, 8, 9})
	if bySection, byVersion := r.asked(); bySection != projects || byVersion != 1 {
		t.Fatalf("after a failed prefetch: %d queries by section and %d by version, want %d and 1", bySection, byVersion, projects)
	}
}

// TestReadSectionPrefetchMatchesPlainRead: with and without the prefetch
// (its query failing), every section of the fixture reads the same.
func TestReadSectionPrefetchMatchesPlainRead(t *testing.T) {
	f := newKBFixture()
	with := readerServer(t, &queryRecorder{kbReader: newKBReader(f.x)}, 0)
	without := readerServer(t, &queryRecorder{kbReader: newKBReader(f.x), failBySection: true}, 0)
	var sections []string
	for _, secs := range f.x.sections {
		for _, sec := range secs {
			sections = append(sections, sec.ID)
		}
	}
	slices.Sort(sections)
	if len(sections) < 5 {
		t.Fatalf("fixture has %d sections", len(sections))
	}
	for _, id := range sections {
		a, errA := callTool(t, with, "*", "read", map[string]any{"path_part_id": id})
		b, errB := callTool(t, without, "*", "read", map[string]any{"path_part_id": id})
		if errA != errB || !reflect.DeepEqual(a, b) {
			t.Errorf("section %s: with prefetch %v %q, without %v %q", id, a, errA, b, errB)
		}
	}
}

// TestReadSectionFromItsChunks: with chunks that record their section and a
// catalog of current versions, a current section is read with its one chunk
// query (no Section object read), a chunk id with no section query first;
// and every id of the fixture (documents, sections and chunks of current,
// replaced and branch versions, folders) reads exactly as without.
func TestReadSectionFromItsChunks(t *testing.T) {
	f := newKBFixture()
	carrySections(f.x)
	all := []string{ids.Project("acme"), ids.Folder("acme", "", "docs")}
	for p := range f.x.docs {
		for _, d := range f.x.docs[p] {
			all = append(all, d.FileID)
		}
		for _, sec := range f.x.sections[p] {
			all = append(all, sec.ID)
		}
		for _, c := range f.x.chunks[p] {
			all = append(all, c.ID)
		}
	}
	slices.Sort(all)
	for _, budget := range []int{0, 500, 50} {
		want := readerServer(t, newKBReader(f.x), budget)
		got := readerServer(t, newPlaceReader(f.x), budget)
		for _, id := range all {
			for _, projects := range []string{"*", "acme", "beta"} {
				args := map[string]any{"path_part_id": id}
				w, werr := callTool(t, want, projects, "read", args)
				g, gerr := callTool(t, got, projects, "read", args)
				if werr != gerr || !reflect.DeepEqual(w, g) {
					t.Fatalf("budget %d, key of %s, read %s:\n from chunks %v %q\n as before  %v %q", budget, projects, id, g, gerr, w, werr)
				}
			}
		}
	}

	r := newPlaceReader(f.x)
	s := readerServer(t, r, 0)
	projects := len(f.x.docs)
	out := mustCall(t, s, "*", "read", map[string]any{"path_part_id": f.guideSecs[1]})
	eqList(t, "Install", nums(field(out, "chunks", "index")), []int{1, 2, 3})
	if anchors, queries := r.trips(); anchors != 0 || queries != projects || r.sectionReads.Swap(0) != 0 {
		t.Fatalf("section read: %d chunk queries and a Section read, want %d (one a project) and none", queries, projects)
	}
	mustCall(t, s, "*", "read", map[string]any{"path_part_id": ids.Chunk(f.guideFV, 2)})
	if anchors, _ := r.trips(); anchors != 1 || r.sectionReads.Swap(0) != 0 {
		t.Fatalf("chunk read: %d chunk reads and a Section read, want 1 and none", anchors)
	}
	// A replaced version's section: its chunks are found but not current, so
	// it is resolved as before, and not found.
	mustFail(t, s, "*", "read", map[string]any{"path_part_id": f.oldSection}, "path_part_id not found")
	if n := r.sectionReads.Swap(0); n == 0 {
		t.Fatal("a replaced version's section was not checked against its Section object")
	}
}
