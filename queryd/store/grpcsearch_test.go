package store

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
	"github.com/strata-kb/strata/shared/wvquery"
)

// grpcStore is a Store whose filtered reads go over the shared
// weaviate-server's gRPC port.
func grpcStore(t testing.TB, wv *weaviate.Client) *Store {
	t.Helper()
	s := New(wv)
	if err := s.SetGRPC(serverstest.StartShared(t).WeaviateGRPCHost, testservers.LocalWeaviateWriter, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// noFallbacks fails the test when a read of s fell back to GraphQL: gRPC did
// not answer it.
func noFallbacks(t *testing.T, s *Store) {
	t.Helper()
	if n := s.GRPCFailures(); n != 0 {
		t.Fatalf("%d reads fell back to GraphQL: gRPC did not answer them", n)
	}
}

// TestGRPCMatchesGraphQL: every kind of chunk query Strata makes reads the
// same rows, field for field, over gRPC as over GraphQL: texts, integers,
// text lists (empty too), missing fields, id lists, ranges, OR, sorting,
// offsets, a view that hides a later commit, and an unknown project.
func TestGRPCMatchesGraphQL(t *testing.T) {
	ctx := asSystem()
	const project = "grpcparity"
	wv := weaviateWithTenant(t, project)
	fileID := ids.File(project, "", "g.md")
	fv, other := ids.FileVersion(fileID, "e1", "s1"), ids.FileVersion(fileID, "e2", "s2")
	secA, secB := ids.Section(fv, 0), ids.Section(fv, 1)
	var objs []*models.Object
	for i := range 12 {
		sec := secA
		if i >= 6 {
			sec = secB
		}
		props := map[string]any{
			"content": "chunk text ünïcode ✓", "file_id": fileID, "file_version_id": fv, "file_path": "g.md", "branch": "", "index": i,
			"start_offset": i * 10, "end_offset": i*10 + 9, "token_count": 3, "source_checksum": "sum", "section_id": sec,
			"heading_path": []string{"Guide", "Part " + string(rune('A'+i%3))}, "kind": "text", "valid_from": 3 + i/10*6,
			"created_at": "2026-11-25T10:00:00Z",
		}
		switch i {
		case 0:
			props["section_title"], props["section_heading_path"], props["section_ordinal"] = "A", []string{"Guide"}, 0
			props["section_token_count"], props["section_chunk_count"] = 18, 6
			props["page_start"], props["page_end"] = 1, 2
		case 1:
			props["heading_path"] = []string{}
		case 2:
			delete(props, "heading_path")
			props["kind"], props["image_ref"], props["image_mime"] = "image", "assets/a.png", "image/png"
		}
		objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, i)), Tenant: project, Properties: props},
			&models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(other, i)), Tenant: project, Properties: map[string]any{
				"content": "other", "file_id": fileID, "file_version_id": other, "file_path": "g.md", "branch": "", "index": i,
				"section_id": ids.Section(other, 0), "kind": "text", "valid_from": 3}})
	}
	putObjects(t, wv, objs...)
	plain, fast := New(wv), grpcStore(t, wv)
	queries := []ChunkQuery{
		{FileVersionID: fv, To: -1, Limit: 100, At: 3},
		{FileVersionID: fv, To: -1, Limit: 100, At: 9},
		{FileVersionID: fv, From: 2, To: 4, Limit: 3, At: 3},
		{FileVersionID: fv, From: 9, To: 13, Limit: 5, At: 9},
		{FileVersionID: fv, From: 0, To: 500, Limit: 20, At: 9},
		{FileVersionID: fv, From: 3, To: 4, AlsoSectionID: secB, Limit: 20, At: 9},
		{FileVersionID: fv, SectionID: secA, To: -1, Limit: 201, At: 3},
		{SectionID: secB, To: -1, Limit: 201, At: 9},
		{FileVersionID: fv, To: -1, Offset: 4, Limit: 3, At: 9},
		{FileVersionID: other, To: -1, Limit: 100, At: 3},
	}
	for _, q := range queries {
		want, err := plain.ChunkDetails(ctx, project, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fast.ChunkDetails(ctx, project, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%+v: no rows to compare", q)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v:\n gRPC    %+v\n GraphQL %+v", q, got, want)
		}
	}
	// The raw rows too, with a BM25-free score field asked for.
	fields := append(append([]graphql.Field(nil), chunkDetailFields...), graphql.Field{Name: "section_title"})
	q := getQuery{where: chunkQueryWhere(ChunkQuery{FileVersionID: fv, To: -1, At: 9}), sort: []graphql.Sort{{Path: []string{"index"}, Order: graphql.Desc}}, limit: 5}
	want, err := plain.find(ctx, schema.ChunkClass, project, fields, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fast.find(ctx, schema.ChunkClass, project, fields, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || wvquery.Int(got[0], "index") != 11 {
		t.Fatalf("descending: %v", got)
	}
	for i := range want {
		for k, v := range want[i] {
			if k == "_additional" {
				continue
			}
			if g := got[i][k]; v != nil && !reflect.DeepEqual(g, v) {
				t.Errorf("row %d %s: gRPC %#v, GraphQL %#v", i, k, g, v)
			}
		}
	}
	// A project without an index yet: no rows, no error.
	rows, err := fast.ChunkDetails(ctx, "grpc-no-such-project", ChunkQuery{FileVersionID: fv, To: -1, Limit: 10, At: 9})
	if err != nil || len(rows) != 0 {
		t.Fatalf("unknown project: %v %v", rows, err)
	}
	noFallbacks(t, fast)
}

// TestGRPCFallsBackToGraphQL: with the gRPC port unreachable, reads are
// answered over GraphQL, and gRPC is not tried again at once.
func TestGRPCFallsBackToGraphQL(t *testing.T) {
	ctx := asSystem()
	const project = "grpcfallback"
	wv, fv := oneChunkIndex(t, project)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	s := New(wv)
	if err := s.SetGRPC(dead, testservers.LocalWeaviateWriter, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.ChunkDetails(ctx, project, ChunkQuery{FileVersionID: fv, To: -1, Limit: 10, At: 1})
	if err != nil || len(rows) != 1 || rows[0].ID != ids.Chunk(fv, 0) {
		t.Fatalf("fallback read: %+v %v", rows, err)
	}
	if s.GRPCFailures() != 1 {
		t.Fatalf("gRPC failures %d, want 1", s.GRPCFailures())
	}
	// Later reads skip gRPC for a while instead of failing on it again.
	for range 3 {
		if rows, err := s.ChunkDetails(ctx, project, ChunkQuery{FileVersionID: fv, To: -1, Limit: 10, At: 1}); err != nil || len(rows) != 1 {
			t.Fatalf("read after the failure: %+v %v", rows, err)
		}
	}
	if s.GRPCFailures() != 1 {
		t.Fatalf("gRPC failures %d after more reads, want still 1", s.GRPCFailures())
	}
}

// TestGRPCMatchesGraphQLSearches: keyword search (stemmed and exact), a
// version's sections and chunk pages, and chunks by id read the same over
// gRPC as over GraphQL, scores included.
func TestGRPCMatchesGraphQLSearches(t *testing.T) {
	ctx := asSystem()
	const project = "grpcsearches"
	wv := weaviateWithTenant(t, project)
	var objs []*models.Object
	var chunkIDs []string
	words := []string{"kubernetes deployment rollout", "database migration rollback", "rollout of the deployment plan",
		"postgres database tuning", "deployment checklist and rollout"}
	for f := range 3 {
		path := "doc" + string(rune('a'+f)) + ".md"
		fileID := ids.File(project, "", path)
		fv := ids.FileVersion(fileID, "e", "s")
		objs = append(objs, &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(fv), Tenant: project, Properties: map[string]any{
			"file_id": fileID, "file_path": path, "branch": "", "file_version_id": fv, "status": "indexed", "deleted": false, "valid_from": 2}})
		for sec := range 3 {
			objs = append(objs, &models.Object{Class: schema.SectionClass, ID: strfmt.UUID(ids.Section(fv, sec)), Tenant: project, Properties: map[string]any{
				"file_id": fileID, "file_version_id": fv, "file_path": path, "branch": "", "ordinal": sec, "title": "Part",
				"heading_path": []string{"Doc", "Part"}, "level": 2, "token_count": 10 * sec, "chunk_count": 2, "valid_from": 2}})
		}
		for i := range 6 {
			text := words[(f+i)%len(words)]
			id := ids.Chunk(fv, i)
			chunkIDs = append(chunkIDs, id)
			objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(id), Tenant: project, Properties: map[string]any{
				"content": text, schema.ContentTermsProperty: text, schema.HeadingTermsProperty: "guide " + path,
				"file_id": fileID, "file_version_id": fv, "file_path": path, "branch": "", "index": i, "section_id": ids.Section(fv, i/2),
				"heading_path": []string{"Doc"}, "kind": "text", "valid_from": 2, "section_token_count": 10 * (i / 2), "section_chunk_count": 2}})
		}
	}
	// A chunk closed at 2 (valid_to) whose version is otherwise visible:
	// only the searches' filter inside Weaviate leaves it out.
	closedFile := ids.File(project, "", "closed.md")
	closedVersion := ids.FileVersion(closedFile, "e", "s")
	objs = append(objs, &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(closedVersion), Tenant: project, Properties: map[string]any{
		"file_id": closedFile, "file_path": "closed.md", "branch": "", "file_version_id": closedVersion, "status": "indexed", "deleted": false, "valid_from": 1}},
		&models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(closedVersion, 0)), Tenant: project, Properties: map[string]any{
			"content": "database database database", schema.ContentTermsProperty: "databas databas databas", "file_id": closedFile,
			"file_version_id": closedVersion, "file_path": "closed.md", "branch": "", "index": 0, "kind": "text", "valid_from": 1, schema.ValidToProperty: 2}})
	putObjects(t, wv, objs...)
	plain, fast := New(wv), grpcStore(t, wv)
	same := func(what string, got, want any, gotErr, wantErr error) {
		t.Helper()
		if gotErr != nil || wantErr != nil {
			t.Fatalf("%s: gRPC %v, GraphQL %v", what, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n gRPC    %+v\n GraphQL %+v", what, got, want)
		}
	}
	for _, m := range []Match{MatchStemmed, MatchExact} {
		for _, q := range []string{"deployment rollout", "database", "nothing matches this"} {
			want, errW := plain.SearchKeywordMatching(ctx, project, q, m, 5, nil, "", 2)
			got, errG := fast.SearchKeywordMatching(ctx, project, q, m, 5, nil, "", 2)
			same(m.String()+" "+q, got, want, errG, errW)
			if q == "database" && len(want) == 0 {
				t.Fatalf("%s %q found nothing", m, q)
			}
			for _, c := range got {
				if c.FileID == closedFile {
					t.Fatalf("%s %q found the chunk closed at 2 as of 2", m, q)
				}
			}
			// Hits carry their section's totals (read_around's chunk places).
			for _, c := range want {
				if c.SectionChunks != 2 || c.SectionTokens != 10*(c.Index/2) {
					t.Fatalf("%s %q: hit %d carries section totals %d tokens, %d chunks", m, q, c.Index, c.SectionTokens, c.SectionChunks)
				}
			}
		}
	}
	fv := ids.FileVersion(ids.File(project, "", "docb.md"), "e", "s")
	wantSecs, errW := plain.Sections(ctx, project, fv, 2, 1, 5)
	gotSecs, errG := fast.Sections(ctx, project, fv, 2, 1, 5)
	same("sections", gotSecs, wantSecs, errG, errW)
	if len(wantSecs) != 2 {
		t.Fatalf("sections from 1: %d", len(wantSecs))
	}
	for _, page := range [][2]int{{0, 4}, {2, 3}, {0, 2000}} {
		want, errW := plain.ListChunks(ctx, project, fv, page[0], page[1])
		got, errG := fast.ListChunks(ctx, project, fv, page[0], page[1])
		same("list chunks", got, want, errG, errW)
	}
	wantByID, errW := plain.visibleChunks(ctx, project, chunkIDs[3:9], "", 2, nil)
	gotByID, errG := fast.visibleChunks(ctx, project, chunkIDs[3:9], "", 2, nil)
	same("chunks by id", gotByID, wantByID, errG, errW)
	if len(wantByID) != 6 {
		t.Fatalf("chunks by id: %d", len(wantByID))
	}
	noFallbacks(t, fast)
}

