package store

import (
	"context"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/queryd/store/grpcsearch"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// VectorQuery is a nearest-neighbour search over one model's vectors, read
// as of a view (branch over main, sequence At) and within Where (a filter on
// Chunk properties; nil = everything).
type VectorQuery struct {
	Model         string
	Vector        []float32
	Branch        string
	At            int64
	Limit         int
	MinSimilarity float64 // cosine similarity in [-1, 1]; 0 keeps all
	// Where filters the chunks found (Chunk properties), after the nearest
	// vectors are found: a narrow Where can leave fewer than Limit.
	Where *Where
	// VectorWhere filters inside the nearest-vector search itself, on
	// properties chunk vectors carry too (the document metadata), so the
	// Limit nearest are all matching ones.
	VectorWhere *Where
}

// ChunkEmbedding is a chunk's vector of one model.
type ChunkEmbedding struct {
	ID             string
	ChunkID        string
	Model          string
	SourceChecksum string
	Vector         []float32
}

// hasVectors reports whether any vectors of model were ever written.
func (s *Store) hasVectors(ctx context.Context, model string) (bool, error) {
	if s.catalog.hasMarks(model) {
		return true, nil // a mark is written after its vectors: no schema read (those wait on Weaviate's Raft leader)
	}
	return s.facts.check("vectors:"+model, func() (bool, error) { return schema.HasVectorSpace(ctx, s.wv, model) })
}

// SearchVector returns the chunks visible in the view nearest to q.Vector
// among q.Model's vectors, best first, with Score = cosine similarity. A
// chunk without a vector of this model (status missing or stale) is not
// found: models never mix. Chunks of replaced versions are dropped, and
// further candidates fetched, as for keyword search.
func (s *Store) SearchVector(ctx context.Context, project string, q VectorQuery) ([]Chunk, error) {
	if ok, err := s.hasVectors(ctx, q.Model); err != nil || !ok {
		return nil, err
	}
	name := schema.VectorName(q.Model)
	branches := []string{""}
	if q.Branch != "" {
		branches = append(branches, q.Branch)
	}
	scope := filters.Where().WithPath([]string{"branch"}).WithOperator(filters.ContainsAny).WithValueText(branches...)
	if q.VectorWhere != nil {
		scope = wvquery.And(scope, q.VectorWhere)
	}
	scope, err := s.withoutReplaced(ctx, schema.ChunkVectorClass, scope, q.At)
	if err != nil {
		return nil, err
	}
	var out []Chunk
	// Replaced versions not closed are dropped below; further pages fetch
	// more (pages.go sizes them).
	base := max(q.Limit*3/2, 30)
	depth := searchRounds * base
	for offset := 0; len(out) < q.Limit && offset < depth; {
		n := nextPage(base, depth, offset, len(out), q.Limit-len(out))
		near := &grpcsearch.NearVector{Vector: q.Vector, Target: name}
		if q.MinSimilarity > 0 {
			d := 1 - q.MinSimilarity // Weaviate compares in float32 either way
			near.Distance = &d
		}
		rows, err := s.find(ctx, schema.ChunkVectorClass, project, vectorHitFields, getQuery{near: near, where: scope, limit: n, offset: offset})
		if err != nil {
			return nil, err
		}
		offset += n
		order := make([]string, 0, len(rows))
		similarity := map[string]float64{}
		versions := map[string]Chunk{}
		for _, r := range rows {
			add, _ := r["_additional"].(map[string]any)
			d, _ := add["distance"].(float64)
			id := wvquery.Str(r, "chunk_id")
			if _, dup := similarity[id]; !dup {
				order = append(order, id)
			}
			similarity[id] = 1 - d
			versions[id] = Chunk{ID: id, FileID: wvquery.Str(r, "file_id"), FileVersionID: wvquery.Str(r, "file_version_id"),
				FilePath: wvquery.Str(r, "file_path"), Branch: wvquery.Str(r, "branch")}
		}
		candidates, err := s.notReplaced(ctx, project, order, versions, q.Branch, q.At)
		if err != nil {
			return nil, err
		}
		visible, err := s.visibleChunks(ctx, project, candidates, q.Branch, q.At, q.Where)
		if err != nil {
			return nil, err
		}
		for _, id := range order {
			if c, ok := visible[id]; ok {
				c.Score = similarity[id]
				out = append(out, c)
			}
		}
		if len(rows) < n {
			break
		}
	}
	return out[:min(q.Limit, len(out))], nil
}

// vectorHitFields are what a vector search reads of a ChunkVector: its
// chunk, the chunk's file version (to drop replaced ones before their
// chunks are read) and the distance.
var vectorHitFields = []graphql.Field{{Name: "chunk_id"}, {Name: "file_id"}, {Name: "file_version_id"}, {Name: "file_path"}, {Name: "branch"},
	{Name: "_additional", Fields: []graphql.Field{{Name: "distance"}}}}

// notReplaced drops from chunkIDs the chunks whose vector names a file
// version the catalog knows is not visible in the view (branch, at), so
// their chunk rows are not read: most of a page where files are overwritten
// often. visibleChunks still decides about the rest. Without the catalog,
// or for a vector that does not name its version, nothing is dropped.
func (s *Store) notReplaced(ctx context.Context, project string, chunkIDs []string, versions map[string]Chunk, branch string, at int64) ([]string, error) {
	if !s.catalog.covers(project, at) {
		return chunkIDs, nil // the check would cost a Weaviate read of its own
	}
	named := func(c Chunk) bool {
		return c.FileID != "" && c.FileVersionID != "" && (branch == "" || c.FilePath != "")
	}
	var cs []Chunk
	for _, id := range chunkIDs {
		if c := versions[id]; named(c) {
			cs = append(cs, c)
		}
	}
	ok, err := s.visible(ctx, project, cs, branch, at)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(chunkIDs))
	for _, id := range chunkIDs {
		if !named(versions[id]) || ok[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// visibleChunks loads the chunks among chunkIDs that are in the view (the
// file's visible version as of at, a branch's copy hiding main's) and
// match where.
func (s *Store) visibleChunks(ctx context.Context, project string, chunkIDs []string, branch string, at int64, where *Where) (map[string]Chunk, error) {
	out := map[string]Chunk{}
	if len(chunkIDs) == 0 {
		return out, nil
	}
	filter := wvquery.And(filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(chunkIDs...), intLE("valid_from", at))
	if where != nil {
		filter = wvquery.And(filter, where)
	}
	rows, err := s.find(ctx, schema.ChunkClass, project, chunkFields, getQuery{where: filter, limit: len(chunkIDs)})
	if err != nil {
		return nil, err
	}
	cs := chunks(project, rows)
	ok, err := s.visible(ctx, project, cs, branch, at)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if ok[c.ID] {
			out[c.ID] = c
		}
	}
	return out, nil
}

// visible reports which of cs are in the view: their file's visible version
// as of at on branch (a branch's copy or delete hiding main's file).
func (s *Store) visible(ctx context.Context, project string, cs []Chunk, branch string, at int64) (map[string]bool, error) {
	var fileIDs []string
	for _, c := range cs {
		fileIDs = append(fileIDs, c.FileID)
		if branch != "" && c.Branch == "" {
			fileIDs = append(fileIDs, ids.File(project, branch, c.FilePath))
		}
	}
	latest, err := s.LatestVersions(ctx, project, fileIDs, at)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, c := range cs {
		if c.Branch != "" && c.Branch != branch {
			continue
		}
		if c.Branch == "" && branch != "" {
			if _, shadowed := latest[ids.File(project, branch, c.FilePath)]; shadowed {
				continue
			}
		}
		if latest[c.FileID] == c.FileVersionID {
			out[c.ID] = true
		}
	}
	return out, nil
}

// ChunkVectors are what a chunk has been embedded with.
type ChunkVectors struct {
	Current     *ChunkEmbedding // the vector of the model asked for, if any
	OtherModels bool            // vectors of other models exist
}

// Embeddings returns, for each of chunkIDs that has any vector, its vector
// of model and whether other models embedded it. withVector fetches the
// vector itself.
func (s *Store) Embeddings(ctx context.Context, project, model string, chunkIDs []string, withVector bool) (map[string]ChunkVectors, error) {
	out := map[string]ChunkVectors{}
	if len(chunkIDs) == 0 {
		return out, nil
	}
	exists, err := s.vectorClassExists(ctx)
	if err != nil || !exists {
		return out, err
	}
	if len(chunkIDs) == 1 {
		// One chunk: its vector of model has a deterministic id, read with
		// one GET; only a chunk without one needs the search for other models.
		if cv, found, err := s.embeddingByID(ctx, project, model, chunkIDs[0], withVector); err != nil || found {
			if found {
				out[chunkIDs[0]] = cv
			}
			return out, err
		}
	}
	name := schema.VectorName(model)
	extra := []graphql.Field{{Name: "id"}}
	if withVector {
		if ok, err := s.hasVectors(ctx, model); err != nil {
			return nil, err
		} else if ok {
			extra = append(extra, graphql.Field{Name: "vectors", Fields: []graphql.Field{{Name: name}}})
		}
	}
	rows, err := s.get(ctx, schema.ChunkVectorClass, project,
		[]graphql.Field{{Name: "chunk_id"}, {Name: "model"}, {Name: "source_checksum"}, {Name: "_additional", Fields: extra}},
		filters.Where().WithPath([]string{"chunk_id"}).WithOperator(filters.ContainsAny).WithValueText(chunkIDs...), func(g *graphql.GetBuilder) *graphql.GetBuilder {
			return g.
				WithLimit(10 * len(chunkIDs))
		})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		add, _ := r["_additional"].(map[string]any)
		e := ChunkEmbedding{ID: wvquery.Str(add, "id"), ChunkID: wvquery.Str(r, "chunk_id"), Model: wvquery.Str(r, "model"), SourceChecksum: wvquery.Str(r, "source_checksum")}
		cv := out[e.ChunkID]
		if e.Model != model {
			cv.OtherModels = true
			out[e.ChunkID] = cv
			continue
		}
		if vs, ok := add["vectors"].(map[string]any); ok {
			if list, ok := vs[name].([]any); ok {
				e.Vector = make([]float32, len(list))
				for i, f := range list {
					v, _ := f.(float64)
					e.Vector[i] = float32(v)
				}
			}
		}
		cv.Current = &e
		out[e.ChunkID] = cv
	}
	return out, nil
}

// EmbeddedChunkCount counts the chunks of the current indexed documents
// that have a vector of model.
func (s *Store) EmbeddedChunkCount(ctx context.Context, project, model string) (int, error) {
	if s.catalog != nil {
		if n, ok := s.catalog.Embedded(ctx, project, model); ok {
			return n, nil // maintained as commits and vectors land: no scan
		}
	}
	if ok, err := s.hasVectors(ctx, model); err != nil || !ok {
		return 0, err
	}
	docs, err := s.documents(ctx, project, wvquery.And(notDeleted(), eq("status", pipeline.StatusIndexed)), 10000)
	if err != nil {
		return 0, err
	}
	total := 0
	for start := 0; start < len(docs); start += 500 {
		var versions []string
		for _, d := range docs[start:min(start+500, len(docs))] {
			versions = append(versions, d.FileVersionID)
		}
		counts, err := s.aggregate(ctx, schema.ChunkVectorClass, project, wvquery.And(eq("model", model),
			filters.Where().WithPath([]string{"file_version_id"}).WithOperator(filters.ContainsAny).WithValueText(versions...)), "")
		if err != nil {
			return 0, err
		}
		total += counts[""]
	}
	return total, nil
}

// EmbeddingStatus is a chunk's status against the configured model:
// ready when its vector of that model matches its content, stale when it
// only has a vector of another model or of other content, missing otherwise.
func EmbeddingStatus(c Chunk, v ChunkVectors) string {
	switch {
	case v.Current != nil && v.Current.SourceChecksum == c.SourceChecksum:
		return pipeline.EmbeddingReady
	case v.Current != nil || v.OtherModels:
		return pipeline.EmbeddingStale
	}
	return pipeline.EmbeddingMissing
}

// embeddingByID reads chunkID's vector of model by its id; found is false
// when there is none.
func (s *Store) embeddingByID(ctx context.Context, project, model, chunkID string, withVector bool) (ChunkVectors, bool, error) {
	var vectors []string
	if withVector {
		vectors = []string{schema.VectorName(model)}
	}
	o, err := s.objectByID(ctx, schema.ChunkVectorClass, project, ids.ChunkVector(chunkID, model), vectors...)
	if err != nil || o == nil {
		return ChunkVectors{}, false, err
	}
	props, _ := o.Properties.(map[string]any)
	e := ChunkEmbedding{ID: string(o.ID), ChunkID: wvquery.Str(props, "chunk_id"), Model: wvquery.Str(props, "model"), SourceChecksum: wvquery.Str(props, "source_checksum")}
	if e.ChunkID != chunkID || e.Model != model {
		return ChunkVectors{}, false, nil
	}
	if withVector {
		e.Vector = []float32(o.Vectors[schema.VectorName(model)])
	}
	return ChunkVectors{Current: &e}, true, nil
}
