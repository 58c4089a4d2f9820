package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// accessFile is one document of the access fixture: its readers and the
// word only its chunks contain.
type accessFile struct {
	path, word string
	readers    []string // nil: written before access existed
}

var accessFiles = []accessFile{
	{"public/open.md", "openquokka", []string{access.Everyone}},
	{"hr/secret.md", "secretwombat", []string{"hr"}},
	{"eng/split.md", "splitnarwhal", []string{"eng-x", "y-team"}}, // never matches eng-team
	{"bad/broken.md", "brokenaxolotl", []string{access.Nobody}},
	{"old/legacy.md", "legacyibis", nil},
}

const accessModel = "access-model"

// writeAccessFixture stores every object class of each file (Document,
// Version, Section, Chunk, ChunkVector) with its readers, committed at 1.
func writeAccessFixture(t testing.TB, project string) *Store {
	t.Helper()
	wv := weaviateWithVectors(t, project, accessModel)
	var objs []*models.Object
	for i, f := range accessFiles {
		fileID := ids.File(project, "", f.path)
		fv := ids.FileVersion(fileID, "e", "s")
		sec := ids.Section(fv, 0)
		with := func(p map[string]any) map[string]any {
			if f.readers != nil {
				p[schema.ReadersProperty] = f.readers
			}
			return p
		}
		folder, name := folderOfPath(f.path), baseOf(f.path)
		objs = append(objs,
			&models.Object{Class: schema.DocumentClass, ID: strfmt.UUID(fileID), Tenant: project, Properties: with(map[string]any{
				"file_id": fileID, "file_path": f.path, "name": name, "folder": folder, "branch": "", "file_version_id": fv,
				"status": pipeline.StatusIndexed, "deleted": false, "chunk_count": 2, "commit_seq": 1, "title": f.word})},
			&models.Object{Class: schema.VersionClass, ID: strfmt.UUID(ids.Section(fv, 99)), Tenant: project, Properties: with(map[string]any{
				"file_id": fileID, "file_path": f.path, "branch": "", "file_version_id": fv, "status": pipeline.StatusIndexed,
				"deleted": false, "valid_from": 1, "chunk_count": 2})},
			&models.Object{Class: schema.SectionClass, ID: strfmt.UUID(sec), Tenant: project, Properties: with(map[string]any{
				"file_id": fileID, "file_version_id": fv, "file_path": f.path, "branch": "", "ordinal": 0, "title": "S",
				"heading_path": []string{"S"}, "level": 1, "token_count": 4, "chunk_count": 2, "valid_from": 1})})
		for c := range 2 {
			chunkID := ids.Chunk(fv, c)
			text := fmt.Sprintf("%s shared common text number %d", f.word, c)
			objs = append(objs,
				&models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(chunkID), Tenant: project, Properties: with(map[string]any{
					"content": text, schema.ContentTermsProperty: text, "file_id": fileID, "file_version_id": fv, "file_path": f.path,
					"branch": "", "index": c, "start_offset": 0, "end_offset": len(text), "token_count": 4, "section_id": sec,
					"heading_path": []string{"S"}, "kind": "text", "valid_from": 1})},
				&models.Object{Class: schema.ChunkVectorClass, ID: strfmt.UUID(ids.ChunkVector(chunkID, accessModel)), Tenant: project,
					Properties: with(map[string]any{"chunk_id": chunkID, "file_id": fileID, "file_version_id": fv, "file_path": f.path,
						"branch": "", "model": accessModel, "dimensions": 3}),
					Vectors: models.Vectors{schema.VectorName(accessModel): models.Vector([]float32{1, float32(i) / 10, float32(c) / 10})}})
		}
	}
	putObjects(t, wv, objs...)
	return New(wv)
}

