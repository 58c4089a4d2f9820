package main

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/queryd/store/grpcsearch"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// The direct side: for each tool, the Weaviate query (or queries) at the
// heart of its answer, issued by this process with the same client library
// and settings as queryd (schema.NewClient, the read-only key), minus what
// queryd adds around them: MCP and JSON-RPC over HTTP, auth, argument
// checks, the project list and watermark lookups, version visibility checks
// (LatestVersions) and building the answer. Fields, filters and protocol
// (gRPC for filtered and keyword queries) copy queryd/store's.

var chunkFields = []graphql.Field{
	{Name: "content"}, {Name: "file_id"}, {Name: "file_version_id"}, {Name: "file_path"}, {Name: "branch"},
	{Name: "index"}, {Name: "start_offset"}, {Name: "end_offset"}, {Name: "token_count"}, {Name: "source_checksum"},
	{Name: "created_at"}, {Name: "section_id"}, {Name: "heading_path"}, {Name: "embedding_status"}, {Name: "embedding_model"},
	{Name: "_additional", Fields: []graphql.Field{{Name: "id"}, {Name: "score"}}},
}

var chunkDetailFields = append(append([]graphql.Field(nil), chunkFields...),
	graphql.Field{Name: "kind"}, graphql.Field{Name: "page_start"}, graphql.Field{Name: "page_end"},
	graphql.Field{Name: "image_ref"}, graphql.Field{Name: "image_mime"}, graphql.Field{Name: "valid_from"})

var sectionFields = []graphql.Field{
	{Name: "file_id"}, {Name: "file_version_id"}, {Name: "file_path"}, {Name: "branch"}, {Name: "ordinal"},
	{Name: "title"}, {Name: "heading_path"}, {Name: "level"}, {Name: "start_offset"}, {Name: "end_offset"},
	{Name: "token_count"}, {Name: "chunk_count"}, {Name: "page_start"}, {Name: "page_end"}, {Name: "valid_from"},
	{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}},
}

var documentDetailFields = []graphql.Field{
	{Name: "file_id"}, {Name: "file_path"}, {Name: "name"}, {Name: "folder"}, {Name: "branch"}, {Name: "file_version_id"},
	{Name: "title"}, {Name: "status"}, {Name: "error"}, {Name: "deleted"}, {Name: "chunk_count"},
	{Name: "format"}, {Name: "updated_at"}, {Name: "ingested_at"},
	{Name: "section_count"}, {Name: "token_count"}, {Name: "pages"}, {Name: "language"},
}

// direct issues the tools' core Weaviate queries.
type direct struct {
	wv *weaviate.Client
	// rpc runs the filtered and keyword queries over gRPC, as queryd does
	// (store.SetGRPC); nearVector and by-id reads stay on GraphQL and REST
	// on both sides.
	rpc        *grpcsearch.Client
	at         map[string]int64 // each project's watermark, read once after loading
	vectorName string
	// readers, when set, restrict every gRPC query to objects whose
	// readers contain one of them, as queryd does for a key with groups
	// (the access mode's filtered side; see filteredBy).
	readers []string
}

// scoped adds d's readers filter to where.
func (d *direct) scoped(where *filters.WhereBuilder) *filters.WhereBuilder {
	if d.readers == nil {
		return where
	}
	readers := filters.Where().WithPath([]string{schema.ReadersProperty}).WithOperator(filters.ContainsAny).WithValueText(d.readers...)
	if where == nil {
		return readers
	}
	return wvquery.And(where, readers)
}

func eq(path, v string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.Equal).WithValueText(v)
}

func intOp(path string, op filters.WhereOperator, v int64) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(op).WithValueInt(v)
}

var byIndex = []graphql.Sort{{Path: []string{"index"}, Order: graphql.Asc}}

// search runs q over gRPC and returns its row count.
func (d *direct) search(ctx context.Context, q grpcsearch.Query) (int, error) {
	q.Where = d.scoped(q.Where)
	rows, missing, err := d.rpc.Get(ctx, q)
	if missing {
		return 0, fmt.Errorf("search %s: no tenant %s", q.Class, q.Tenant)
	}
	return len(rows), err
}

// get runs a Get query and returns its rows.
func (d *direct) get(ctx context.Context, class, project string, fields []graphql.Field, build func(*graphql.GetBuilder) *graphql.GetBuilder) ([]map[string]any, error) {
	g := d.wv.GraphQL().Get().WithClassName(class).WithTenant(project).WithFields(fields...)
	resp, err := build(g).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", class, err)
	}
	if len(resp.Errors) > 0 {
		return nil, fmt.Errorf("query %s: %s", class, wvquery.Errors(resp.Errors))
	}
	return wvquery.Rows(resp, class), nil
}

