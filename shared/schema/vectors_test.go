package schema_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/strata-kb/strata/shared/schema"
)

func TestVectorName(t *testing.T) {
	a, b := schema.VectorName("use-lite-512"), schema.VectorName("openai:text-embedding-3-small:1536")
	if a == b || a != schema.VectorName("use-lite-512") {
		t.Fatalf("names must be stable and distinct: %s %s", a, b)
	}
	for _, n := range []string{a, b, schema.VectorName("../Ünïcode model\x00"), schema.VectorName("")} {
		if !validName(n) {
			t.Errorf("%q is not a valid Weaviate vector name", n)
		}
	}
}

func validName(s string) bool {
	if s == "" || len(s) > 230 || (s[0] != '_' && !(s[0] >= 'a' && s[0] <= 'z') && !(s[0] >= 'A' && s[0] <= 'Z')) {
		return false
	}
	for _, r := range s {
		if !(r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return false
		}
	}
	return true
}

// TestSecondModelIsAddedSideBySide: a second model's named vector is added
// to the existing collection on a real weaviate-server; the first stays.
func TestSecondModelIsAddedSideBySide(t *testing.T) {
	wv := writer(t)
	ctx := context.Background()
	for _, m := range []string{"model-a", "model-b", "model-a"} {
		if err := schema.EnsureVectorSpace(ctx, wv, m, 1); err != nil {
			t.Fatalf("ensure %s: %v", m, err)
		}
	}
	for _, m := range []string{"model-a", "model-b"} {
		if ok, err := schema.HasVectorSpace(ctx, wv, m); err != nil || !ok {
			t.Fatalf("%s: %v %v", m, ok, err)
		}
	}
	if ok, _ := schema.HasVectorSpace(ctx, wv, "model-c"); ok {
		t.Fatal("model-c was never added")
	}
}

// Models added at once by several writers all get their vector space: an
// update that lost the race to another writer's is read again and retried.
func TestModelsAddedConcurrently(t *testing.T) {
	wv := writer(t)
	ctx := context.Background()
	if err := schema.EnsureVectorSpace(ctx, wv, "concurrent-0", 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 1; i <= 6; i++ {
		wg.Go(func() {
			if err := schema.EnsureVectorSpace(ctx, wv, fmt.Sprintf("concurrent-%d", i), 1); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range 7 {
		if ok, err := schema.HasVectorSpace(ctx, wv, fmt.Sprintf("concurrent-%d", i)); err != nil || !ok {
			t.Errorf("concurrent-%d: %v %v", i, ok, err)
		}
	}
}

// A named vector made before schema.RescoreLimit (Weaviate's default
// rescoreLimit, 20) gets it when its model's vector space is ensured again.
func TestRescoreLimitOfAnOlderVectorIsRaised(t *testing.T) {
	wv := writer(t)
	ctx := context.Background()
	const model = "rescore-older"
	if err := schema.EnsureVectorSpace(ctx, wv, model, 1); err != nil {
		t.Fatal(err)
	}
	rescoreLimit := func() any {
		t.Helper()
		have, err := wv.Schema().ClassGetter().WithClassName(schema.ChunkVectorClass).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := have.VectorConfig[schema.VectorName(model)].VectorIndexConfig.(map[string]any)
		rq, _ := cfg["rq"].(map[string]any)
		return rq["rescoreLimit"]
	}
	if got := fmt.Sprint(rescoreLimit()); got != fmt.Sprint(schema.RescoreLimit) {
		t.Fatalf("a new vector's rescoreLimit is %s, want %d", got, schema.RescoreLimit)
	}
	// As an older Strata made it.
	have, err := wv.Schema().ClassGetter().WithClassName(schema.ChunkVectorClass).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := have.VectorConfig[schema.VectorName(model)].VectorIndexConfig.(map[string]any)
	cfg["rq"].(map[string]any)["rescoreLimit"] = 20
	if err := wv.Schema().ClassUpdater().WithClass(have).Do(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rescoreLimit()); got != "20" {
		t.Fatalf("set up: rescoreLimit %s, want 20", got)
	}
	if err := schema.EnsureVectorSpace(ctx, wv, model, 1); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rescoreLimit()); got != fmt.Sprint(schema.RescoreLimit) {
		t.Fatalf("after EnsureVectorSpace: rescoreLimit %s, want %d", got, schema.RescoreLimit)
	}
}
