package testservers

import (
	"fmt"
	"path/filepath"
)

// Where each node of a multi-node stack keeps its data under
// Options.DataDir: one directory a node, so a harness can put each on a
// disk of its own (strata-chaos's full-disk fault mounts a small tmpfs on
// each before the stack starts).

// NATSNodeName is node i's (0 is the first) server_name in a NATS cluster.
func NATSNodeName(i int) string { return fmt.Sprintf("strata-%d", i+1) }

// NATSNodeDir holds node i's configuration and JetStream store.
func NATSNodeDir(dataDir string, i int) string {
	return filepath.Join(dataDir, "nats", NATSNodeName(i))
}

// MinIONodeDir is node i's drive in a distributed MinIO.
func MinIONodeDir(dataDir string, i int) string {
	return filepath.Join(dataDir, "minio", fmt.Sprintf("node%d", i+1))
}

// WeaviateNodeDir is node i's PERSISTENCE_DATA_PATH in a multi-node Weaviate.
func WeaviateNodeDir(dataDir string, i int) string {
	return filepath.Join(dataDir, "weaviate", fmt.Sprintf("node%d", i+1))
}
