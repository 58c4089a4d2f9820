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

// Get returns the object's bytes while its ETag is still etag.
func (s Store) Get(ctx context.Context, bucket, key, etag string, maxBytes int64) ([]byte, error) {
	opts := minio.GetObjectOptions{}
	if etag != "" {
		if err := opts.SetMatchETag(etag); err != nil {
			return nil, fmt.Errorf("get %s: %w", key, err)
		}
	}
	obj, err := s.Client.GetObject(ctx, bucket, key, opts)
	if err != nil {
		return nil, classify(key, err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return nil, classify(key, err)
	}
	if maxBytes > 0 && st.Size > maxBytes {
		return nil, fmt.Errorf("get %s: %d bytes: %w", key, st.Size, ingest.ErrTooLarge)
	}
	// Read one byte past the limit so a size that grew in flight is caught too.
	data, err := io.ReadAll(io.LimitReader(obj, max(maxBytes, st.Size)+1))
	if err != nil {
		return nil, classify(key, err)
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("get %s: %w", key, ingest.ErrTooLarge)
	}
	return data, nil
}

func classify(key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch {
		case resp.StatusCode == http.StatusPreconditionFailed, resp.Code == "NoSuchKey", resp.Code == "PreconditionFailed":
			return fmt.Errorf("get %s: %s: %w", key, resp.Code, ingest.ErrGone)
		}
	}
	return fmt.Errorf("get %s: %w", key, err)
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

// List calls fn for every object under prefix.
func (s Store) List(ctx context.Context, bucket, prefix string, fn func(ingest.ObjectInfo) error) error {
	for o := range s.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("list %s/%s: %w", bucket, prefix, o.Err)
		}
		if err := fn(ingest.ObjectInfo{Key: o.Key, ETag: strings.Trim(o.ETag, `"`), Size: o.Size, LastModified: o.LastModified}); err != nil {
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
