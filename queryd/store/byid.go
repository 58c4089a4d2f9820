package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/schema"
)

// objectByID reads one object with a plain REST GET, the cheapest read
// Weaviate has (no GraphQL parsing, no filter): nil when it does not exist.
func (s *Store) objectByID(ctx context.Context, class, project, id string, withVector bool) (*models.Object, error) {
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
	return objs[0], nil
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
	o, err := s.objectByID(ctx, class, project, id, false)
	if err != nil || o == nil {
		return nil, err
	}
	row := rowOf(o)
	if int64(numf(row, "valid_from")) > at {
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
