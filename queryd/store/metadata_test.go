package store

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// metaDoc is one document of the metadata fixture, as the index stores it.
type metaDoc struct {
	path string
	meta metadata.Metadata
}

func metaDate(s string) metadata.Value { return metadata.FromString(s) }
func metaNum(f float64) metadata.Value { return metadata.Value{Kind: metadata.Number, Number: f} }
func metaText(s string) metadata.Value { return metadata.Value{Kind: metadata.String, Text: s} }

var metaDocs = []metaDoc{
	{"a.md", metadata.Metadata{"dept": metaText("Legal"), "year": metaNum(2024), "signed": metaDate("2024-03-01"), "tags": {Kind: metadata.List, List: []string{"x", "Contracts"}}}},
	{"b.md", metadata.Metadata{"dept": metaText("legal"), "year": metaNum(2023), "signed": metaDate("2023-12-31T23:00:00Z")}},
	{"c.md", metadata.Metadata{"dept": metaText("hr"), "year": metaNum(2024.5)}},
	{"d.md", metadata.Metadata{"owner.name": metaText("ada")}},
	{"e.md", nil},
}

// TestMetadataFilterInWeaviate runs every filter form inside Weaviate on
// chunks written as the indexer writes them (tokens and range properties)
// and requires exactly what metadata.Filter.Match says, document by document.
func TestMetadataFilterInWeaviate(t *testing.T) {
	const project = "metafilter"
	wv := weaviateWithTenant(t, project)
	ranges := map[string]metadata.Kind{}
	for _, d := range metaDocs {
		for k, v := range d.meta {
			if v.Kind == metadata.Number || v.Kind == metadata.Date {
				ranges[metadata.RangeProperty(k, v.Kind)] = v.Kind
			}
		}
	}
	addRangeProperties(t, wv, ranges)
	var objs []*models.Object
	for _, d := range metaDocs {
		fileID := ids.File(project, "", d.path)
		fv := ids.FileVersion(fileID, "e", "s")
		props := map[string]any{"content": "zebracorn words " + d.path, schema.ContentTermsProperty: "zebracorn words", "file_id": fileID,
			"file_version_id": fv, "file_path": d.path, "branch": "", "index": 0, "valid_from": 1,
			schema.ReadersProperty: []string{access.Everyone}, metadata.TokensProperty: metadata.Tokens(d.meta)}
		for k, v := range metadata.RangeValues(d.meta) {
			props[k] = v
		}
		objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, 0)), Tenant: project, Properties: props},
			visibleVersion(project, fileID, fv, d.path))
	}
	putObjects(t, wv, objs...)
	overGRPC := New(wv)
	if err := overGRPC.SetGRPC(serverstest.StartShared(t).WeaviateGRPCHost, testservers.LocalWeaviateWriter, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{New(wv), overGRPC} {
		checkMetadataFilters(t, s, project)
		if s.rpc != nil && s.rpc.failures.Load() != 0 {
			t.Errorf("%d filtered reads fell back from gRPC to GraphQL", s.rpc.failures.Load())
		}
	}
}

func checkMetadataFilters(t *testing.T, s *Store, project string) {
	ctx := asSystem()
	for _, raw := range []string{
		`{"dept": "LEGAL"}`,
		`{"dept": {"any": ["hr", "nobody"]}}`,
		`{"tags": "contracts"}`,
		`{"year": 2024}`,
		`{"year": {"gte": 2024}}`,
		`{"year": {"gt": 2023, "lt": 2024.5}}`,
		`{"year": {"lte": 2024}}`,
		`{"signed": {"gte": "2024-01-01"}}`,
		`{"signed": {"lt": "2024-01-01T00:00:00Z"}}`,
		`{"signed": "2024-03-01"}`,
		`{"year": {"exists": true}}`,
		`{"year": {"exists": false}}`,
		`{"owner.name": "ADA"}`,
		`{"dept": "legal", "year": {"lt": 2024}}`,
		`{"dept": {"any": ["hr", "legal"]}, "signed": {"exists": false}}`,
		`{"year": {"any": [2023, 2024.5]}}`,
	} {
		f, err := metadata.ParseFilter(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var want []string
		for _, d := range metaDocs {
			if f.Match(d.meta) {
				want = append(want, d.path)
			}
		}
		where, err := s.MetadataWhere(ctx, f)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		hits, err := s.SearchKeyword(ctx, project, "zebracorn", 20, where, 1)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.FilePath)
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Weaviate found %q, Match says %q", raw, got, want)
		}
		if len(want) == 0 {
			t.Errorf("%s: the fixture matches nothing: the case proves little", raw)
		}
	}
	// A range on a key whose property the index lacks is an error, not a Weaviate failure.
	f, _ := metadata.ParseFilter(json.RawMessage(`{"missing": {"gte": 1}}`))
	if _, err := s.MetadataWhere(ctx, f); err == nil {
		t.Error("a range on a key without a property was accepted")
	}
}

