package schema

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"
)

// ChunkVectorClass holds the embeddings of chunks, one object per (chunk,
// model), each model in its own named vector. Vectors live apart from the
// Chunk objects because those are immutable (see package index): a vector
// arriving later is a new object, never an update that could make a chunk
// drop out of keyword reads. A search names exactly one vector, so results
// never mix models, and a new model is embedded side by side with the old.
const ChunkVectorClass = "ChunkVector"

func chunkVectorProperties() []*models.Property {
	return []*models.Property{
		field("chunk_id"), field("file_id"), field("file_version_id"), field("file_path"), field("branch"),
		field("model"), field("source_checksum"), integer("dimensions"), readers(), metaTokens(),
		sequence(ValidToProperty),
	}
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// VectorName is the named vector of model: readable, and unique through a
// hash suffix, within Weaviate's name rules (/[_A-Za-z][_0-9A-Za-z]*/).
func VectorName(model string) string {
	sum := sha256.Sum256([]byte(model))
	base := strings.Trim(nonName.ReplaceAllString(strings.ToLower(model), "_"), "_")
	if len(base) > 48 {
		base = base[:48]
	}
	return "m_" + base + "_" + hex.EncodeToString(sum[:4])
}

// RescoreLimit is how many of a vector search's candidates, ranked by
// their compressed distance, are ranked again from their full vectors when
// the search asks for at most that many. Weaviate's default (20) is below
// queryd's smallest vector page (30), and a search asking for more than
// the limit rescores every candidate (ef: 160 and up), each a read of its
// whole object.
const RescoreLimit = 64

// CompressedIndexConfig is the HNSW configuration of a chunk vector: 8-bit
// rotational quantization (RQ, a quarter of the memory of float32 vectors)
// and a cheaper graph build than Weaviate's defaults (efConstruction 64
// instead of 128), with a wider search (ef at least 160 instead of 100)
// that keeps the recall. strata-bench -recall-vectors measured it side by
// side with the defaults on 50k vectors, probes asking for 30 hits:
// recall@10 0.966 against 0.965, indexing 1.75x faster
// (docs/bench/compression.md). efConstruction and maxConnections are fixed
// when a named vector is created: an existing vector keeps its own; its
// rescoreLimit is brought to RescoreLimit by EnsureVectorSpace.
func CompressedIndexConfig() map[string]any {
	return map[string]any{
		"distance": "cosine", "rq": map[string]any{"enabled": true, "rescoreLimit": RescoreLimit},
		"efConstruction": 64, "maxConnections": 32, "dynamicEfMin": 160,
	}
}

func namedVector() models.VectorConfig {
	return models.VectorConfig{
		Vectorizer:        map[string]any{"none": map[string]any{}},
		VectorIndexType:   "hnsw",
		VectorIndexConfig: CompressedIndexConfig(),
	}
}

// EnsureVectorSpace makes sure ChunkVector exists with a named vector for
// model, adding the vector to an existing collection when a model is new,
// and the properties added to the collection since it was created.
func EnsureVectorSpace(ctx context.Context, c *weaviate.Client, model string, replicationFactor int) error {
	name := VectorName(model)
	exists, err := c.Schema().ClassExistenceChecker().WithClassName(ChunkVectorClass).Do(ctx)
	if err != nil {
		return fmt.Errorf("check collection %s: %w", ChunkVectorClass, err)
	}
	if !exists {
		class := &models.Class{
			Class:              ChunkVectorClass,
			Description:        "Embeddings of chunks, one named vector per model.",
			MultiTenancyConfig: &models.MultiTenancyConfig{Enabled: true},
			Properties:         chunkVectorProperties(),
			VectorConfig:       map[string]models.VectorConfig{name: namedVector()},
			ReplicationConfig:  replication(replicationFactor),
		}
		err := c.Schema().ClassCreator().WithClass(class).Do(ctx)
		if err == nil {
			return copyRangeProperties(ctx, c)
		}
		if !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("create collection %s for %s: %w", ChunkVectorClass, model, err)
		}
		// A concurrent creator won, maybe with another model: as for an existing collection.
	}
	if err := EnsureVectorProperties(ctx, c); err != nil {
		return err
	}
	return ensureNamedVector(ctx, c, name)
}

