// Package apikeys is the contract of the API keys made while queryd runs:
// the NATS KV bucket that holds them and the record stored under each key's
// name. `strata keys` (deploy/cmd/strata) writes and purges the records;
// every queryd started with -nats-url watches the bucket (queryd/auth,
// KeyStore) and authenticates with what it holds.
package apikeys

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the NATS KV bucket of the keys: one Record per key name. It
// holds each key's SHA-256, never the key, so reading the bucket (nats kv
// get) yields no usable key.
const Bucket = "strata_keys"

// Record is a key's record in Bucket, stored as JSON under the key's name.
type Record struct {
	Name      string    `json:"name"`
	Hash      string    `json:"hash"`     // Hash of the key: hex SHA-256
	Projects  []string  `json:"projects"` // project names, or "*" alone: every project
	Groups    []string  `json:"groups"`   // group names, "*" alone (every document), or none
	CreatedAt time.Time `json:"created_at"`
}

// Hash is how a key is stored, and how queryd finds it: the lower-case hex
// SHA-256 of its text.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// BucketConfig is Bucket's configuration with replicas: whoever needs the
// bucket first (queryd or strata keys create) creates it so. History 1: a
// revoked key's record is gone, not kept as history.
func BucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: Bucket, Description: "Strata: API keys by name (SHA-256 only)",
		History: 1, Storage: jetstream.FileStorage, Replicas: replicas}
}
