package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/ingestor/event"
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
	// TagsDigest is TagsDigest of the object's tags and user metadata as
	// the listing shows them; "" if the listing does not carry them (an S3
	// service other than MinIO), and then tag changes are not compared.
	TagsDigest string
}

// Lister lists a bucket's objects under a prefix.
type Lister interface {
	List(ctx context.Context, bucket, prefix string, fn func(ObjectInfo) error) error
	// Exists reports whether key is in the bucket now.
	Exists(ctx context.Context, bucket, key string) (bool, error)
}

// StateReader reads recorded object freshness.
type StateReader interface {
	Get(ctx context.Context, project, objectKey string) (*pipeline.ObjectState, error)
	// List calls fn for every object state recorded for project.
	List(ctx context.Context, project string, fn func(pipeline.ObjectState) error) error
}

// Reindexer re-lists a bucket and re-emits work through the normal event path.
type Reindexer struct {
	Bucket string
	Lister Lister
	States StateReader
	Pub    Publisher
	// MinAge: an unforced reindex leaves objects modified more recently
	// alone (their notifications are still on the way), so a reconcile
	// during a burst does not queue every upload twice.
	MinAge time.Duration
	// StalePending: an unforced reindex re-emits an object whose event was
	// seen but has not moved past pending for this long (default 10x
	// MinAge, at least a minute). A live event that failed while MinIO lost the durable copy
	// (killed right after the PUT) leaves such a state, and nothing else
	// would ever process the upload.
	StalePending time.Duration
}

// ReindexResult counts what a reindex did.
type ReindexResult struct {
	Listed, Emitted, Skipped int
	// Retagged counts objects whose tags or user metadata changed since the
	// index applied them, with the same ETag (a lost tag change): a
	// tagging event was emitted for each.
	Retagged int
	// Deleted counts objects the index holds that are gone from the bucket
	// (a lost delete notification): a delete event was emitted for each.
	Deleted int
}

