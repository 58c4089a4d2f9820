package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/pipeline"
)

// Where a document's groups came from (pipeline.Access.Source).
const (
	SourceTag      = "tag"
	SourceMetadata = "metadata"
	// SourceTaggingMetadata is user metadata named x-amz-tagging: the tags a
	// client meant to set with the upload, stored as metadata instead (as
	// minio-js's putObject does with an x-amz-tagging header).
	SourceTaggingMetadata = "x-amz-tagging metadata"
)

// taggingHeader is the S3 header that sets tags with a PUT.
const taggingHeader = "x-amz-tagging"

// accessFrom is who may read a document, from its object's tags and user
// metadata read at readAt: the strata-groups tag, else strata-groups in
// user metadata named x-amz-tagging (tags a client meant to set with the
// upload), else the strata-groups metadata, else no groups (every key of
// the project) unless a near miss of the name says groups were meant. A value that does not
// parse is kept as the error, which makes the document readable by admins
// only: it is still indexed, so the mistake shows on it rather than hiding it.
func accessFrom(tags, metadata map[string]string, readAt time.Time) pipeline.Access {
	acc := pipeline.Access{ReadAt: readAt}
	tagging, taggingErr := taggingMetadata(metadata)
	var err error
	switch {
	case present(tags):
		acc.Source = SourceTag
		acc.Groups, err = groups(tags, access.ParseTag)
	case taggingErr != nil:
		acc.Source, err = SourceTaggingMetadata, taggingErr
	case present(tagging):
		acc.Source = SourceTaggingMetadata
		acc.Groups, err = groups(tagging, access.ParseTag)
	case present(metadata):
		acc.Source = SourceMetadata
		acc.Groups, err = groups(metadata, access.ParseMetadata)
	default:
		// A near miss of the name is a slip, never a document open to
		// every key: it fails closed until it is spelt right.
		for _, c := range []struct {
			source string
			m      map[string]string
		}{{SourceTag, tags}, {SourceTaggingMetadata, tagging}, {SourceMetadata, metadata}} {
			if k, ok := nearMiss(c.m); ok {
				acc.Source, err = c.source, fmt.Errorf("%q is not %s: a misspelt name names no group, so only admins may read the document until it is spelt %s", k, access.Name, access.Name)
				break
			}
		}
	}
	if err != nil {
		acc.Groups, acc.Error = nil, acc.Source+" "+err.Error()
	}
	return acc
}

// taggingMetadata reads user metadata named x-amz-tagging as the tag query
// string it was meant to be ("strata-groups=hr&team=x"); nil without it.
func taggingMetadata(metadata map[string]string) (map[string]string, error) {
	var value string
	found := false
	for k, v := range metadata {
		if strings.EqualFold(k, taggingHeader) {
			value, found = v, true
		}
	}
	if !found {
		return nil, nil
	}
	q, err := url.ParseQuery(value)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a tag query string (key=value&key=value): %v", taggingHeader, value, err)
	}
	out := make(map[string]string, len(q))
	for k, vs := range q {
		if len(vs) > 1 {
			return nil, fmt.Errorf("%s names %s %d times", taggingHeader, k, len(vs))
		}
		out[k] = vs[0]
	}
	return out, nil
}

// nearMiss finds a key that is strata-groups misspelt: the same letters
// whatever the case, separators (-, _, ., space) and a final s.
func nearMiss(m map[string]string) (string, bool) {
	want := squash(access.Name)
	for k := range m {
		if !strings.EqualFold(k, access.Name) && squash(k) == want {
			return k, true
		}
	}
	return "", false
}

func squash(k string) string {
	k = strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(k)))
	return strings.TrimSuffix(k, "s")
}

// present reports whether m names strata-groups, even with an empty value:
// a blanked value is an error, not a document open to everyone.
func present(m map[string]string) bool {
	for k := range m {
		if strings.EqualFold(k, access.Name) {
			return true
		}
	}
	return false
}

// groups parses the strata-groups value of m. Keys match whatever their
// case: metadata keys are HTTP headers (MinIO returns "Strata-Groups"), and a
// tag spelled in another case was surely meant as the groups, so ignoring it
// would open the document to everyone. Two spellings with different values
// are an error rather than a guess.
func groups(m map[string]string, parse func(string) ([]string, error)) ([]string, error) {
	var value string
	n := 0
	for k, v := range m {
		if !strings.EqualFold(k, access.Name) {
			continue
		}
		if n > 0 && v != value {
			return nil, fmt.Errorf("%s is given twice, in different cases, with different values", access.Name)
		}
		value, n = v, n+1
	}
	return parse(value)
}

// retag publishes an object's groups, tags and user metadata after its tags
// changed, without extracting or embedding anything again: the indexer
// merges them with each version's own file metadata.
func (in *Ingestor) retag(ctx context.Context, r event.Record, obj pipeline.Object, fileID string, log *slog.Logger) error {
	got, err := in.currentProps(ctx, r)
	switch {
	case errors.Is(err, ErrGone):
		log.Info("skipping a tag change of an object removed or overwritten since", "err", err)
		return nil
	case err != nil:
		return err
	}
	acc := got.access
	body, err := json.Marshal(pipeline.TagsChanged{Object: obj, FileID: fileID, Access: acc, Tags: got.tags, UserMetadata: got.userMetadata})
	if err != nil {
		return fmt.Errorf("encode groups of %s: %w", r.Key, err)
	}
	if err := in.pub.Publish(ctx, pipeline.ChunksSubjectFor(obj.Project), accessMsgID(fileID, r),
		map[string]string{pipeline.HeaderKind: pipeline.KindTagsChanged}, body); err != nil {
		return fmt.Errorf("publish groups of %s: %w", r.Key, err)
	}
	log.Info("tag change published", "groups", acc.Groups, "source", acc.Source, "error", acc.Error, "tags", len(got.tags))
	return nil
}

// currentProps reads who may read the version a tag change names (the
// latest if none), and its tags and user metadata, as they are now, not as
// the event says: of two tag changes handled out of order, the later read,
// which the indexer keeps, then holds the newer tags.
func (in *Ingestor) currentProps(ctx context.Context, r event.Record) (objectProps, error) {
	readAt := in.now().UTC()
	tags, err := in.store.Tags(ctx, r.Bucket, r.Key, r.VersionID)
	if err != nil {
		return objectProps{}, fmt.Errorf("read tags of %s: %w", r.Key, err)
	}
	// The ETag check turns an overwrite since away: its own event reads its
	// groups, and these tags may be the overwrite's, not this metadata's.
	meta, err := in.store.Metadata(ctx, r.Bucket, r.Key, r.VersionID, r.ETag)
	if err != nil {
		return objectProps{}, fmt.Errorf("read metadata of %s: %w", r.Key, err)
	}
	return propsOf(tags, meta, readAt), nil
}

// accessMsgID dedupes the copies of one tag change event (MinIO's live and
// durable targets send the same event), not two tag changes of one version:
// those share the sequencer (MinIO's is the object's modification time,
// which tagging keeps) but not the request or the time.
func accessMsgID(fileID string, r event.Record) string {
	return fmt.Sprintf("access-%s-%s-%s-%d", fileID, r.Sequencer, r.RequestID, r.Time.UnixMilli())
}