// TestEveryReadIsFilteredByReaders: each index read queryd makes, over
// each class of a document's objects, returns a document exactly when the
// caller's grant matches its readers, and a hidden one as nothing at all,
// as a missing one. Run without the catalog, so Weaviate's filter answers.
func TestEveryReadIsFilteredByReaders(t *testing.T) {
	const project = "dls"
	s := writeAccessFixture(t, project)
	grants := map[string]access.Grant{
		"admin": {Admin: true}, "hr": {Groups: []string{"hr"}}, "eng-team": {Groups: []string{"eng-team"}},
		"a-the": {Groups: []string{"a", "the"}}, "none": {},
	}
	readable := map[string][]string{ // grant -> words of the files it reads
		"admin": {"brokenaxolotl", "legacyibis", "openquokka", "secretwombat", "splitnarwhal"},
		"hr":    {"openquokka", "secretwombat"}, "eng-team": {"openquokka"}, "a-the": {"openquokka"}, "none": {"openquokka"},
	}
	checkEveryRead(t, s, project, grants, readable)
}

// checkEveryRead runs every index read of the access fixture as each of
// grants, which must find exactly the files readable names (by word).
func checkEveryRead(t *testing.T, s *Store, project string, grants map[string]access.Grant, readable map[string][]string) {
	t.Helper()
	for name, g := range grants {
		t.Run(name, func(t *testing.T) {
			ctx := access.WithGrant(context.Background(), g)
			want := readable[name]
			for _, f := range accessFiles {
				fileID := ids.File(project, "", f.path)
				fv := ids.FileVersion(fileID, "e", "s")
				chunkID := ids.Chunk(fv, 0)
				may := slices.Contains(want, f.word)
				seen := map[string]bool{}
				if c, err := s.GetChunk(ctx, project, chunkID, 1); err != nil {
					t.Fatal(err)
				} else {
					seen["GetChunk"] = c != nil
				}
				if c, err := s.GetChunkDetail(ctx, project, chunkID, 1); err != nil {
					t.Fatal(err)
				} else {
					seen["GetChunkDetail"] = c != nil
				}
				if cs, err := s.ChunkDetails(ctx, project, ChunkQuery{FileVersionID: fv, To: -1, Limit: 10, At: 1}); err != nil {
					t.Fatal(err)
				} else {
					seen["ChunkDetails"] = len(cs) == 2
				}
				if cs, err := s.ListChunks(ctx, project, fv, 0, 10); err != nil {
					t.Fatal(err)
				} else {
					seen["ListChunks"] = len(cs) == 2
				}
				if d, err := s.FindDocument(ctx, project, "", f.path); err != nil {
					t.Fatal(err)
				} else {
					seen["FindDocument"] = d != nil
				}
				if d, err := s.DocumentByID(ctx, project, fileID); err != nil {
					t.Fatal(err)
				} else {
					seen["DocumentByID"] = d != nil
				}
				if secs, err := s.Sections(ctx, project, fv, 1, 0, 10); err != nil {
					t.Fatal(err)
				} else {
					seen["Sections"] = len(secs) == 1
				}
				if sec, err := s.GetSection(ctx, project, ids.Section(fv, 0), 1); err != nil {
					t.Fatal(err)
				} else {
					seen["GetSection"] = sec != nil
				}
				if v, err := s.VersionAt(ctx, project, "", f.path, 1); err != nil {
					t.Fatal(err)
				} else {
					seen["VersionAt"] = v != nil
				}
				if e, err := s.Embeddings(ctx, project, accessModel, []string{chunkID}, true); err != nil {
					t.Fatal(err)
				} else {
					seen["Embeddings"] = e[chunkID].Current != nil && len(e[chunkID].Current.Vector) == 3
				}
				if ok, err := s.MayRead(ctx, project, fileID); err != nil {
					t.Fatal(err)
				} else {
					seen["MayRead"] = ok
				}
				for read, got := range seen {
					if got != may {
						t.Errorf("%s of %s (readers %q): found=%v, want %v", read, f.path, f.readers, got, may)
					}
				}
			}

			// Searches: only readable files' chunks, and a full page of them.
			hits, err := s.SearchKeyword(ctx, project, "shared common", 10, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := wordsOf(hits); !slices.Equal(got, want) || len(hits) != min(10, 2*len(want)) {
				t.Errorf("keyword search: %d hits of %v, want 2 of each of %v", len(hits), got, want)
			}
			vhits, err := s.SearchVector(ctx, project, VectorQuery{Model: accessModel, Vector: []float32{1, 0.2, 0}, At: 1, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if got := wordsOf(vhits); !slices.Equal(got, want) || len(vhits) != min(10, 2*len(want)) {
				t.Errorf("vector search: %d hits of %v, want 2 of each of %v", len(vhits), got, want)
			}
			docs, err := s.AllDocuments(ctx, project, nil, 100)
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, d := range docs {
				titles = append(titles, d.Title)
			}
			sort.Strings(titles)
			if !slices.Equal(titles, want) {
				t.Errorf("AllDocuments: %v, want %v", titles, want)
			}
			st, err := s.Stats(ctx, project)
			if err != nil {
				t.Fatal(err)
			}
			if st.Indexed != len(want) || st.Chunks != 2*len(want) {
				t.Errorf("Stats: %+v, want %d documents and %d chunks", st, len(want), 2*len(want))
			}
			folders, err := s.Folders(ctx, project, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(folders) != len(want) {
				t.Errorf("Folders: %v, want one per readable file (%d)", folders, len(want))
			}
			versions, err := s.Committed(ctx, project, "", 0, 1, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(versions) != len(want) {
				t.Errorf("Committed: %d versions, want %d", len(versions), len(want))
			}
		})
	}
}

func wordsOf(cs []Chunk) []string {
	var out []string
	for _, c := range cs {
		for _, f := range accessFiles {
			if len(c.Content) >= len(f.word) && c.Content[:len(f.word)] == f.word {
				out = append(out, f.word)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// BenchmarkReadByIDHiddenAgainstMissing reads a chunk the caller may not
// read and one that does not exist, alternately, and reports both p50s:
// a hidden chunk must not be told apart from a missing one by its time.
func BenchmarkReadByIDHiddenAgainstMissing(b *testing.B) {
	const project = "dlsbench"
	s := writeAccessFixture(b, project)
	if err := s.SetGRPC(serverstest.StartShared(b).WeaviateGRPCHost, testservers.LocalWeaviateWriter, nil); err != nil {
		b.Fatal(err)
	}
	ctx := access.WithGrant(context.Background(), access.Grant{Groups: []string{"finance"}})
	hidden := ids.Chunk(ids.FileVersion(ids.File(project, "", "hr/secret.md"), "e", "s"), 0)
	readable := ids.Chunk(ids.FileVersion(ids.File(project, "", "public/open.md"), "e", "s"), 0)
	admin := access.System(context.Background())
	rng := rand.New(rand.NewPCG(1, 2))
	var tHidden, tMissing, tReadable, tAdmin, tAdminQuery []time.Duration
	read := func(ctx context.Context, id string, into *[]time.Duration) {
		start := time.Now()
		c, err := s.GetChunk(ctx, project, id, 1)
		*into = append(*into, time.Since(start))
		if err != nil || (c != nil) != (id == readable) {
			b.Fatalf("read %s: %v %v", id, c, err)
		}
	}
	b.ResetTimer()
	for range b.N {
		missing := ids.Chunk(ids.FileVersion(ids.File(project, "", fmt.Sprintf("nope-%d.md", rng.Int())), "e", "s"), 0)
		read(ctx, hidden, &tHidden)
		read(ctx, missing, &tMissing)
		read(ctx, readable, &tReadable)
		read(admin, readable, &tAdmin)
		start := time.Now()
		if o, err := s.objectByGraphQL(admin, schema.ChunkClass, project, readable, nil); err != nil || o == nil {
			b.Fatalf("query %s: %v %v", readable, o, err)
		}
		tAdminQuery = append(tAdminQuery, time.Since(start))
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(tHidden), "hidden-p50-ms")
	b.ReportMetric(p50(tMissing), "missing-p50-ms")
	b.ReportMetric(p50(tReadable), "readable-p50-ms")
	b.ReportMetric(p50(tAdmin), "admin-p50-ms")
	b.ReportMetric(p50(tAdminQuery), "admin-filtered-query-p50-ms")
}
