package localstack

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
)

// Bucket is the watched bucket of the local stack; AssetsBucket holds images
// extracted from documents.
const (
	Bucket       = "strata"
	AssetsBucket = "strata-assets"
)

// ensureStreams creates the JetStream streams with the given replicas. It
// runs before MinIO starts (testservers.StackOptions.BeforeMinIO), so that
// MinIO's first bucket event has a stream to land in.
func ensureStreams(ctx context.Context, natsURL string, replicas int, progress io.Writer) error {
	fmt.Fprintln(progress, "creating JetStream streams")
	nc, js, err := pipeline.Connect(natsURL, "strata-local", nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	// A new cluster elects its JetStream leader shortly after its nodes answer.
	for attempt := 0; ; attempt++ {
		err := pipeline.EnsureStreams(ctx, js, replicas)
		if err == nil || attempt == 60 {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ensureBucketsAndSchema creates the watched bucket with its notifications
// to NATS (durable and live targets), the assets bucket, and the Weaviate
// schema with the given replication factor.
func ensureBucketsAndSchema(ctx context.Context, env Env, srv *testservers.Stack, replication int, progress io.Writer) error {
	fmt.Fprintln(progress, "creating bucket, bucket notification and Weaviate schema")
	mc, err := bucket.Client(env.S3Endpoint, env.S3AccessKey, env.S3SecretKey, false)
	if err != nil {
		return err
	}
	if err := bucket.Ensure(ctx, mc, Bucket, bucket.NATSTargetARN(testservers.MinIONotifyID, ""), bucket.NATSTargetARN(testservers.MinIOLiveNotifyID, "")); err != nil {
		return err
	}
	if err := bucket.EnsurePlain(ctx, mc, AssetsBucket); err != nil {
		return err
	}
	wv, err := schema.NewClient(srv.WeaviateHost, srv.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		return err
	}
	return schema.EnsureReplicated(ctx, wv, replication)
}
