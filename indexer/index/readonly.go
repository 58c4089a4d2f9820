package index

// A Weaviate node whose disk passes its read-only threshold
// (DISK_USE_READONLY_PERCENTAGE, 90% by default) marks every shard
// READONLY, and Weaviate 1.35 leaves them so after space returns. The
// indexer sets the shards a write was refused by READY again and the
// message is retried: while the disk is still full, Weaviate marks them
// read-only at its next check and the write is refused again.
//
// With replication, a write at consistency ALL that one replica refuses
// comes back as "cannot reach enough replicas", the replica's reason
// lost (strata-chaos's full-disk fault on a Weaviate node: indexing
// stopped for good until the shards were set ready). So that refusal sets
// the shards READY too, at most once every readyEvery: a shard status is
// a Raft command that every node applies to its own replica, and one more
// while a replica is merely down costs nothing. An operator who wants a
// project left alone stops its indexer; a shard set READONLY by hand is
// set ready by the next write refused (docs/decisions.md).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weaviate/weaviate/entities/models"
)

// fullDiskRefusal says whether err may be Weaviate refusing a write
// because a node's disk is or was full: the read-only threshold passed
// (storagestate's "store is read-only due to: disk usage too high ..."),
// a write that met the full disk itself ("no space left on device"), or
// a replicated write that a replica refused without a reason passed on.
// Read-only for another reason named (a vector index being reconfigured)
// is not one.
func fullDiskRefusal(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "read-only due to: disk usage too high") || strings.Contains(s, "no space left on device") ||
		strings.Contains(s, "cannot reach enough replicas")
}

// readyEvery is how often afterFullDisk sets one shard READY at most.
const readyEvery = 5 * time.Second

// readyShards sets READY the shards (class, tenant) of objs.
func (w *Writer) readyShards(ctx context.Context, objs []*models.Object) error {
	type shard struct{ class, tenant string }
	seen := map[shard]bool{}
	var errs []error
	for _, o := range objs {
		s := shard{o.Class, o.Tenant}
		if seen[s] || s.tenant == "" {
			continue
		}
		seen[s] = true
		if last, ok := w.readied.Load(s); ok && time.Since(last.(time.Time)) < readyEvery {
			continue
		}
		w.readied.Store(s, time.Now())
		if _, err := w.wv.Schema().ShardUpdater().WithClassName(s.class).WithShardName(s.tenant).WithStatus("READY").Do(ctx); err != nil {
			errs = append(errs, fmt.Errorf("set shard %s of %s ready: %w", s.tenant, s.class, err))
		}
	}
	return errors.Join(errs...)
}

// afterFullDisk sets the shards of objs ready again when err is a full
// disk's refusal, so the retried write goes through once space returns.
func (w *Writer) afterFullDisk(ctx context.Context, objs []*models.Object, err error) {
	if !fullDiskRefusal(err) {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if rerr := w.readyShards(rctx, objs); rerr != nil {
		w.log.Warn("a full disk left shards read-only; setting them ready failed", "err", rerr)
		return
	}
	w.log.Warn("a full disk left shards read-only: set them ready again; the write is retried", "err", err)
}
