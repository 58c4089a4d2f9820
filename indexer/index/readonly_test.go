package index

import (
	"context"
	"errors"
	"testing"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/schema"
)

func TestFullDiskRefusal(t *testing.T) {
	full := errors.New(`batch object 5f0c: store is read-only due to: disk usage too high. Set to read-only at 91.20%, threshold set to 90.00%`)
	for _, refused := range []error{full,
		errors.New(`batch object 908455dd: conflict "write /data/weaviate/node2/projectstate/chaos/proplengths.tmp: no space left on device": <nil>`),
		errors.New(`batch object 908455dd: broadcast: cannot reach enough replicas`)} {
		if !fullDiskRefusal(refused) {
			t.Errorf("Weaviate's full-disk refusal not recognised: %v", refused)
		}
	}
	for _, other := range []error{nil, errors.New("store is read-only due to: UpdateVectorIndexConfig"), errors.New("store is read-only")} {
		if fullDiskRefusal(other) {
			t.Errorf("taken for a full disk: %v", other)
		}
	}
}

// TestReadyShardsAgain: a project's shards left READONLY (as a full disk
// leaves them) are READY again after readyShards, on a real Weaviate.
func TestReadyShardsAgain(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	p := "readonly-shards"
	if _, err := w.ApplyFileVersion(ctx, version(p, "a.md", "e1", "10", "before the disk filled")); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		t.Helper()
		shards, err := wv.Schema().ShardsGetter().WithClassName(schema.ChunkClass).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shards {
			if s.Name == p {
				return s.Status
			}
		}
		t.Fatalf("no shard %s among %d", p, len(shards))
		return ""
	}
	if _, err := wv.Schema().ShardUpdater().WithClassName(schema.ChunkClass).WithShardName(p).WithStatus("READONLY").Do(ctx); err != nil {
		t.Fatal(err)
	}
	if s := status(); s != "READONLY" {
		t.Fatalf("setup: shard %s", s)
	}
	if err := w.readyShards(ctx, []*models.Object{{Class: schema.ChunkClass, Tenant: p}, {Class: schema.ChunkClass, Tenant: p}}); err != nil {
		t.Fatal(err)
	}
	if s := status(); s != "READY" {
		t.Fatalf("after readyShards: %s", s)
	}
	if _, err := w.ApplyFileVersion(ctx, version(p, "b.md", "e2", "20", "after space returned")); err != nil {
		t.Fatalf("a write after: %v", err)
	}
}
