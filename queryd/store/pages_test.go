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
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

func TestNextPage(t *testing.T) {
	for _, tt := range []struct {
		name                             string
		base, depth, fetched, kept, want int
		page                             int
	}{
		{"first page", 60, 360, 0, 0, 20, 60},
		{"first page beyond the depth", 60, 40, 0, 0, 20, 40},
		{"most kept", 60, 360, 60, 18, 2, 60},    // 2*2*60/18 = 14 < base
		{"a tenth kept", 15, 90, 15, 1, 4, 75},   // 4*2*15 = 120, cut at the depth (90 - 15)
		{"a third kept", 30, 180, 30, 10, 5, 30}, // 5*2*3 = 30
		{"a sixth kept", 30, 180, 30, 5, 5, 60},
		{"none kept", 30, 180, 60, 0, 5, 120},
		{"none kept, at the depth", 30, 180, 150, 0, 5, 30},
	} {
		if got := nextPage(tt.base, tt.depth, tt.fetched, tt.kept, tt.want); got != tt.page {
			t.Errorf("%s: page %d, want %d", tt.name, got, tt.page)
		}
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

// TestSearchesLeaveClosedVersionsOut on a real weaviate-server: two
// projects hold the same files, five of every six committed chunks of
// replaced versions; in one the replaced versions' chunks and vectors are
// closed (valid_to, as the indexer sets it), in the other not (an index
// written before valid_to). Keyword and vector searches find current
// chunks alike in both (a vector search the very same ones), with one
// page in the closed project and more in the open one; as of an earlier
// sequence they find the versions current then.
func TestSearchesLeaveClosedVersionsOut(t *testing.T) {
	ctx := asSystem()
	const closed, open, model = "closedversions", "openversions", "replaced-model"
	const files, versions, chunksPer = 8, 6, 3
	wv := weaviateWithVectors(t, closed, model)
	weaviateWithVectors(t, open, model)
	name := schema.VectorName(model)
	rng := rand.New(rand.NewPCG(3, 4))
	// "common" is in half the replaced versions' chunks, three times, and
	// once in every current chunk: without valid_to a keyword search pages
	// past 60 replaced chunks. (Weaviate 1.35.2 takes chunks not yet
	// flushed to disk in the order they were written, dropping the rest
	// once it holds limit hits, weaviate/weaviate PR 11780; here that order
	// is the same.)
	log := committedLog{vs: map[string][]Version{}}
	var objs []*models.Object
	vectors := map[string][]float32{}
	for _, project := range []string{closed, open} {
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
					key := strconv.Itoa(k) + "/" + strconv.Itoa(f) + "/" + strconv.Itoa(i)
					if vectors[key] == nil {
						vec := make([]float32, 16)
						for j := range vec {
							vec[j] = float32(rng.NormFloat64())
						}
						vectors[key] = vec
					}
					chunk := map[string]any{"content": strings.Repeat("common ", n) + strings.Repeat("pad ", 20-n), "file_id": fileID,
						"file_version_id": fv, "file_path": path, "branch": "", "index": i, "kind": "text", "valid_from": seq}
					vector := map[string]any{"chunk_id": chunkID, "file_id": fileID, "file_version_id": fv, "file_path": path, "branch": "", "model": model}
					if project == closed && k < versions-1 {
						// Replaced by the file's next version, files commits later.
						chunk[schema.ValidToProperty], vector[schema.ValidToProperty] = seq+files, seq+files
					}
					objs = append(objs,
						&models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(chunkID), Tenant: project, Properties: chunk},
						&models.Object{Class: schema.ChunkVectorClass, ID: strfmt.UUID(ids.ChunkVector(chunkID, model)), Tenant: project,
							Properties: vector, Vectors: models.Vectors{name: models.Vector(vectors[key])}})
				}
			}
		}
	}
	putObjects(t, wv, objs...)
	const latest, first = files * versions, files
	cat := newTestCatalog(&log)
	if err := cat.apply(ctx, map[string]int64{closed: latest, open: latest}); err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{next: http.DefaultTransport}
	c, err := weaviate.NewClient(weaviate.Config{Host: serverstest.StartShared(t).WeaviateHost, Scheme: "http",
		Headers: map[string]string{"authorization": "Bearer " + testservers.LocalWeaviateWriter}, ConnectionClient: &http.Client{Transport: ct}})
	if err != nil {
		t.Fatal(err)
	}
	s := New(c)
	s.SetCatalog(cat)
	query := make([]float32, 16)
	for j := range query {
		query[j] = float32(rng.NormFloat64())
	}
	type search struct {
		name  string
		limit int
		run   func(project string, at int64) ([]Chunk, error)
	}
	searches := []search{
		{"keyword", 5, func(project string, at int64) ([]Chunk, error) {
			return s.SearchKeyword(ctx, project, "common", 5, nil, at)
		}},
		{"vector", 10, func(project string, at int64) ([]Chunk, error) {
			return s.SearchVector(ctx, project, VectorQuery{Model: model, Vector: query, Limit: 10, At: at})
		}},
	}
	// The versions visible as of a sequence: the first round at first,
	// the last at latest.
	visibleAt := func(project string, at int64) []Version {
		if at == first {
			return log.vs[project][:files]
		}
		return log.vs[project][len(log.vs[project])-files:]
	}
	for _, sr := range searches {
		for _, at := range []int64{latest, first} {
			found := map[string][]string{}
			reads := map[string]int64{}
			for _, project := range []string{closed, open} {
				before := ct.queries.Load()
				got, err := sr.run(project, at)
				if err != nil {
					t.Fatal(err)
				}
				reads[project] = ct.queries.Load() - before
				if len(got) != sr.limit {
					t.Errorf("%s search of %s as of %d found %d chunks, want %d", sr.name, project, at, len(got), sr.limit)
				}
				for _, ch := range got {
					if !slices.ContainsFunc(visibleAt(project, at), func(v Version) bool { return v.FileVersionID == ch.FileVersionID }) {
						t.Errorf("%s search of %s as of %d found chunk %s of version %s, not visible then", sr.name, project, at, ch.ID, ch.FileVersionID)
					}
					// The same file, version and chunk in both projects: compare by path and index.
					found[project] = append(found[project], ch.FilePath+"#"+strconv.Itoa(ch.Index))
				}
			}
			t.Logf("%s search as of %d: %d Weaviate reads with versions closed, %d without", sr.name, at, reads[closed], reads[open])
			// Vector search here is exact (Weaviate scans a filtered set this
			// small), so both projects give the same chunks in the same
			// order. Keyword hits tie, and which of them a page holds
			// depends on where pages are cut.
			if sr.name == "vector" && !reflect.DeepEqual(found[closed], found[open]) {
				t.Errorf("vector search as of %d: %v with versions closed, %v without", at, found[closed], found[open])
			}
			if at == latest && reads[closed] >= reads[open] {
				t.Errorf("%s search: %d Weaviate reads with versions closed, not fewer than the %d without", sr.name, reads[closed], reads[open])
			}
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
