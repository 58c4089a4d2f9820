package store

import (
	"context"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"

	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// withoutReplaced narrows a search of class (Chunk, ChunkVector) as of at
// to the rows whose version was not replaced by then (schema.ValidToProperty,
// set by the indexer after each commit), so that Weaviate ranks current rows
// instead of a file's every version until garbage collection. Each row's
// version is still checked (visible), as a row may be closed late. A
// collection written before valid_to existed, not yet brought up to date by
// an indexer, is searched as it is.
func (s *Store) withoutReplaced(ctx context.Context, class string, where *filters.WhereBuilder, at int64) (*filters.WhereBuilder, error) {
	ok, err := s.facts.check("property:"+class+"."+schema.ValidToProperty, func() (bool, error) {
		c, err := s.wv.Schema().ClassGetter().WithClassName(class).Do(ctx)
		if err != nil {
			return false, fmt.Errorf("read collection %s: %w", class, err)
		}
		for _, p := range c.Properties {
			if p.Name == schema.ValidToProperty {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil || !ok {
		return where, err
	}
	return wvquery.And(where, schema.NotReplaced(at)), nil
}
