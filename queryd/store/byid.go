package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// Reads by id, and why they are hedged (Weaviate v1.35.2, 3 nodes): a REST
// GET of an object of a multi-tenant collection checks its tenant with the
// Raft leader (adapters/repos/db/sharding/resolver.go ResolveShardByObjectID
// -> multitenancy ValidateTenants -> cluster QueryTenantsShards), on every
// node, so after the leader's SIGKILL it waits for a new leader (1-3 s,
// docs/bench/weaviate-failover.md) or, on the node that becomes leader,
// for good. A filtered query (gRPC, or GraphQL) checks the tenant in the
// node's own copy of the schema (cluster/router multiTenantRouter) and
// answers on. So a REST read by id that has not answered within the hedge
// delay is sent as a filtered query on the object's id too, and the first
// answer wins; once a filtered query has won, reads by id skip REST for
// restHeldFor.
const (
	// DefaultByIDHedge is how long a REST read by id runs alone: far above
	// a healthy REST read by id (a few ms; p99 tens of ms on a loaded
	// 2-core machine, docs/bench/weaviate-failover.md), and what a read by
	// id costs at most when the Raft leader is lost (plus one filtered
	// query). A read hedged without need costs one filtered query.
	DefaultByIDHedge = 100 * time.Millisecond
	// restHeldFor is how long reads by id go as filtered queries only
	// after one overtook a REST read: longer than a leader election with
	// RAFT_TIMEOUTS_MULTIPLIER=1, so one read in an election pays the hedge
	// delay, not every read of it.
	restHeldFor = 5 * time.Second
)

// byIDState is how a Store reads by id.
type byIDState struct {
	hedge    time.Duration // 0: DefaultByIDHedge
	heldTill atomic.Int64  // unix nanoseconds: skip REST until then
}

// SetByIDHedge sets how long a REST read by id runs before the same read
// also goes as a filtered query (at least 1 ms).
func (s *Store) SetByIDHedge(d time.Duration) *Store {
	s.byID.hedge = max(d, time.Millisecond)
	return s
}

func (s *Store) byIDHedge() time.Duration {
	if s.byID.hedge > 0 {
		return s.byID.hedge
	}
	return DefaultByIDHedge
}

// objectByID reads one object: with a plain REST GET, the cheapest read
// Weaviate has, and when that does not answer within the hedge delay, also
// with a filtered query on its id (objectByGraphQL); nil when it does not exist.
// vectors names the named vectors to read with it (none: no vectors).
func (s *Store) objectByID(ctx context.Context, class, project, id string, vectors ...string) (*models.Object, error) {
	if documentClasses[class] && !access.GrantFrom(ctx).Admin {
		// REST takes no filter: it would return a hidden object, to be
		// dropped here, later than a missing id's 404 would come back. The
		// catalog knows every committed chunk's file, and answers a hidden
		// chunk as fast as a missing one; without it, a filtered query
		// answers both alike, as Weaviate's empty result.
		readable, known := false, false
		if class == schema.ChunkClass {
			readable, known = s.catalog.chunkReadable(ctx, project, id)
		}
		switch {
		case known && !readable:
			return nil, nil
		case !known:
			return s.objectByGraphQL(ctx, class, project, id, vectors)
		}
	}
	return s.hedgedByID(ctx, class, project, id, vectors)
}

// byIDAnswer is one way's answer to a read by id.
type byIDAnswer struct {
	o      *models.Object
	err    error
	filter bool // the filtered query's
}