// TestGRPCHangingNodeFallsBack: a gRPC node that accepts connections and
// never answers (a node cut off, not refused) costs one read
// grpcAttemptTimeout, then GraphQL answers it.
func TestGRPCHangingNodeFallsBack(t *testing.T) {
	ctx := asSystem()
	const project = "grpchanging"
	wv, fv := oneChunkIndex(t, project)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	s := New(wv)
	if err := s.SetGRPC(ln.Addr().String(), "", nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Without the attempt's own deadline the read would wait out the caller's.
	read, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rows, err := s.ChunkDetails(read, project, ChunkQuery{FileVersionID: fv, To: -1, Limit: 10, At: 1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("read past a hanging node: %+v %v", rows, err)
	}
	if s.GRPCFailures() != 1 {
		t.Fatalf("gRPC failures %d, want 1", s.GRPCFailures())
	}
}

// TestGRPCMatchesGraphQLVectorSearch: a vector search (nearVector on the
// model's named vector, with and without a distance bound) finds the same
// chunks with the same scores over gRPC as over GraphQL.
func TestGRPCMatchesGraphQLVectorSearch(t *testing.T) {
	ctx := asSystem()
	const project, model = "grpcvectors", "grpc-parity-model"
	wv := weaviateWithVectors(t, project, model)
	name := schema.VectorName(model)
	rng := rand.New(rand.NewPCG(1, 2))
	vector := func() []float32 {
		v := make([]float32, 16)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	var objs []*models.Object
	for f := range 4 {
		path := "v" + string(rune('a'+f)) + ".md"
		fileID := ids.File(project, "", path)
		fv := ids.FileVersion(fileID, "e", "s")
		objs = append(objs, &models.Object{Class: schema.VersionClass, ID: strfmt.UUID(fv), Tenant: project, Properties: map[string]any{
			"file_id": fileID, "file_path": path, "branch": "", "file_version_id": fv, "status": "indexed", "deleted": false, "valid_from": 2}})
		for i := range 10 {
			chunkID := ids.Chunk(fv, i)
			objs = append(objs,
				&models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(chunkID), Tenant: project, Properties: map[string]any{
					"content": "c", "file_id": fileID, "file_version_id": fv, "file_path": path, "branch": "", "index": i, "kind": "text", "valid_from": 2}},
				&models.Object{Class: schema.ChunkVectorClass, ID: strfmt.UUID(ids.ChunkVector(chunkID, model)), Tenant: project,
					Properties: map[string]any{"chunk_id": chunkID, "file_id": fileID, "file_version_id": fv, "file_path": path, "branch": "", "model": model},
					Vectors:    models.Vectors{name: models.Vector(vector())}})
		}
	}
	putObjects(t, wv, objs...)
	plain, fast := New(wv), grpcStore(t, wv)
	for _, q := range []VectorQuery{
		{Model: model, Vector: vector(), Limit: 7, At: 2},
		{Model: model, Vector: vector(), Limit: 25, At: 2},
		{Model: model, Vector: vector(), Limit: 10, At: 2, MinSimilarity: 0.2},
	} {
		want, errW := plain.SearchVector(ctx, project, q)
		got, errG := fast.SearchVector(ctx, project, q)
		if errW != nil || errG != nil {
			t.Fatalf("GraphQL %v, gRPC %v", errW, errG)
		}
		if len(want) == 0 {
			t.Fatalf("%+v: nothing found", q)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d, similarity %.1f:\n gRPC    %+v\n GraphQL %+v", q.Limit, q.MinSimilarity, got, want)
		}
	}
	noFallbacks(t, fast)
}

// oneChunkIndex stores one chunk, index 0 of the returned version, visible from 1.
func oneChunkIndex(t *testing.T, project string) (*weaviate.Client, string) {
	t.Helper()
	wv := weaviateWithTenant(t, project)
	fv := ids.FileVersion(ids.File(project, "", "f.md"), "e", "s")
	putObjects(t, wv, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, 0)), Tenant: project, Properties: map[string]any{
		"content": "x", "file_version_id": fv, "index": 0, "valid_from": 1}})
	return wv, fv
}