// Handle processes a request on strata.reindex.<project>: every object under
// the prefix whose recorded state does not match its ETag (or every object,
// with force) is re-emitted as a bucket event on the objects stream, with a
// sequencer newer than the last one seen, so the normal path re-processes it.
// An object whose ETag matches but whose tags or user metadata differ from
// what the index applied gets a tagging event instead. Objects recorded
// as present that are no longer in the bucket get a delete event. This
// recovers objects whose notifications were lost.
func (r *Reindexer) Handle(ctx context.Context, subject string, data []byte) (ReindexResult, error) {
	var res ReindexResult
	project := strings.TrimPrefix(subject, pipeline.ReindexSubject+".")
	if !objkey.ValidProject(project) {
		return res, worker.Permanent(fmt.Errorf("reindex: invalid project in subject %q", subject))
	}
	var req pipeline.ReindexRequest
	if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &req); err != nil {
			return res, worker.Permanent(fmt.Errorf("reindex %s: want JSON {\"prefix\", \"branch\", \"force\", \"retag\"}: %w", project, err))
		}
	}
	head := project
	if req.Branch != "" {
		head += "@" + req.Branch
	}
	prefix := head + "/" + strings.TrimPrefix(req.Prefix, "/")
	listed := map[string]bool{}
	err := r.Lister.List(ctx, r.Bucket, prefix, func(o ObjectInfo) error {
		res.Listed++
		listed[o.Key] = true
		st, err := r.States.Get(ctx, project, o.Key)
		if err != nil {
			return err
		}
		switch r.decide(st, o, req, time.Now()) {
		case reupload:
			seq := sequencerAfter(st, o.LastModified)
			body, err := json.Marshal(syntheticEvent(r.Bucket, o, seq))
			if err != nil {
				return err
			}
			if err := r.Pub.Publish(ctx, pipeline.ObjectEventsSubject, "reindex-"+o.Key+"-"+seq, nil, body); err != nil {
				return err
			}
			res.Emitted++
		case retag:
			body, err := json.Marshal(syntheticTagging(r.Bucket, o, st.Sequencer))
			if err != nil {
				return err
			}
			// The read the index holds and the tags listed name the
			// change: a retried request re-publishes the same message,
			// which the stream drops; once the index applied it, the read
			// is another, so a later change back and forth is not.
			msgID := "reindex-tags-" + o.Key + "-" + strconv.FormatInt(st.TagsReadAt.UnixMicro(), 36) + "-" + shortDigest(o.TagsDigest)
			if err := r.Pub.Publish(ctx, pipeline.ObjectEventsSubject, msgID, nil, body); err != nil {
				return err
			}
			res.Retagged++
		default:
			res.Skipped++
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("reindex %s: %w", prefix, err)
	}
	if err := r.deleteVanished(ctx, project, prefix, listed, &res); err != nil {
		return res, fmt.Errorf("reindex %s: %w", prefix, err)
	}
	return res, nil
}

// action is what a reindex does with one listed object.
type action int

const (
	skip     action = iota
	reupload        // re-emit its upload: the ingestor reads it all again
	retag           // emit a tag change: the ingestor reads its tags and user metadata again
)

// decide says what a reindex does with listed object o, whose recorded
// state is st (nil if none), at now.
//
// A tag change keeps the ETag, so the ETag alone does not tell a lost one.
// The state records the digest of the read of the tags and user metadata
// that the index holds (TagsDigest; the indexer records it once it applied
// the read: the upload's commit or a tag change since), the listing gives
// the digest of what the object has now: when they differ, a tagging event
// like MinIO's goes through the normal path, which reads the tags again and
// publishes the change for the indexer, which records the new digest.
// Rather than a re-upload: nothing needs extracting or embedding again.
// Only when
//   - the state is committed (indexed, embedded or failed): while pending,
//     the upload's own event is still reading the tags, or is re-emitted
//     when stuck;
//   - both digests are known and comparable: a state from before digests
//     were recorded, or a listing without tags (not MinIO), compares
//     nothing, so upgrading does not re-emit every object at once (a
//     request with retag re-reads those on demand, and records digests);
//   - the object is older than MinAge, like re-uploads: a tag change's time
//     is not listed, but it came after the upload, so one within MinAge of
//     the upload may still have its event on the way. An older tag change
//     may too (behind a backlog); both events then read the current tags,
//     and the second costs one more tag change for the indexer, with the
//     readers already applied (rewritten, no new commit).
//
// A read the index never applied is never recorded (a tag change the
// indexer gave up on because its file had no document yet, or one whose
// state write failed): the next pass finds the difference and reads the
// tags once more. Errors lean towards one read too many, not one too few.
func (r *Reindexer) decide(st *pipeline.ObjectState, o ObjectInfo, req pipeline.ReindexRequest, now time.Time) action {
	// This upload's event was seen (it may still be in the pipeline), or
	// the upload is too recent for its notification to count as lost.
	seen := st != nil && st.ETag == o.ETag && st.State != pipeline.StateDeleted
	if seen && st.State == pipeline.StatePending && now.Sub(st.UpdatedAt) > r.stalePending() {
		seen = false // seen long ago and stuck: its event was lost on the way
	}
	recent := now.Sub(o.LastModified) < r.MinAge
	if req.Force || !seen && !recent {
		return reupload
	}
	if !seen || recent || st.State == pipeline.StatePending {
		return skip
	}
	if comparableDigests(st.TagsDigest, o.TagsDigest) {
		if st.TagsDigest != o.TagsDigest {
			return retag
		}
		return skip
	}
	if req.Retag {
		return retag
	}
	return skip
}

// shortDigest is enough of a tags digest to tell changes apart in a message id.
func shortDigest(d string) string {
	_, h, _ := strings.Cut(d, ":")
	return h[:min(len(h), 16)]
}

func (r *Reindexer) stalePending() time.Duration {
	if r.StalePending > 0 {
		return r.StalePending
	}
	// At least a minute: an event still in flight (a slow commit while a
	// server restarts) is not re-emitted into a second version.
	return max(10*r.MinAge, time.Minute)
}

// deleteVanished emits a delete event for every recorded object under prefix
// that the listing did not show and that is still absent when checked again
// (it may have been uploaded after the listing began). The delete's
// sequencer is newer than the recorded one and not older than now, so a
// later upload of the same key still wins.
func (r *Reindexer) deleteVanished(ctx context.Context, project, prefix string, listed map[string]bool, res *ReindexResult) error {
	var gone []pipeline.ObjectState
	err := r.States.List(ctx, project, func(st pipeline.ObjectState) error {
		if strings.HasPrefix(st.Key, prefix) && !listed[st.Key] && st.State != pipeline.StateDeleted && time.Since(st.UpdatedAt) >= r.MinAge {
			gone = append(gone, st)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, st := range gone {
		exists, err := r.Lister.Exists(ctx, r.Bucket, st.Key)
		if err != nil {
			return err
		}
		if exists {
			continue
		}
		seq := sequencerAfter(&st, time.Now())
		body, err := json.Marshal(syntheticDelete(r.Bucket, st.Key, seq))
		if err != nil {
			return err
		}
		if err := r.Pub.Publish(ctx, pipeline.ObjectEventsSubject, "reindex-delete-"+st.Key+"-"+seq, nil, body); err != nil {
			return err
		}
		res.Deleted++
	}
	return nil
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

// syntheticDelete is a removal notification in MinIO's format.
func syntheticDelete(bucket, key, sequencer string) map[string]any {
	return map[string]any{
		"EventName": "s3:ObjectRemoved:Delete",
		"Key":       bucket + "/" + key,
		"Records": []map[string]any{{
			"eventName": "s3:ObjectRemoved:Delete",
			"eventTime": time.Now().UTC().Format(time.RFC3339Nano),
			"s3": map[string]any{
				"bucket": map[string]any{"name": bucket},
				"object": map[string]any{"key": url.QueryEscape(key), "sequencer": sequencer},
			},
		}},
	}
}

// syntheticTagging is a tag change notification in MinIO's format for a
// listed object: PutTagging names the object's current tags, whatever they
// are (the ingestor reads them, not the event). Like MinIO's, it carries the
// upload's sequencer (a tag change keeps the modification time MinIO makes
// it of) and its ETag, and no version id: the latest, which was listed. Its
// request id and time set it apart from any other tag change of the object.
func syntheticTagging(bucket string, o ObjectInfo, sequencer string) map[string]any {
	now := time.Now().UTC()
	return map[string]any{
		"EventName": event.PutTagging,
		"Key":       bucket + "/" + o.Key,
		"Records": []map[string]any{{
			"eventName":        event.PutTagging,
			"eventTime":        now.Format(time.RFC3339Nano),
			"responseElements": map[string]any{"x-amz-request-id": "reindex-" + shortDigest(o.TagsDigest)},
			"s3": map[string]any{
				"bucket": map[string]any{"name": bucket},
				"object": map[string]any{"key": url.QueryEscape(o.Key), "size": o.Size, "eTag": o.ETag, "sequencer": sequencer},
			},
		}},
	}
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