// keyword is search_keyword's BM25 query over main as of the watermark
// (store.SearchKeyword's first round: 3 x top_k rows), as queryd sends it:
// the query's stemmed terms over content_terms and heading_terms^1
// (store.MatchStemmed), and the same question asked exactly when that finds
// nothing (the second round trip queryd makes then).
func (d *direct) keyword(ctx context.Context, project, query string, limit int) (int, error) {
	return d.keywordWhere(ctx, project, query, limit, nil)
}

// vector is store.SearchVector's first round: nearVector on ChunkVector's
// named vector (main only), then the Chunk rows of the ids found.
func (d *direct) vector(ctx context.Context, project string, vec []float32, limit int, minSimilarity float64) (int, error) {
	return d.vectorN(ctx, project, vec, max(3*limit, 30), minSimilarity)
}

// vectorN is vector with fetch nearest neighbours asked for.
func (d *direct) vectorN(ctx context.Context, project string, vec []float32, fetch int, minSimilarity float64) (int, error) {
	chunkIDs, err := d.neighbours(ctx, project, vec, fetch, minSimilarity)
	if err != nil || len(chunkIDs) == 0 {
		return 0, err
	}
	byID := filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(chunkIDs...)
	return d.search(ctx, grpcsearch.Query{Class: schema.ChunkClass, Tenant: project, Fields: chunkFields,
		Where: wvquery.And(byID, intOp("valid_from", filters.LessThanEqual, d.at[project])), Limit: len(chunkIDs)})
}

// neighbours is the vector query's first half: nearVector on ChunkVector's
// named vector (main only), the chunk ids of the fetch nearest.
func (d *direct) neighbours(ctx context.Context, project string, vec []float32, fetch int, minSimilarity float64) ([]string, error) {
	near := &grpcsearch.NearVector{Vector: vec, Target: d.vectorName}
	if minSimilarity > 0 {
		dist := 1 - minSimilarity
		near.Distance = &dist
	}
	return d.nearestTo(ctx, project, near, 0, fetch, nil)
}

// nearestTo is the chunk ids of the fetch ChunkVectors nearest to near
// from offset on (main only), within where (nil: no more).
func (d *direct) nearestTo(ctx context.Context, project string, near *grpcsearch.NearVector, offset, fetch int, where *filters.WhereBuilder) ([]string, error) {
	scope := filters.Where().WithPath([]string{"branch"}).WithOperator(filters.ContainsAny).WithValueText("")
	if where != nil {
		scope = wvquery.And(scope, where)
	}
	rows, missing, err := d.rpc.Get(ctx, grpcsearch.Query{Class: schema.ChunkVectorClass, Tenant: project, NearVector: near, Where: d.scoped(scope),
		Fields: []graphql.Field{{Name: "chunk_id"}, {Name: "_additional", Fields: []graphql.Field{{Name: "distance"}}}}, Offset: offset, Limit: fetch})
	if err != nil || missing {
		return nil, err
	}
	chunkIDs := make([]string, 0, len(rows))
	for _, r := range rows {
		if id, ok := r["chunk_id"].(string); ok {
			chunkIDs = append(chunkIDs, id)
		}
	}
	return chunkIDs, nil
}

// chunkByQuery reads a chunk by id with a gRPC Get where id = id (limit 1)
// instead of the REST GET, as queryd reads an object by id for a key that
// is not an admin (d's readers filter then added).
func (d *direct) chunkByQuery(ctx context.Context, project, id string) (int, error) {
	return d.search(ctx, grpcsearch.Query{Class: schema.ChunkClass, Tenant: project, Fields: chunkDetailFields,
		Where: eq("id", id), Limit: 1})
}

// hybrid is query_documents' pair: the keyword and the vector query.
func (d *direct) hybrid(ctx context.Context, project, query string, vec []float32, limit int) (int, error) {
	k, err := d.keyword(ctx, project, query, limit)
	if err != nil {
		return 0, err
	}
	v, err := d.vector(ctx, project, vec, limit, 0)
	return k + v, err
}

// object gets one object by id (the REST objects endpoint).
func (d *direct) object(ctx context.Context, class, project, id string) (int, error) {
	objs, err := d.wv.Data().ObjectsGetter().WithClassName(class).WithID(id).WithTenant(project).Do(ctx)
	if err != nil {
		return 0, fmt.Errorf("get %s %s: %w", class, id, err)
	}
	return len(objs), nil
}

// chunk is get_file_chunk's read: the Chunk object by id.
func (d *direct) chunk(ctx context.Context, project, id string) (int, error) {
	return d.object(ctx, schema.ChunkClass, project, id)
}

