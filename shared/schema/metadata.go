package schema

import (
	"context"
	"fmt"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"

	"github.com/strata-kb/strata/shared/metadata"
)

// RangeProperties lists the metadata range properties a collection has
// (metadata.RangeProperty), nil when it does not exist.
func RangeProperties(ctx context.Context, c *weaviate.Client, class string) (map[string]bool, error) {
	have, err := existing(ctx, c, class)
	if err != nil || have == nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range have.Properties {
		if metadata.IsRangeProperty(p.Name) {
			out[p.Name] = true
		}
	}
	return out, nil
}

// AddRangeProperty adds one metadata range property to a collection (one
// added by a concurrent writer counts as added). It must come before the
// first write of a value: auto-schema would make a date a text property.
func AddRangeProperty(ctx context.Context, c *weaviate.Client, class, name string, k metadata.Kind) error {
	err := c.Schema().PropertyCreator().WithClassName(class).WithProperty(RangeProperty(name, k)).Do(ctx)
	// A concurrent writer (another commit, or a retried request whose first
	// attempt succeeded) may have added it: Weaviate then says "already
	// exists" or "conflict for property ...: already in use".
	if err != nil && !strings.Contains(err.Error(), "already exists") && !strings.Contains(err.Error(), "already in use") {
		return fmt.Errorf("add metadata property %s to %s: %w", name, class, err)
	}
	return nil
}

// copyRangeProperties gives ChunkVector the range properties Chunk has
// (a ChunkVector collection created after them lacks them).
func copyRangeProperties(ctx context.Context, c *weaviate.Client) error {
	chunk, err := RangeProperties(ctx, c, ChunkClass)
	if err != nil {
		return err
	}
	vector, err := RangeProperties(ctx, c, ChunkVectorClass)
	if err != nil || vector == nil {
		return err
	}
	for name := range chunk {
		if vector[name] {
			continue
		}
		k := metadata.Number
		if strings.HasPrefix(name, "meta_d_") {
			k = metadata.Date
		}
		if err := AddRangeProperty(ctx, c, ChunkVectorClass, name, k); err != nil {
			return err
		}
	}
	return nil
}