// TestGRPCLargeReply: a page of large chunks (over gRPC's 4 MB default) is
// read over gRPC, not refused and asked again over GraphQL.
func TestGRPCLargeReply(t *testing.T) {
	ctx := asSystem()
	const project = "grpclarge"
	wv := weaviateWithTenant(t, project)
	fv := ids.FileVersion(ids.File(project, "", "big.md"), "e", "s")
	content := strings.Repeat("large chunk text ", 320) // ~5.4 KB
	var objs []*models.Object
	for i := range 1000 {
		objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, i)), Tenant: project, Properties: map[string]any{
			"content": content, "file_version_id": fv, "file_path": "big.md", "branch": "", "index": i, "valid_from": 1}})
	}
	for start := 0; start < len(objs); start += 200 {
		putObjects(t, wv, objs[start:start+200]...)
	}
	s := grpcStore(t, wv)
	rows, err := s.ListChunks(ctx, project, fv, 0, 1000)
	if err != nil || len(rows) != 1000 {
		t.Fatalf("%d chunks, %v", len(rows), err)
	}
	noFallbacks(t, s)
}

// TestGRPCUnsupportedQueryKeepsGRPC: a query gRPC cannot express is asked
// over GraphQL without turning gRPC off for the reads after it.
func TestGRPCUnsupportedQueryKeepsGRPC(t *testing.T) {
	ctx := asSystem()
	const project = "grpcunsupported"
	wv, fv := oneChunkIndex(t, project)
	s := grpcStore(t, wv)
	// ContainsNone (Weaviate >= 1.33): GraphQL has it, this package's gRPC form does not.
	odd := filters.Where().WithPath([]string{"file_path"}).WithOperator(filters.WhereOperator("ContainsNone")).WithValueText("elsewhere.md", "other.md")
	rows, err := s.find(ctx, schema.ChunkClass, project, chunkFields, getQuery{where: odd, limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("unsupported query: %v %v", rows, err)
	}
	if s.GRPCFailures() != 1 {
		t.Fatalf("gRPC failures %d, want 1", s.GRPCFailures())
	}
	if _, err := s.ChunkDetails(ctx, project, ChunkQuery{FileVersionID: fv, To: -1, Limit: 10, At: 1}); err != nil {
		t.Fatal(err)
	}
	if s.GRPCFailures() != 1 || s.rpc.downUntil.Load() != 0 {
		t.Fatalf("gRPC turned off after an unsupported query: failures %d", s.GRPCFailures())
	}
}