// chunkVector is get_file_chunk_embedding's read: the chunk's ChunkVector
// object of the model (without the vector, as the tool's default).
func (d *direct) chunkVector(ctx context.Context, project, chunkID, model string) (int, error) {
	return d.object(ctx, schema.ChunkVectorClass, project, ids.ChunkVector(chunkID, model))
}

// listChunks is store.ListChunks: a version's first chunks by index, a page
// named by its chunks' ids.
func (d *direct) listChunks(ctx context.Context, project, fileVersionID string, limit int) (int, error) {
	return d.search(ctx, grpcsearch.Query{Class: schema.ChunkClass, Tenant: project, Fields: chunkFields,
		Where: wvquery.And(eq("file_version_id", fileVersionID), chunkIDsIn(fileVersionID, 0, limit-1)), Sort: byIndex, Limit: limit})
}

// chunkIDsIn is store's: chunks from index from to to by id.
func chunkIDsIn(fileVersionID string, from, to int) *filters.WhereBuilder {
	chunkIDs := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		chunkIDs = append(chunkIDs, ids.Chunk(fileVersionID, i))
	}
	return filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(chunkIDs...)
}

// chunkRange is store.ChunkDetails: a version's chunks in a section and/or
// an index range, by index.
func (d *direct) chunkRange(ctx context.Context, project, fileVersionID, sectionID string, from, to int) (int, error) {
	ws := []*filters.WhereBuilder{eq("file_version_id", fileVersionID), intOp("valid_from", filters.LessThanEqual, d.at[project])}
	if sectionID != "" {
		ws = append(ws, eq("section_id", sectionID))
	}
	switch {
	case to >= from && to-from < 256: // as store.ChunkDetails: a window by its ids
		ws = append(ws, chunkIDsIn(fileVersionID, from, to))
	default:
		if from > 0 {
			ws = append(ws, intOp("index", filters.GreaterThanEqual, int64(from)))
		}
		if to >= 0 {
			ws = append(ws, intOp("index", filters.LessThanEqual, int64(to)))
		}
	}
	limit := 201
	if to >= 0 {
		limit = to - from + 1
	}
	return d.search(ctx, grpcsearch.Query{Class: schema.ChunkClass, Tenant: project, Fields: chunkDetailFields,
		Where: wvquery.And(ws...), Sort: byIndex, Limit: limit})
}

// window reads chunks from index from to to of a version, by a range on
// index (as Strata did before) or by the chunks' ids (as store.ChunkDetails
// does now), so the two can be measured side by side.
func (d *direct) window(ctx context.Context, project, fileVersionID string, from, to int, byIDs bool) (int, error) {
	ws := []*filters.WhereBuilder{eq("file_version_id", fileVersionID), intOp("valid_from", filters.LessThanEqual, d.at[project])}
	if byIDs {
		ws = append(ws, chunkIDsIn(fileVersionID, from, to))
	} else {
		ws = append(ws, intOp("index", filters.GreaterThanEqual, int64(from)), intOp("index", filters.LessThanEqual, int64(to)))
	}
	return d.search(ctx, grpcsearch.Query{Class: schema.ChunkClass, Tenant: project, Fields: chunkDetailFields,
		Where: wvquery.And(ws...), Sort: byIndex, Limit: to - from + 1})
}

// sections is store.Sections: a version's table of contents.
func (d *direct) sections(ctx context.Context, project, fileVersionID string) (int, error) {
	return d.search(ctx, grpcsearch.Query{Class: schema.SectionClass, Tenant: project, Fields: sectionFields,
		Where: wvquery.And(eq("file_version_id", fileVersionID), intOp("valid_from", filters.LessThanEqual, d.at[project])),
		Sort:  []graphql.Sort{{Path: []string{"ordinal"}, Order: graphql.Asc}}, Limit: 2001})
}

// document is store.DocumentByID: a file's current state.
func (d *direct) document(ctx context.Context, project, fileID string) (int, error) {
	rows, err := d.get(ctx, schema.DocumentClass, project, documentDetailFields, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithWhere(eq("file_id", fileID)).WithLimit(1)
	})
	return len(rows), err
}

// flatSearchConcurrency is Weaviate's HNSW_FLAT_SEARCH_CONCURRENCY in the
// run: -weaviate-env's, else the stack's own (one per CPU).
func flatSearchConcurrency(env []string) string {
	n := strconv.Itoa(runtime.NumCPU())
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HNSW_FLAT_SEARCH_CONCURRENCY="); ok {
			n = v
		}
	}
	return n
}
