package store

import (
	"os"
	"reflect"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
	"github.com/strata-kb/strata/shared/wvquery"
)

func TestMain(m *testing.M) {
	code := m.Run()
	serverstest.StopShared()
	os.Exit(code)
}

// weaviateWithTenant returns a writer's client on the package's shared
// weaviate-server, the schema in place and project's tenant created; tests
// that need one skip with -short.
func weaviateWithTenant(t testing.TB, project string) *weaviate.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real weaviate-server")
	}
	st := serverstest.StartShared(t)
	wv, err := schema.NewClient(st.WeaviateHost, "", testservers.LocalWeaviateWriter)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Ensure(asSystem(), wv); err != nil {
		t.Fatal(err)
	}
	if err := schema.EnsureTenant(asSystem(), wv, project); err != nil {
		t.Fatal(err)
	}
	return wv
}

// weaviateWithVectors is weaviateWithTenant with model's vector space and
// project's ChunkVector tenant as well.
func weaviateWithVectors(t testing.TB, project, model string) *weaviate.Client {
	t.Helper()
	wv := weaviateWithTenant(t, project)
	if err := schema.EnsureVectorSpace(asSystem(), wv, model, 1); err != nil {
		t.Fatal(err)
	}
	if err := schema.EnsureTenantIn(asSystem(), wv, project, schema.ChunkVectorClass); err != nil {
		t.Fatal(err)
	}
	return wv
}

// putObjects stores objects in one batch, failing the test on any object's error.
func putObjects(t testing.TB, wv *weaviate.Client, objs ...*models.Object) {
	t.Helper()
	res, err := wv.Batch().ObjectsBatcher().WithObjects(objs...).Do(asSystem())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Result != nil && r.Result.Errors != nil {
			t.Fatalf("store %s: %v", r.ID, r.Result.Errors.Error[0].Message)
		}
	}
}

// TestObjectByIDBothWays: the GraphQL read that stands in for a REST read
// that does not answer gives the same object: properties, id and vector.
func TestObjectByIDBothWays(t *testing.T) {
	ctx := asSystem()
	const project, model = "byid", "probe-model"
	wv := weaviateWithVectors(t, project, model)
	chunkID := ids.Chunk(ids.FileVersion(ids.File(project, "", "a.md"), "e", "s"), 0)
	vec := []float32{0.6, 0.8, 0}
	objs := []*models.Object{
		{Class: schema.ChunkClass, ID: strfmt.UUID(chunkID), Tenant: project, Properties: map[string]any{
			"content": "hello", "file_id": "f", "file_version_id": "v", "file_path": "a.md", "branch": "", "index": 0,
			"start_offset": 0, "end_offset": 5, "token_count": 1, "source_checksum": "sum", "section_id": "", "heading_path": []string{"A"},
			"kind": "text", "valid_from": 3}},
		{Class: schema.ChunkVectorClass, ID: strfmt.UUID(ids.ChunkVector(chunkID, model)), Tenant: project,
			Properties: map[string]any{"chunk_id": chunkID, "model": model, "source_checksum": "sum", "file_id": "f", "file_version_id": "v"},
			Vectors:    models.Vectors{schema.VectorName(model): models.Vector(vec)}},
	}
	if _, err := wv.Batch().ObjectsBatcher().WithObjects(objs...).Do(ctx); err != nil {
		t.Fatal(err)
	}
	s := New(wv)
	for _, c := range []struct {
		class, id string
		vectors   []string
	}{{schema.ChunkClass, chunkID, nil}, {schema.ChunkVectorClass, ids.ChunkVector(chunkID, model), []string{schema.VectorName(model)}}} {
		rest, err := s.objectByREST(ctx, c.class, project, c.id, len(c.vectors) > 0)
		if err != nil || rest == nil {
			t.Fatalf("%s by REST: %v %v", c.class, rest, err)
		}
		gql, err := s.objectByGraphQL(ctx, c.class, project, c.id, c.vectors)
		if err != nil || gql == nil {
			t.Fatalf("%s by GraphQL: %v %v", c.class, gql, err)
		}
		if rest.ID != gql.ID {
			t.Errorf("%s ids %s and %s", c.class, rest.ID, gql.ID)
		}
		rp, gp := rest.Properties.(map[string]any), gql.Properties.(map[string]any)
		for k := range gp {
			if wvquery.Float(rp, k) != wvquery.Float(gp, k) || wvquery.Str(rp, k) != wvquery.Str(gp, k) {
				t.Errorf("%s %s: REST %v, GraphQL %v", c.class, k, rp[k], gp[k])
			}
		}
		if len(c.vectors) > 0 && !reflect.DeepEqual(rest.Vectors[c.vectors[0]], gql.Vectors[c.vectors[0]]) {
			t.Errorf("vectors: REST %v, GraphQL %v", rest.Vectors, gql.Vectors)
		}
		if c.class == schema.ChunkClass {
			if a, b := chunkFromObject(project, rest), chunkFromObject(project, gql); !reflect.DeepEqual(a, b) {
				t.Errorf("chunks differ:\n REST    %+v\n GraphQL %+v", a, b)
			}
		}
	}
	if o, err := s.objectByGraphQL(ctx, schema.ChunkClass, project, ids.Chunk(ids.Project("nope"), 1), nil); err != nil || o != nil {
		t.Fatalf("a missing object: %v %v", o, err)
	}
}
