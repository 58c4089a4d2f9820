// Package embedding is the embedder stage: for each file version on the
// chunks stream it embeds the chunks with the configured provider and
// publishes the vectors for the indexer. Without a provider it passes file
// versions by, and their chunks stay at embedding status "missing".
package embedding

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/embed"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// Publisher publishes a message once per msgID.
type Publisher interface {
	Publish(ctx context.Context, subject, msgID string, headers map[string]string, data []byte) error
}

// Embedder embeds file versions.
type Embedder struct {
	provider  embed.Provider // nil: no vectors
	pub       Publisher
	batchSize int
	log       *slog.Logger
}

// New returns an Embedder; provider may be nil.
func New(provider embed.Provider, pub Publisher, batchSize int, log *slog.Logger) *Embedder {
	if batchSize < 1 {
		batchSize = 32
	}
	return &Embedder{provider: provider, pub: pub, batchSize: batchSize, log: log}
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

// EmbedFileVersion embeds fv's chunks and publishes their vectors.
func (e *Embedder) EmbedFileVersion(ctx context.Context, fv pipeline.FileVersion) error {
	if e.provider == nil || len(fv.Chunks) == 0 {
		return nil
	}
	out := pipeline.Vectors{Project: fv.Object.Project, FileID: fv.FileID, FileVersionID: fv.FileVersionID,
		Model: e.provider.Model(), Dimensions: e.provider.Dimensions()}
	for start := 0; start < len(fv.Chunks); start += e.batchSize {
		batch := fv.Chunks[start:min(start+e.batchSize, len(fv.Chunks))]
		texts := make([]string, len(batch))
		for i, c := range batch {
			texts[i] = c.Content
		}
		vecs, err := e.provider.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed %s chunks %d..%d with %s: %w", fv.FileVersionID, start, start+len(batch)-1, e.provider.Model(), err)
		}
		if len(vecs) != len(batch) {
			return fmt.Errorf("embed %s: provider %s returned %d vectors for %d texts", fv.FileVersionID, e.provider.Model(), len(vecs), len(batch))
		}
		for i, c := range batch {
			if len(vecs[i]) != out.Dimensions {
				return fmt.Errorf("embed %s chunk %d: %d dimensions, model %s has %d", fv.FileVersionID, c.Index, len(vecs[i]), out.Model, out.Dimensions)
			}
			out.Chunks = append(out.Chunks, pipeline.ChunkVector{ChunkID: c.ID, SourceChecksum: c.SourceChecksum, Vector: vecs[i]})
		}
	}
	body, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode vectors of %s: %w", fv.FileVersionID, err)
	}
	if err := e.pub.Publish(ctx, pipeline.EmbeddingsSubjectFor(fv.Object.Project), fv.FileVersionID+"-"+out.Model, nil, body); err != nil {
		return err
	}
	e.log.Info("vectors published", "project", fv.Object.Project, "path", fv.Object.Path, "file_version_id", fv.FileVersionID,
		"model", out.Model, "chunks", len(out.Chunks))
	return nil
}
