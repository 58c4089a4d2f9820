package index

// A Weaviate node whose disk passes its read-only threshold
// (DISK_USE_READONLY_PERCENTAGE, 90% by default) marks every shard
// READONLY, and Weaviate 1.35 leaves them so after space returns. The
// indexer sets the shards a write was refused by READY again and the
// message is retried: while the disk is still full, Weaviate marks them
// read-only at its next check and the write is refused again.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weaviate/weaviate/entities/models"
)

// fullDiskRefusal says whether err is Weaviate refusing a write because a
// node's disk passed its read-only threshold (storagestate's "store is
// read-only due to: disk usage too high ..."), not read-only for another
// reason (an operator's, or a vector index being reconfigured).
func fullDiskRefusal(err error) bool {
	return err != nil && strings.Contains(err.Error(), "read-only due to: disk usage too high")
}

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