// hedgedByID sends a read by id over REST and, when that has not answered
// within the hedge delay (or failed), as a filtered query too; the first
// answer wins and the other read is cancelled. While REST is held (a
// filtered query overtook it less than restHeldFor ago) the filtered query
// goes first, alone.
func (s *Store) hedgedByID(ctx context.Context, class, project, id string, vectors []string) (*models.Object, error) {
	if time.Now().UnixNano() < s.byID.heldTill.Load() {
		o, err := s.objectByGraphQL(ctx, class, project, id, vectors)
		if err == nil || ctx.Err() != nil {
			return o, err
		}
		// The filtered query failed: REST may still answer.
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the read that lost
	answers := make(chan byIDAnswer, 2)
	go func() {
		o, err := s.objectByREST(ctx, class, project, id, len(vectors) > 0)
		answers <- byIDAnswer{o: o, err: err}
	}()
	pending, filtering := 1, false
	filter := func() {
		pending, filtering = pending+1, true
		go func() {
			o, err := s.objectByGraphQL(ctx, class, project, id, vectors)
			answers <- byIDAnswer{o: o, err: err, filter: true}
		}()
	}
	hedge := time.NewTimer(s.byIDHedge())
	defer hedge.Stop()
	var errs []error
	for pending > 0 {
		select {
		case a := <-answers:
			pending--
			if a.err == nil {
				if a.filter {
					s.byID.heldTill.Store(time.Now().Add(restHeldFor).UnixNano())
				}
				return a.o, nil
			}
			errs = append(errs, a.err)
			if !filtering && ctx.Err() == nil {
				filter() // REST failed: the filtered query may answer
			}
		case <-hedge.C:
			if !filtering {
				filter()
			}
		}
	}
	return nil, errors.Join(errs...)
}

func (s *Store) objectByREST(ctx context.Context, class, project, id string, withVector bool) (*models.Object, error) {
	g := s.wv.Data().ObjectsGetter().WithClassName(class).WithID(id).WithTenant(project)
	if s.consistency != "" {
		g = g.WithConsistencyLevel(s.consistency)
	}
	if withVector {
		g = g.WithVector()
	}
	objs, err := g.Do(ctx)
	if err != nil {
		var ce *fault.WeaviateClientError
		if errors.As(err, &ce) && (ce.StatusCode == 404 || strings.Contains(ce.Error(), "tenant not found")) {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s %s of %s: %w", class, id, project, err)
	}
	if len(objs) == 0 {
		return nil, nil
	}
	return s.readableObject(ctx, project, class, objs[0]), nil
}

// byIDFields are the properties objectByGraphQL reads, per class.
var byIDFields = map[string][]graphql.Field{
	schema.ChunkClass:   chunkDetailFields,
	schema.SectionClass: sectionFields,
	schema.DocumentClass: append(slices.Clone(listDocumentFields), graphql.Field{Name: "section_count"},
		graphql.Field{Name: "token_count"}, graphql.Field{Name: "pages"}, graphql.Field{Name: "language"}),
	schema.ChunkVectorClass: {{Name: "chunk_id"}, {Name: "model"}, {Name: "source_checksum"}, {Name: "file_id"}, {Name: "file_version_id"}},
}

// objectByGraphQL reads one object with a filtered query on its id: over
// gRPC when set and no vectors are asked (find), else over GraphQL.
func (s *Store) objectByGraphQL(ctx context.Context, class, project, id string, vectors []string) (*models.Object, error) {
	fields := slices.Clone(byIDFields[class])
	fields = slices.DeleteFunc(fields, func(f graphql.Field) bool { return f.Name == "_additional" })
	additional := []graphql.Field{{Name: "id"}}
	if len(vectors) > 0 {
		var names []graphql.Field
		for _, v := range vectors {
			names = append(names, graphql.Field{Name: v})
		}
		additional = append(additional, graphql.Field{Name: "vectors", Fields: names})
	}
	fields = append(fields, graphql.Field{Name: "_additional", Fields: additional})
	var rows []map[string]any
	var err error
	if len(vectors) == 0 {
		rows, err = s.find(ctx, class, project, fields, getQuery{where: ChunkFilter(id), limit: 1}) // gRPC when set
	} else {
		rows, err = s.get(ctx, class, project, fields, ChunkFilter(id), func(g *graphql.GetBuilder) *graphql.GetBuilder {
			return g.WithLimit(1)
		})
	}
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	add, _ := rows[0]["_additional"].(map[string]any)
	o := &models.Object{Class: class, ID: strfmt.UUID(wvquery.Str(add, "id")), Tenant: project, Properties: map[string]any{}}
	for k, v := range rows[0] {
		if k != "_additional" {
			o.Properties.(map[string]any)[k] = v
		}
	}
	if vs, ok := add["vectors"].(map[string]any); ok {
		o.Vectors = models.Vectors{}
		for name, list := range vs {
			if l, ok := list.([]any); ok {
				v := make([]float32, len(l))
				for i, f := range l {
					x, _ := f.(float64)
					v[i] = float32(x)
				}
				o.Vectors[name] = models.Vector(v)
			}
		}
	}
	return o, nil
}

// chunkFromObject is chunks() for an object read by id.
func chunkFromObject(project string, o *models.Object) Chunk {
	return chunks(project, []map[string]any{rowOf(o)})[0]
}

// rowOf is an object read by id in the shape of a GraphQL row.
func rowOf(o *models.Object) map[string]any {
	props, _ := o.Properties.(map[string]any)
	row := make(map[string]any, len(props)+1)
	for k, v := range props {
		row[k] = v
	}
	row["_additional"] = map[string]any{"id": string(o.ID)}
	return row
}

// rowByID reads an object committed by sequence at, or nil: the same
// answer as a GraphQL Get by id and valid_from <= at, for one REST GET.
func (s *Store) rowByID(ctx context.Context, class, project, id string, at int64) (map[string]any, error) {
	o, err := s.objectByID(ctx, class, project, id)
	if err != nil || o == nil {
		return nil, err
	}
	row := rowOf(o)
	if int64(wvquery.Float(row, "valid_from")) > at {
		return nil, nil
	}
	return row, nil
}

// schemaFacts caches what, once true, stays true: a collection exists, a
// model's named vector exists. Negative answers are asked again.
type schemaFacts struct {
	mu    sync.Mutex
	known map[string]bool
}

func (f *schemaFacts) check(key string, ask func() (bool, error)) (bool, error) {
	f.mu.Lock()
	ok := f.known[key]
	f.mu.Unlock()
	if ok {
		return true, nil
	}
	ok, err := ask()
	if err != nil || !ok {
		return ok, err
	}
	f.mu.Lock()
	if f.known == nil {
		f.known = map[string]bool{}
	}
	f.known[key] = true
	f.mu.Unlock()
	return true, nil
}

// vectorClassExists reports whether the ChunkVector collection exists.
func (s *Store) vectorClassExists(ctx context.Context) (bool, error) {
	if s.catalog.hasMarks("") {
		return true, nil
	}
	return s.facts.check("class:"+schema.ChunkVectorClass, func() (bool, error) {
		return s.wv.Schema().ClassExistenceChecker().WithClassName(schema.ChunkVectorClass).Do(ctx)
	})
}
