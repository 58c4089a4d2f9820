package store

import (
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/servers"
	"github.com/strata-kb/strata/shared/servers/serverstest"
)

func TestFirstPage(t *testing.T) {
	for _, tt := range []struct {
		name                            string
		limit, base, current, committed int
		known                           bool
		want                            int
	}{
		{"no catalog", 20, 60, 0, 0, false, 60},
		{"nothing replaced", 20, 60, 100, 100, true, 60},
		{"a few replaced", 20, 60, 100, 120, true, 60}, // 20*2*1.2 = 48 < base
		{"ten committed per current", 5, 15, 10, 100, true, 90},
		{"capped at the depth", 20, 60, 10, 100, true, 360},
		{"nothing current", 20, 60, 0, 100, true, 60},
	} {
		if got := firstPage(tt.limit, tt.base, searchRounds*tt.base, tt.current, tt.committed, tt.known); got != tt.want {
			t.Errorf("%s: first page %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := nextPage(90, 300, 360); got != 60 {
		t.Errorf("next page after 300 of 360 rows: %d, want 60 (cut at the depth)", got)
	}
}

// countingTransport counts GraphQL requests (every read a Store without
// gRPC makes).
type countingTransport struct {
	next    http.RoundTripper
	queries atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/v1/graphql") {
		c.queries.Add(1)
	}
	return c.next.RoundTrip(r)
}

// TestSearchesSkipReplacedVersions on a real weaviate-server: in a project
// where five of every six committed chunks belong to replaced versions, a
// keyword and a vector search with the catalog find current versions' chunks
// as they do without it (a vector search the very same ones), in fewer
// Weaviate reads: larger first pages, and no chunk rows read for vectors
// of replaced versions.
func TestSearchesSkipReplacedVersions(t *testing.T) {
	ctx := asSystem()
	const project, model = "replacedversions", "replaced-model"
	const files, versions, chunksPer = 8, 6, 3
	wv := weaviateWithVectors(t, project, model)
	name := schema.VectorName(model)
	rng := rand.New(rand.NewPCG(3, 4))
	// "common" is in half the replaced versions' chunks, three times, and
	// once in every current chunk: a keyword search pages past 60 replaced
	// chunks. (Weaviate 1.35.2 takes chunks not yet flushed to disk in the
	// order they were written, dropping the rest once it holds limit hits,
	// weaviate/weaviate PR 11780; here that order is the same.)
	var objs []*models.Object
	log := committedLog{vs: map[string][]Version{}}
	seq, chunkNo := int64(0), 0
	for k := range versions {
		for f := range files {
			seq++
			path := "f" + strconv.Itoa(f) + ".md"
			fileID := ids.File(project, "", path)
			fv := ids.FileVersion(fileID, strconv.Itoa(k), "s")
			v := Version{FileID: fileID, FilePath: path, FileVersionID: fv, Status: pipeline.StatusIndexed, ValidFrom: seq, ChunkCount: chunksPer}
			log.vs[project] = append(log.vs[project], v)
			objs = append(objs, &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(fv), Tenant: project, Properties: map[string]any{
				"file_id": fileID, "file_path": path, "branch": "", "file_version_id": fv, "status": "indexed", "deleted": false, "valid_from": seq}})
			for i := range chunksPer {
				chunkID := ids.Chunk(fv, i)
				n := 1
				if k < versions-1 {
					n = 3 * (chunkNo % 2)
				}
				chunkNo++
				content := strings.Repeat("common ", n) + strings.Repeat("pad ", 20-n)
				vec := make([]float32, 16)
				for j := range vec {
					vec[j] = float32(rng.NormFloat64())
				}
				objs = append(objs,
					&models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(chunkID), Tenant: project, Properties: map[string]any{
						"content": content, "file_id": fileID, "file_version_id": fv, "file_path": path, "branch": "", "index": i, "kind": "text", "valid_from": seq}},
					&models.Object{Class: schema.ChunkVectorClass, ID: strfmt.UUID(ids.ChunkVector(chunkID, model)), Tenant: project,
						Properties: map[string]any{"chunk_id": chunkID, "file_id": fileID, "file_version_id": fv, "file_path": path, "branch": "", "model": model},
						Vectors:    models.Vectors{name: models.Vector(vec)}})
			}
		}
	}
	putObjects(t, wv, objs...)
	cat := newTestCatalog(&log)
	if err := cat.apply(ctx, map[string]int64{project: seq}); err != nil {
		t.Fatal(err)
	}
	if cur, all, _ := cat.chunkShare(project); cur != files*chunksPer || all != files*versions*chunksPer {
		t.Fatalf("catalog: %d current chunks of %d, want %d of %d", cur, all, files*chunksPer, files*versions*chunksPer)
	}
	counted := func() (*Store, *countingTransport) {
		ct := &countingTransport{next: http.DefaultTransport}
		c, err := weaviate.NewClient(weaviate.Config{Host: serverstest.StartShared(t).WeaviateHost, Scheme: "http",
			Headers: map[string]string{"authorization": "Bearer " + servers.LocalWeaviateWriter}, ConnectionClient: &http.Client{Transport: ct}})
		if err != nil {
			t.Fatal(err)
		}
		return New(c), ct
	}
	plain, plainReads := counted()
	withCatalog, catalogReads := counted()
	withCatalog.SetCatalog(cat)
	query := make([]float32, 16)
	for j := range query {
		query[j] = float32(rng.NormFloat64())
	}
	for _, search := range []struct {
		name  string
		limit int
		exact bool
		run   func(s *Store) ([]Chunk, error)
	}{
		{"keyword", 5, false, func(s *Store) ([]Chunk, error) { return s.SearchKeyword(ctx, project, "common", 5, nil, seq) }},
		{"vector", 10, true, func(s *Store) ([]Chunk, error) {
			return s.SearchVector(ctx, project, VectorQuery{Model: model, Vector: query, Limit: 10, At: seq})
		}},
	} {
		p0, c0 := plainReads.queries.Load(), catalogReads.queries.Load()
		want, err := search.run(plain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := search.run(withCatalog)
		if err != nil {
			t.Fatal(err)
		}
		p, c := plainReads.queries.Load()-p0, catalogReads.queries.Load()-c0
		t.Logf("%s search: %d Weaviate reads with the catalog, %d without", search.name, c, p)
		// Vector search here is exact (Weaviate scans a filtered set this
		// small), so both find the same chunks in the same order. Keyword
		// hits are not compared: the current chunks tie, and which of them
		// a page holds depends on where pages are cut.
		if len(got) != search.limit || len(want) != search.limit {
			t.Errorf("%s search found %d chunks with the catalog, %d without it, want %d", search.name, len(got), len(want), search.limit)
		}
		if search.exact && !reflect.DeepEqual(chunkIDs(got), chunkIDs(want)) {
			t.Errorf("%s search with the catalog found %v, without it %v", search.name, chunkIDs(got), chunkIDs(want))
		}
		current := log.vs[project][len(log.vs[project])-files:]
		for _, ch := range got {
			if !slices.ContainsFunc(current, func(v Version) bool { return v.FileVersionID == ch.FileVersionID }) {
				t.Errorf("%s search found chunk %s of a replaced version %s", search.name, ch.ID, ch.FileVersionID)
			}
		}
		if c >= p {
			t.Errorf("%s search: %d Weaviate reads with the catalog, not fewer than the %d without it", search.name, c, p)
		}
	}
}

func chunkIDs(cs []Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
