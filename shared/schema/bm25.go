package schema

import (
	"context"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"
)

// ChunkBM25 is the Chunk collection's BM25 parameters, chosen by `go tool
// task eval` side by side with others on the same index (docs/eval): k1 1.5
// had the best mean nDCG@10 of keyword search over SciFact, Cranfield and
// identifiers, ahead of Weaviate's 1.2 and Anserini's 0.9 (b 0.4 and 0.75).
// Indexes made before keep theirs until the indexer starts (Ensure sets it).
var ChunkBM25 = models.BM25Config{K1: 1.5, B: 0.75}

// SetBM25 sets a collection's BM25 parameters. Weaviate applies them when it
// scores a query, so they change the ranking of what is already indexed.
func SetBM25(ctx context.Context, c *weaviate.Client, class string, p models.BM25Config) error {
	have, err := c.Schema().ClassGetter().WithClassName(class).Do(ctx)
	if err != nil {
		return fmt.Errorf("read collection %s: %w", class, err)
	}
	if have.InvertedIndexConfig == nil {
		have.InvertedIndexConfig = &models.InvertedIndexConfig{}
	}
	have.InvertedIndexConfig.Bm25 = &p
	if err := c.Schema().ClassUpdater().WithClass(have).Do(ctx); err != nil {
		return fmt.Errorf("set BM25 k1=%g b=%g on %s: %w", p.K1, p.B, class, err)
	}
	return nil
}
