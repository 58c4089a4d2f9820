package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
)

// HeadLister lists the top-level prefixes of a bucket: "acme", "acme@feature".
type HeadLister interface {
	Heads(ctx context.Context, bucket string) ([]string, error)
}

// Reconciler periodically asks for a reindex of every project and branch in
// the bucket, so objects whose notification MinIO lost (it was killed after
// answering the PUT, before queueing the event), whose delete was lost, or
// whose tag change was lost (the ETag stays: the tags digest tells, see
// Reindexer.decide) are still indexed exactly, with the readers their tags
// name. Requests go through the objects stream like an operator's; their
// message IDs are per interval, so several ingestor replicas reconciling at
// once produce one request per head.
type Reconciler struct {
	Bucket   string
	Heads    HeadLister
	Pub      Publisher
	Interval time.Duration
	Log      *slog.Logger
}

// Run reconciles every Interval until ctx ends.
func (r *Reconciler) Run(ctx context.Context) {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			n, err := r.Once(ctx, now)
			if err != nil {
				r.Log.Warn("reconcile", "err", err)
				continue
			}
			r.Log.Debug("reconcile requested", "heads", n)
		}
	}
}

// Once publishes one reindex request per head in the bucket.
func (r *Reconciler) Once(ctx context.Context, now time.Time) (int, error) {
	heads, err := r.Heads.Heads(ctx, r.Bucket)
	if err != nil {
		return 0, fmt.Errorf("reconcile: %w", err)
	}
	window := strconv.FormatInt(now.UnixNano()/int64(r.Interval), 10)
	n := 0
	for _, head := range heads {
		project, branch, _ := strings.Cut(head, "@")
		if !objkey.ValidProject(project) {
			continue // not an ingestible key; the event path records it
		}
		body, err := json.Marshal(pipeline.ReindexRequest{Branch: branch})
		if err != nil {
			return n, err
		}
		if err := r.Pub.Publish(ctx, pipeline.ReindexSubject+"."+project, "reconcile-"+head+"-"+window, nil, body); err != nil {
			return n, fmt.Errorf("reconcile %s: %w", head, err)
		}
		n++
	}
	return n, nil
}
