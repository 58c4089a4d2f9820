// Command indexer consumes file versions and deletes from the chunks stream
// and writes them into Weaviate.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"

	"github.com/strata-kb/strata/indexer/index"
	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/freshness"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/service"
	"github.com/strata-kb/strata/shared/stage"
)

// Config is the indexer's configuration.
type Config struct {
	config.Common
	WeaviateHost   string
	WeaviateGRPC   string
	WeaviateAPIKey string
	Concurrency    int
	MaxAckPending  int
	GCInterval     time.Duration
	GCRetention    time.Duration
	CommitLease    time.Duration
	Replication    int
	WriteTimeout   time.Duration // one attempt of a batch or merge (schema.ClientOptions)
	ReadTimeout    time.Duration // one read, every attempt of it
}

// RegisterFlags registers the indexer's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Common.RegisterFlags(fs, "127.0.0.1:8083")
	fs.StringVar(&c.WeaviateHost, "weaviate-host", "127.0.0.1:8080", config.WeaviateHostUsage)
	fs.StringVar(&c.WeaviateGRPC, "weaviate-grpc", "", "Weaviate gRPC host:port (optional)")
	fs.StringVar(&c.WeaviateAPIKey, "weaviate-api-key", "", "Weaviate API key with write access")
	fs.IntVar(&c.Concurrency, "concurrency", 16, "messages handled at once; file versions of one project waiting together are committed together")
	fs.IntVar(&c.MaxAckPending, "max-ack-pending", 64, "unacknowledged messages the consumer may hold")
	fs.DurationVar(&c.GCInterval, "gc-interval", time.Hour, "how often superseded versions are garbage-collected (0 = never)")
	fs.DurationVar(&c.GCRetention, "gc-retention", 7*24*time.Hour, "superseded versions no release pins are kept this long")
	fs.IntVar(&c.Replication, "weaviate-replication-factor", 1, "copies of every shard in new collections (multi-node Weaviate; 1 on a single node)")
	fs.DurationVar(&c.CommitLease, "commit-lease", 30*time.Second, "how long a crashed replica's hold on a project's commits lasts (renewed every third of it while committing)")
	fs.DurationVar(&c.WriteTimeout, "weaviate-write-timeout", schema.DefaultWriteTimeout, "deadline of one attempt of a Weaviate write (a batch request, a merge); a write held past it, or refused because Weaviate lost its Raft leader, is sent again to the next node with twice the time (both are idempotent upserts and merges)")
	fs.DurationVar(&c.ReadTimeout, "weaviate-read-timeout", schema.DefaultReadTimeout, "deadline of one Weaviate read, every hedge and retry of it across the nodes")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p config.Problems
	c.Common.Validate(&p)
	config.ValidateWeaviateHosts(&p, "weaviate-host", c.WeaviateHost)
	if c.Concurrency < 1 || c.Concurrency > 256 {
		p.Addf("concurrency", "must be 1..256, got %d", c.Concurrency)
	}
	if c.Replication < 1 || c.Replication > 9 {
		p.Addf("weaviate-replication-factor", "must be 1..9, got %d", c.Replication)
	}
	if c.CommitLease < 3*time.Second {
		p.Addf("commit-lease", "must be at least 3s, got %v", c.CommitLease)
	}
	if c.GCInterval < 0 || c.GCRetention < 0 {
		p.Addf("gc-interval", "gc interval and retention must not be negative")
	}
	if c.WriteTimeout < 100*time.Millisecond || c.WriteTimeout > 10*time.Minute {
		p.Addf("weaviate-write-timeout", "must be 100ms..10m, got %s", c.WriteTimeout)
	}
	if c.ReadTimeout < 100*time.Millisecond || c.ReadTimeout > 10*time.Minute {
		p.Addf("weaviate-read-timeout", "must be 100ms..10m, got %s", c.ReadTimeout)
	}
	if c.MaxAckPending < c.Concurrency {
		p.Addf("max-ack-pending", "must be >= concurrency (%d), got %d", c.Concurrency, c.MaxAckPending)
	}
	return p.Err()
}