// TestMetadataRangeFollowsTokens: a merge that drops a key leaves its range
// property's old value (a merge cannot unset it); the kind token, rewritten
// whole, keeps the document out of the key's ranges.
func TestMetadataRangeFollowsTokens(t *testing.T) {
	const project = "metastale"
	ctx := asSystem()
	wv := weaviateWithTenant(t, project)
	prop := metadata.RangeProperty("reviewed", metadata.Date)
	addRangeProperties(t, wv, map[string]metadata.Kind{prop: metadata.Date})
	m := metadata.Metadata{"reviewed": metaDate("2025-01-02")}
	fileID := ids.File(project, "", "x.md")
	fv := ids.FileVersion(fileID, "e", "s")
	id := ids.Chunk(fv, 0)
	props := map[string]any{"content": "zebracorn", schema.ContentTermsProperty: "zebracorn", "file_id": fileID, "file_version_id": fv,
		"file_path": "x.md", "branch": "", "index": 0, "valid_from": 1, schema.ReadersProperty: []string{access.Everyone},
		metadata.TokensProperty: metadata.Tokens(m), prop: metadata.RangeValues(m)[prop]}
	putObjects(t, wv, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(id), Tenant: project, Properties: props},
		visibleVersion(project, fileID, fv, "x.md"))
	s := New(wv)
	count := func() int {
		f, _ := metadata.ParseFilter(json.RawMessage(`{"reviewed": {"gte": "2025-01-01"}}`))
		where, err := s.MetadataWhere(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := s.SearchKeyword(ctx, project, "zebracorn", 5, where, 1)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	if n := count(); n != 1 {
		t.Fatalf("before the merge: %d hits, want 1", n)
	}
	err := wv.Data().Updater().WithMerge().WithClassName(schema.ChunkClass).WithID(id).WithTenant(project).
		WithProperties(map[string]any{metadata.TokensProperty: metadata.Tokens(nil)}).Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a removed date key still matches its range")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// visibleVersion is the Version that makes a fixture's chunks visible at 1.
func visibleVersion(project, fileID, fv, path string) *models.Object {
	return &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(fv), Tenant: project, Properties: map[string]any{
		"file_id": fileID, "file_path": path, "branch": "", "file_version_id": fv, "status": pipeline.StatusIndexed,
		"deleted": false, "valid_from": 1, "chunk_count": 1, schema.ReadersProperty: []string{access.Everyone}}}
}

// addRangeProperties adds range properties as the indexer does: to Chunk
// and ChunkVector (queryd uses a range only when both have it).
func addRangeProperties(t *testing.T, wv *weaviate.Client, props map[string]metadata.Kind) {
	t.Helper()
	ctx := asSystem()
	if err := schema.EnsureVectorSpace(ctx, wv, "metadata-test-model", 1); err != nil {
		t.Fatal(err)
	}
	for name, k := range props {
		for _, class := range []string{schema.ChunkClass, schema.ChunkVectorClass} {
			if err := schema.AddRangeProperty(ctx, wv, class, name, k); err != nil {
				t.Fatal(err)
			}
		}
	}
}
