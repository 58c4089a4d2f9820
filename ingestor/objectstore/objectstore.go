// Package objectstore reads object versions from MinIO or any S3 service.
package objectstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/ingestor/ingest"
)

// Store reads objects through minio-go.
type Store struct{ Client *minio.Client }

// Get returns the object's bytes and user metadata while its ETag is still etag.
func (s Store) Get(ctx context.Context, bucket, key, etag string, maxBytes int64) (ingest.Fetched, error) {
	opts := minio.GetObjectOptions{}
	if etag != "" {
		if err := opts.SetMatchETag(etag); err != nil {
			return ingest.Fetched{}, fmt.Errorf("get %s: %w", key, err)
		}
	}
	obj, err := s.Client.GetObject(ctx, bucket, key, opts)
	if err != nil {
		return ingest.Fetched{}, classify("get", key, err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return ingest.Fetched{}, classify("get", key, err)
	}
	if maxBytes > 0 && st.Size > maxBytes {
		return ingest.Fetched{}, fmt.Errorf("get %s: %d bytes: %w", key, st.Size, ingest.ErrTooLarge)
	}
	// Read into a buffer of the object's size (io.ReadAll's doubling would
	// hold up to twice a 200 MB scan), then one byte past it so a size that
	// grew in flight is caught too.
	data := make([]byte, st.Size)
	if _, err := io.ReadFull(obj, data); err != nil {
		return ingest.Fetched{}, classify("get", key, err)
	}
	if n, _ := obj.Read(make([]byte, 1)); n > 0 {
		return ingest.Fetched{}, fmt.Errorf("get %s: more than the %d bytes its size said: %w", key, st.Size, ingest.ErrTooLarge)
	}
	return ingest.Fetched{Data: data, Metadata: st.UserMetadata}, nil
}

// Metadata returns the user metadata of a version (the latest if versionID
// is "") while its ETag is still etag ("": any).
func (s Store) Metadata(ctx context.Context, bucket, key, versionID, etag string) (map[string]string, error) {
	opts := minio.StatObjectOptions{VersionID: versionID}
	if etag != "" {
		if err := opts.SetMatchETag(etag); err != nil {
			return nil, fmt.Errorf("stat %s: %w", key, err)
		}
	}
	st, err := s.Client.StatObject(ctx, bucket, key, opts)
	if err != nil {
		return nil, classify("stat", key, err)
	}
	return st.UserMetadata, nil
}

// Tags returns the tags of a version (the latest if versionID is "").
func (s Store) Tags(ctx context.Context, bucket, key, versionID string) (map[string]string, error) {
	t, err := s.Client.GetObjectTagging(ctx, bucket, key, minio.GetObjectTaggingOptions{VersionID: versionID})
	if err != nil {
		return nil, classify("get tags of", key, err)
	}
	return t.ToMap(), nil
}

// classify marks the errors that say the version is gone (removed,
// overwritten, or a delete marker now) with ingest.ErrGone.
func classify(op, key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.Code {
		case "NoSuchKey", "NoSuchVersion", "PreconditionFailed",
			"MethodNotAllowed": // MinIO's answer for a version that is a delete marker
			return fmt.Errorf("%s %s: %s: %w", op, key, resp.Code, ingest.ErrGone)
		}
		if resp.StatusCode == http.StatusPreconditionFailed {
			return fmt.Errorf("%s %s: %s: %w", op, key, resp.Code, ingest.ErrGone)
		}
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

// Assets stores extracted images in their own bucket (no notifications on
// it, so storing them never triggers ingestion).
type Assets struct {
	Client *minio.Client
	Bucket string
}

// PutAsset stores data under key; the key is derived from the file version,
// so a retry overwrites the same object.
func (a Assets) PutAsset(ctx context.Context, key string, data []byte, mime string) (string, error) {
	_, err := a.Client.PutObject(ctx, a.Bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{ContentType: mime})
	if err != nil {
		return "", fmt.Errorf("put asset %s/%s: %w", a.Bucket, key, err)
	}
	return a.Bucket + "/" + key, nil
}

// List calls fn for every object under prefix, with the digest of its tags
// and user metadata (ingest.TagsDigest) where the listing carries them.
//
// It lists with MinIO's metadata extension (metadata=true), which adds each
// object's tags and stored metadata to the listing at no extra request, so
// the reconcile pass compares every object's tags without reading them one
// by one. Other S3 services ignore it: an object listed without its
// metadata element gets no digest, and its tags are not compared.
func (s Store) List(ctx context.Context, bucket, prefix string, fn func(ingest.ObjectInfo) error) error {
	for o := range s.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true, WithMetadata: true}) {
		if o.Err != nil {
			return fmt.Errorf("list %s/%s: %w", bucket, prefix, o.Err)
		}
		info := ingest.ObjectInfo{Key: o.Key, ETag: strings.Trim(o.ETag, `"`), Size: o.Size, LastModified: o.LastModified}
		// UserMetadata is nil only when the listing has no metadata
		// element (MinIO always lists one, with at least content-type);
		// UserMetadataStripped is its x-amz-meta-* part, keyed as GetObject
		// and StatObject key the user metadata the ingestor reads.
		if o.UserMetadata != nil {
			info.TagsDigest = ingest.TagsDigest(o.UserTags, o.UserMetadataStripped)
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// Exists reports whether key is in bucket now.
func (s Store) Exists(ctx context.Context, bucket, key string) (bool, error) {
	_, err := s.Client.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if minio.ToErrorResponse(err).StatusCode == http.StatusNotFound {
		return false, nil
	}
	return false, fmt.Errorf("stat %s/%s: %w", bucket, key, err)
}

// Heads lists the top-level prefixes of bucket ("acme", "acme@feature").
func (s Store) Heads(ctx context.Context, bucket string) ([]string, error) {
	var heads []string
	for o := range s.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: false}) {
		if o.Err != nil {
			return nil, fmt.Errorf("list %s: %w", bucket, o.Err)
		}
		if head, ok := strings.CutSuffix(o.Key, "/"); ok {
			heads = append(heads, head)
		}
	}
	return heads, nil
}