// EnsureVectorProperties adds to an existing ChunkVector collection the
// properties it lacks, as Ensure does for the other collections. It must
// run before the first write of a new property: auto-schema would create
// it from the value, and a readers property made that way is
// word-tokenized, so a filter on "eng-team" would match "eng".
func EnsureVectorProperties(ctx context.Context, c *weaviate.Client) error {
	if err := addMissingProperties(ctx, c, &models.Class{Class: ChunkVectorClass, Properties: chunkVectorProperties()}); err != nil {
		return err
	}
	return copyRangeProperties(ctx, c)
}

// namedVectorAttempts bounds how often a named vector is added again after
// another writer changed the collection's vectors in between.
const namedVectorAttempts = 8

// ensureNamedVector adds a named vector to ChunkVector. An update sends the
// whole collection, so writers adding models at once race: Weaviate refuses
// an update that lacks a vector another writer just added ("missing config
// for vector"), and may accept it and drop the other's (seen with six at
// once, TestModelsAddedConcurrently). So every update is read back, and
// made again until the vector is there.
func ensureNamedVector(ctx context.Context, c *weaviate.Client, name string) error {
	var lastErr error
	for range namedVectorAttempts {
		have, err := c.Schema().ClassGetter().WithClassName(ChunkVectorClass).Do(ctx)
		if err != nil {
			return fmt.Errorf("read collection %s: %w", ChunkVectorClass, err)
		}
		if vc, ok := have.VectorConfig[name]; ok {
			rq, outdated := outdatedRescore(vc.VectorIndexConfig)
			if !outdated {
				return nil
			}
			// Made before RescoreLimit: the limit is one a live index takes.
			rq["rescoreLimit"] = RescoreLimit
			err = c.Schema().ClassUpdater().WithClass(have).Do(ctx)
			if err != nil && !strings.Contains(err.Error(), "missing config for vector") {
				return fmt.Errorf("set rescoreLimit of %s in %s: %w", name, ChunkVectorClass, err)
			}
			lastErr = err
			continue
		}
		if have.VectorConfig == nil {
			have.VectorConfig = map[string]models.VectorConfig{}
		}
		have.VectorConfig[name] = namedVector()
		err = c.Schema().ClassUpdater().WithClass(have).Do(ctx)
		if err != nil && !strings.Contains(err.Error(), "missing config for vector") {
			return fmt.Errorf("add named vector %s to %s: %w", name, ChunkVectorClass, err)
		}
		lastErr = err
	}
	return fmt.Errorf("add named vector %s to %s: still missing after %d updates (others kept changing it): %v",
		name, ChunkVectorClass, namedVectorAttempts, lastErr)
}

// outdatedRescore returns the RQ settings of a named vector's index config
// as Weaviate reports it, and whether they are RQ's with another
// rescoreLimit than RescoreLimit (uncompressed vectors rescore nothing).
func outdatedRescore(indexConfig any) (map[string]any, bool) {
	cfg, _ := indexConfig.(map[string]any)
	rq, _ := cfg["rq"].(map[string]any)
	if rq == nil || rq["enabled"] != true {
		return rq, false
	}
	return rq, fmt.Sprint(rq["rescoreLimit"]) != fmt.Sprint(RescoreLimit)
}

// HasVectorSpace reports whether vectors of model have been written at all.
func HasVectorSpace(ctx context.Context, c *weaviate.Client, model string) (bool, error) {
	have, err := existing(ctx, c, ChunkVectorClass)
	if err != nil || have == nil {
		return false, err
	}
	_, ok := have.VectorConfig[VectorName(model)]
	return ok, nil
}
