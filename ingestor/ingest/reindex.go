package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// ObjectInfo is one listed object.
type ObjectInfo struct {
	Key          string
	ETag         string
	Size         int64
	LastModified time.Time
}

// Lister lists a bucket's objects under a prefix.
type Lister interface {
	List(ctx context.Context, bucket, prefix string, fn func(ObjectInfo) error) error
}

// StateReader reads recorded object freshness.
type StateReader interface {
	Get(ctx context.Context, project, objectKey string) (*pipeline.ObjectState, error)
}

// Reindexer re-lists a bucket and re-emits work through the normal event path.
type Reindexer struct {
	Bucket string
	Lister Lister
	States StateReader
	Pub    Publisher
}

// ReindexResult counts what a reindex did.
type ReindexResult struct {
	Listed, Emitted, Skipped int
}

// Handle processes a request on strata.reindex.<project>: every object under
// the prefix whose recorded state does not match its ETag (or every object,
// with force) is re-emitted as a bucket event on the objects stream, with a
// sequencer newer than the last one seen, so the normal path re-processes it.
// This also recovers objects whose notifications were lost.
func (r *Reindexer) Handle(ctx context.Context, subject string, data []byte) (ReindexResult, error) {
	var res ReindexResult
	project := strings.TrimPrefix(subject, pipeline.ReindexSubject+".")
	if !objkey.ValidProject(project) {
		return res, worker.Permanent(fmt.Errorf("reindex: invalid project in subject %q", subject))
	}
	var req pipeline.ReindexRequest
	if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &req); err != nil {
			return res, worker.Permanent(fmt.Errorf("reindex %s: want JSON {\"prefix\", \"branch\", \"force\"}: %w", project, err))
		}
	}
	head := project
	if req.Branch != "" {
		head += "@" + req.Branch
	}
	prefix := head + "/" + strings.TrimPrefix(req.Prefix, "/")
	err := r.Lister.List(ctx, r.Bucket, prefix, func(o ObjectInfo) error {
		res.Listed++
		st, err := r.States.Get(ctx, project, o.Key)
		if err != nil {
			return err
		}
		current := st != nil && st.ETag == o.ETag && st.State != pipeline.StatePending && st.State != pipeline.StateDeleted
		if current && !req.Force {
			res.Skipped++
			return nil
		}
		seq := sequencerAfter(st, o.LastModified)
		body, err := json.Marshal(syntheticEvent(r.Bucket, o, seq))
		if err != nil {
			return err
		}
		if err := r.Pub.Publish(ctx, pipeline.ObjectEventsSubject, "reindex-"+o.Key+"-"+seq, nil, body); err != nil {
			return err
		}
		res.Emitted++
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("reindex %s: %w", prefix, err)
	}
	return res, nil
}

// sequencerAfter is a sequencer newer than the recorded one and not older
// than the object's modification time (MinIO's sequencers are hex nanoseconds).
func sequencerAfter(st *pipeline.ObjectState, modified time.Time) string {
	n := uint64(modified.UnixNano())
	if st != nil {
		if last, err := strconv.ParseUint(st.Sequencer, 16, 64); err == nil && last >= n {
			n = last + 1
		}
	}
	return strings.ToUpper(strconv.FormatUint(n, 16))
}

// syntheticEvent is a notification in MinIO's format for a listed object.
func syntheticEvent(bucket string, o ObjectInfo, sequencer string) map[string]any {
	return map[string]any{
		"EventName": "s3:ObjectCreated:Put",
		"Key":       bucket + "/" + o.Key,
		"Records": []map[string]any{{
			"eventName": "s3:ObjectCreated:Put",
			"eventTime": time.Now().UTC().Format(time.RFC3339Nano),
			"s3": map[string]any{
				"bucket": map[string]any{"name": bucket},
				"object": map[string]any{"key": url.QueryEscape(o.Key), "size": o.Size, "eTag": o.ETag, "sequencer": sequencer},
			},
		}},
	}
}
