package schema_test

import (
	"context"
	"testing"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/schema"
)

// TestEnsureBringsBM25ToTheChosenParameters: an index made with other BM25
// parameters (an older Strata, or an operator's experiment) gets
// schema.ChunkBM25 back when a service ensures the schema.
func TestEnsureBringsBM25ToTheChosenParameters(t *testing.T) {
	wv := writer(t)
	ctx := context.Background()
	if err := schema.Ensure(ctx, wv); err != nil {
		t.Fatal(err)
	}
	bm25 := func() models.BM25Config {
		c, err := wv.Schema().ClassGetter().WithClassName(schema.ChunkClass).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return *c.InvertedIndexConfig.Bm25
	}
	if got := bm25(); got != schema.ChunkBM25 {
		t.Fatalf("new collection: BM25 %+v, want %+v", got, schema.ChunkBM25)
	}
	old := models.BM25Config{K1: 1.2, B: 0.75}
	if err := schema.SetBM25(ctx, wv, schema.ChunkClass, old); err != nil {
		t.Fatal(err)
	}
	if got := bm25(); got != old {
		t.Fatalf("SetBM25: %+v, want %+v", got, old)
	}
	if err := schema.Ensure(ctx, wv); err != nil {
		t.Fatal(err)
	}
	if got := bm25(); got != schema.ChunkBM25 {
		t.Fatalf("after Ensure: BM25 %+v, want %+v", got, schema.ChunkBM25)
	}
}
