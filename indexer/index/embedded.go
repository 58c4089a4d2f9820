package index

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
)

// EmbeddedMarks records that a file version's vectors of a model are written
// (pipeline.EmbeddedBucket), so readers count embedded chunks without a scan.
type EmbeddedMarks interface {
	Mark(ctx context.Context, m pipeline.EmbeddedMark) error
}

// KVEmbeddedMarks keeps the marks in NATS KV.
type KVEmbeddedMarks struct{ kv jetstream.KeyValue }

// OpenEmbeddedMarks creates or opens the bucket.
func OpenEmbeddedMarks(ctx context.Context, js jetstream.JetStream, replicas int) (*KVEmbeddedMarks, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pipeline.EmbeddedBucket,
		Description: "Strata: file versions whose vectors of a model are written", History: 1, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", pipeline.EmbeddedBucket, err)
	}
	return &KVEmbeddedMarks{kv: kv}, nil
}

// Mark implements EmbeddedMarks. A replay puts the same value again.
func (k *KVEmbeddedMarks) Mark(ctx context.Context, m pipeline.EmbeddedMark) error {
	val, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := k.kv.Put(ctx, pipeline.EmbeddedKey(m.Project, m.FileVersionID, m.Model), val); err != nil {
		return fmt.Errorf("mark %s embedded with %s: %w", m.FileVersionID, m.Model, err)
	}
	return nil
}
