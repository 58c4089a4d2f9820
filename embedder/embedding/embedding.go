// Package embedding is the embedder stage: for each file version on the
// chunks stream it embeds the chunks with the configured provider and
// publishes the vectors for the indexer. Without a provider it passes file
// versions by, and their chunks stay at embedding status "missing".
package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/embedder/engine"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// Publisher publishes a message once per msgID.
type Publisher interface {
	Publish(ctx context.Context, subject, msgID string, headers map[string]string, data []byte) error
}

// Cache remembers vectors by (model, chunk content checksum).
type Cache interface {
	Get(ctx context.Context, model, checksum string) ([]float32, bool, error)
	Put(ctx context.Context, model, checksum string, v []float32) error
}

// Embedder embeds file versions.
type Embedder struct {
	provider  engine.Provider // nil: no vectors
	pub       Publisher
	cache     Cache // nil: no cache
	batchSize int
	log       *slog.Logger
}

// New returns an Embedder; provider and cache may be nil.
func New(provider engine.Provider, pub Publisher, cache Cache, batchSize int, log *slog.Logger) *Embedder {
	if batchSize < 1 {
		batchSize = 32
	}
	return &Embedder{provider: provider, pub: pub, cache: cache, batchSize: batchSize, log: log}
}

// Handle processes one message of the chunks stream.
func (e *Embedder) Handle(ctx context.Context, msg jetstream.Msg) error {
	if msg.Headers().Get(pipeline.HeaderKind) != pipeline.KindFileVersion {
		return nil // deletes carry nothing to embed
	}
	var fv pipeline.FileVersion
	if err := json.Unmarshal(msg.Data(), &fv); err != nil {
		return worker.Permanent(fmt.Errorf("decode file version: %w", err))
	}
	return e.EmbedFileVersion(ctx, fv)
}

// EmbedFileVersion embeds the chunks of fv and of each of its members (a
// container's files, documents of their own) and publishes their vectors,
// one message a file version.
func (e *Embedder) EmbedFileVersion(ctx context.Context, fv pipeline.FileVersion) error {
	for i, v := range fv.Each() {
		err := e.embedOne(ctx, v)
		if i > 0 && errors.Is(err, nats.ErrMaxPayload) {
			// One member's vectors too big for a message cost that member
			// its vector search, not its container and the members after it.
			e.log.Warn("vectors over the message limit: the member is not found by vector search", "project", v.Object.Project,
				"path", v.Object.Path, "err", err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// embedOne embeds fv's chunks and publishes their vectors. Chunks whose
// content (checksum) was embedded with this model before come from the
// cache; only the others go to the provider, in batches.
func (e *Embedder) embedOne(ctx context.Context, fv pipeline.FileVersion) error {
	if e.provider == nil || len(fv.Chunks) == 0 {
		return nil
	}
	model, dims := e.provider.Model(), e.provider.Dimensions()
	out := pipeline.Vectors{Object: fv.Object, Project: fv.Object.Project, FileID: fv.FileID, FileVersionID: fv.FileVersionID,
		Model: model, Dimensions: dims, Chunks: make([]pipeline.ChunkVector, len(fv.Chunks))}
	var todo []int // indexes of chunks to embed, one per distinct checksum
	first := map[string]int{}
	for i, c := range fv.Chunks {
		out.Chunks[i] = pipeline.ChunkVector{ChunkID: c.ID, SourceChecksum: c.SourceChecksum}
		if _, seen := first[c.SourceChecksum]; seen && c.SourceChecksum != "" {
			continue // same content as an earlier chunk: copied below
		}
		first[c.SourceChecksum] = i
		if v := e.cached(ctx, model, c.SourceChecksum, dims); v != nil {
			out.Chunks[i].Vector = v
			continue
		}
		todo = append(todo, i)
	}
	embedded := 0
	for start := 0; start < len(todo); start += e.batchSize {
		batch := todo[start:min(start+e.batchSize, len(todo))]
		texts := make([]string, len(batch))
		for k, i := range batch {
			texts[k] = fv.Chunks[i].Content
		}
		vecs, err := e.provider.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed %s chunks %d..%d with %s: %w", fv.FileVersionID, fv.Chunks[batch[0]].Index, fv.Chunks[batch[len(batch)-1]].Index, model, err)
		}
		if len(vecs) != len(batch) {
			return fmt.Errorf("embed %s: provider %s returned %d vectors for %d texts", fv.FileVersionID, model, len(vecs), len(batch))
		}
		for k, i := range batch {
			if len(vecs[k]) != dims {
				return fmt.Errorf("embed %s chunk %d: %d dimensions, model %s has %d", fv.FileVersionID, fv.Chunks[i].Index, len(vecs[k]), model, dims)
			}
			out.Chunks[i].Vector = vecs[k]
			if e.cache != nil && fv.Chunks[i].SourceChecksum != "" {
				if err := e.cache.Put(ctx, model, fv.Chunks[i].SourceChecksum, vecs[k]); err != nil {
					e.log.Warn("vector cache", "err", err) // the cache is an optimisation
				}
			}
		}
		embedded += len(batch)
	}
	for i, c := range fv.Chunks {
		if out.Chunks[i].Vector == nil {
			out.Chunks[i].Vector = out.Chunks[first[c.SourceChecksum]].Vector
		}
	}
	body, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode vectors of %s: %w", fv.FileVersionID, err)
	}
	if err := e.pub.Publish(ctx, pipeline.EmbeddingsSubjectFor(fv.Object.Project), fv.FileVersionID+"-"+model, nil, body); err != nil {
		if errors.Is(err, nats.ErrMaxPayload) {
			// No retry makes it smaller: dead-letter it with the reason, so
			// it holds nothing else up. The file stays keyword-searchable.
			return worker.Permanent(fmt.Errorf("vectors of %s (%d chunks, %d bytes) are over the NATS message limit: the file is not found by vector search: %w",
				fv.Object.Path, len(out.Chunks), len(body), err))
		}
		return err
	}
	e.log.Info("vectors published", "project", fv.Object.Project, "path", fv.Object.Path, "file_version_id", fv.FileVersionID,
		"model", model, "chunks", len(out.Chunks), "embedded", embedded, "cached", len(out.Chunks)-embedded)
	return nil
}

// cached returns the cached vector of checksum, or nil.
func (e *Embedder) cached(ctx context.Context, model, checksum string, dims int) []float32 {
	if e.cache == nil || checksum == "" {
		return nil
	}
	v, ok, err := e.cache.Get(ctx, model, checksum)
	if err != nil {
		e.log.Warn("vector cache", "err", err)
		return nil
	}
	if !ok || len(v) != dims {
		return nil
	}
	return v
}