func main() { service.Main("indexer", run) }

// run starts the indexer with the command line args and serves until ctx
// ends: service.Start parses and checks the configuration, then calls serve.
func run(ctx context.Context, args []string) error {
	return service.Start(ctx, "indexer", args, new(Config), serve)
}

// serve indexes file versions and vectors until ctx ends, then drains NATS.
func serve(ctx context.Context, cfg *Config, deps service.Deps) error {
	log := deps.Log
	wv, err := schema.NewClientWith(cfg.WeaviateHost, cfg.WeaviateGRPC, cfg.WeaviateAPIKey,
		schema.ClientOptions{WriteTimeout: cfg.WriteTimeout, ReadTimeout: cfg.ReadTimeout})
	if err != nil {
		return err
	}
	if err := schema.EnsureReplicated(ctx, wv, cfg.Replication); err != nil {
		return err
	}
	st, err := stage.Connect(stage.Config{Name: "indexer", Common: &cfg.Common, Concurrency: cfg.Concurrency, MaxAckPending: cfg.MaxAckPending,
		Running: func(httpAddr string) {
			log.Info("indexer running", "nats", cfg.NATSURL, "weaviate", cfg.WeaviateHost, "http", httpAddr)
		}}, deps)
	if err != nil {
		return err
	}
	defer st.Close()
	js := st.JS
	chunks := &stage.Loop{Metric: "indexer", Worker: "indexer", Stream: pipeline.ChunksStream, Consumer: pipeline.IndexerChunksConsumer}
	if err := st.Consume(ctx, chunks); err != nil {
		return err
	}
	states, err := freshness.Open(ctx, js, cfg.KVReplicas)
	if err != nil {
		return err
	}
	seqs, err := index.OpenSequences(ctx, js, cfg.KVReplicas)
	if err != nil {
		return err
	}
	marks, err := index.OpenEmbeddedMarks(ctx, js, cfg.KVReplicas)
	if err != nil {
		return err
	}
	relabels, err := index.OpenRelabels(ctx, js, cfg.KVReplicas)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	leases, err := index.OpenLeases(ctx, js, cfg.KVReplicas, fmt.Sprintf("%s-%d", host, os.Getpid()), cfg.CommitLease)
	if err != nil {
		return err
	}
	writer := index.New(index.Config{
		Weaviate: wv, Sequences: seqs, States: states, Log: log,
		Replication:   cfg.Replication,
		Freshness:     deps.Metrics.NewFreshness(),
		CommitLocks:   leases, // replicas commit one project one at a time
		EmbeddedMarks: marks,
		Relabels:      relabels,
	})
	stopReleases, err := writer.ServeReleases(ctx, st.NC)
	if err != nil {
		return err
	}
	defer stopReleases()
	if cfg.GCInterval > 0 {
		go collectGarbage(ctx, wv, writer, cfg.GCInterval, cfg.GCRetention, log)
	}
	// Vectors are applied by a second loop of their own, so a backlog of
	// embeddings never delays keyword indexing (and the other way round).
	vectors := &stage.Loop{Metric: "indexer_vectors", Worker: "indexer-vectors", Stream: pipeline.EmbeddingsStream, Consumer: pipeline.IndexerVectorsConsumer}
	if err := st.Consume(ctx, vectors); err != nil {
		return err
	}
	chunks.Handle, vectors.Handle = writer.HandleChunks, writer.HandleVectors
	return st.Run(ctx, chunks, vectors)
}

// collectGarbage removes superseded, unpinned versions of every project now and then.
func collectGarbage(ctx context.Context, wv *weaviate.Client, w *index.Writer, every, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		projects, err := schema.Projects(ctx, wv)
		if err != nil {
			log.Warn("gc: list projects", "err", err)
			continue
		}
		for _, p := range projects {
			n, err := w.CollectGarbage(ctx, p, retention)
			if err != nil {
				log.Warn("gc", "project", p, "err", err)
				continue
			}
			if n > 0 {
				log.Info("gc", "project", p, "deleted", n)
			}
		}
	}
}
