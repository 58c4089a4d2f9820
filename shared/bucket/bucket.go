// Package bucket sets up the watched bucket: it exists, and every create and
// remove is announced to NATS JetStream through MinIO's notification target.
package bucket

import (
	"context"
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/notification"
)

// Client returns a MinIO/S3 client for endpoint (host:port).
func Client(endpoint, accessKey, secretKey string, secure bool) (*minio.Client, error) {
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Secure: secure})
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", endpoint, err)
	}
	return c, nil
}

// NATSTargetARN is the ARN of a MinIO NATS notification target with the given id.
func NATSTargetARN(targetID, region string) notification.Arn {
	return notification.NewArn("minio", "sqs", region, targetID, "nats")
}

// Ensure creates the bucket if needed and points its create/remove events at
// every given NATS target. It is safe to run again.
func Ensure(ctx context.Context, c *minio.Client, name string, targets ...notification.Arn) error {
	if err := EnsurePlain(ctx, c, name); err != nil {
		return err
	}
	cfg := notification.Configuration{}
	for _, target := range targets {
		q := notification.NewConfig(target)
		q.AddEvents(notification.ObjectCreatedAll, notification.ObjectRemovedAll)
		cfg.AddQueue(q)
	}
	if err := c.SetBucketNotification(ctx, name, cfg); err != nil {
		return fmt.Errorf("set notification of bucket %s to %v: %w", name, targets, err)
	}
	return nil
}

// EnsurePlain creates a bucket without notifications if needed.
func EnsurePlain(ctx context.Context, c *minio.Client, name string) error {
	exists, err := c.BucketExists(ctx, name)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", name, err)
	}
	if !exists {
		if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}
