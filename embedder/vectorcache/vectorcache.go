// Package vectorcache remembers embeddings by (model, chunk content
// checksum) in a NATS KV bucket, so re-uploading a file with one changed
// paragraph re-embeds only that paragraph's chunks, and every embedder
// replica shares what the others computed.
package vectorcache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/schema"
)

// Bucket is the KV bucket's name.
const Bucket = "strata_embedding_cache"

// KV is a vector cache in NATS KV.
type KV struct{ kv jetstream.KeyValue }

// Open creates or opens the cache bucket, bounded to maxBytes (oldest
// entries are not evicted: once full, new vectors are simply not cached).
func Open(ctx context.Context, js jetstream.JetStream, replicas int, maxBytes int64) (*KV, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: Bucket, Description: "Strata: embeddings by model and chunk content checksum",
		History: 1, Storage: jetstream.FileStorage, Replicas: replicas, MaxBytes: maxBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", Bucket, err)
	}
	return &KV{kv: kv}, nil
}

var checksumRE = regexp.MustCompile(`^[0-9a-f]{16,128}$`)

func key(model, checksum string) (string, error) {
	if !checksumRE.MatchString(checksum) {
		return "", fmt.Errorf("vector cache: checksum %q is not lowercase hex", checksum)
	}
	return schema.VectorName(model) + "." + checksum, nil
}

// Get returns the cached vector, or ok=false.
func (c *KV) Get(ctx context.Context, model, checksum string) ([]float32, bool, error) {
	k, err := key(model, checksum)
	if err != nil {
		return nil, false, err
	}
	e, err := c.kv.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("vector cache get %s: %w", k, err)
	}
	v, err := Decode(e.Value())
	if err != nil {
		return nil, false, fmt.Errorf("vector cache %s: %w", k, err)
	}
	return v, true, nil
}

// Put stores a vector.
func (c *KV) Put(ctx context.Context, model, checksum string, v []float32) error {
	k, err := key(model, checksum)
	if err != nil {
		return err
	}
	if _, err := c.kv.Put(ctx, k, Encode(v)); err != nil {
		return fmt.Errorf("vector cache put %s: %w", k, err)
	}
	return nil
}

// Encode is a vector as the cache stores it: its float32s, little-endian.
// What else carries a vector as bytes (a NATS reply) uses it too.
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// Decode is the vector Encode made b of.
func Decode(b []byte) ([]float32, error) {
	if len(b)%4 != 0 || len(b) == 0 {
		return nil, fmt.Errorf("%d bytes are no encoded vector", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
