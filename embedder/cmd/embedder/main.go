// Command embedder consumes file versions from the chunks stream, embeds their
// chunks with the configured provider and publishes the vectors.
package main

import (
	"context"
	"errors"
	"flag"

	"github.com/strata-kb/strata/embedder/embedding"
	"github.com/strata-kb/strata/embedder/engine"
	"github.com/strata-kb/strata/embedder/vectorcache"
	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/service"
	"github.com/strata-kb/strata/shared/stage"
)

// Config is the embedder's configuration.
type Config struct {
	config.Common
	Embedding     engine.Config
	CacheBytes    int64
	BatchSize     int
	Concurrency   int
	MaxAckPending int
	// MaxMessageBytes is the largest vectors message sent inline (0: the
	// server's max_payload); larger ones go by reference.
	MaxMessageBytes int
}

// RegisterFlags registers the embedder's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Common.RegisterFlags(fs, "127.0.0.1:8082")
	c.Embedding.RegisterFlags(fs)
	fs.Int64Var(&c.CacheBytes, "cache-bytes", 1<<30, "size of the vector cache (NATS KV strata_embedding_cache); 0 disables it")
	fs.IntVar(&c.BatchSize, "batch-size", 32, "texts per provider call")
	fs.IntVar(&c.Concurrency, "concurrency", 2, "file versions embedded at once")
	fs.IntVar(&c.MaxAckPending, "max-ack-pending", 32, "unacknowledged messages the consumer may hold")
	fs.IntVar(&c.MaxMessageBytes, "max-message-bytes", 0, "largest vectors sent in their message; larger ones go by reference, through the NATS object store "+pipeline.BodiesBucket+" (0: what the server's max_payload allows)")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p config.Problems
	c.Common.Validate(&p)
	c.Embedding.Validate(&p)
	if c.CacheBytes < 0 {
		p.Addf("cache-bytes", "must be 0 or more")
	}
	if c.BatchSize < 1 || c.BatchSize > 2048 {
		p.Addf("batch-size", "must be 1..2048, got %d", c.BatchSize)
	}
	if c.Concurrency < 1 || c.Concurrency > 64 {
		p.Addf("concurrency", "must be 1..64, got %d", c.Concurrency)
	}
	if c.MaxMessageBytes < 0 {
		p.Addf("max-message-bytes", "must be 0 or more, got %d", c.MaxMessageBytes)
	}
	if c.MaxAckPending < c.Concurrency {
		p.Addf("max-ack-pending", "must be >= concurrency (%d), got %d", c.Concurrency, c.MaxAckPending)
	}
	return p.Err()
}

func main() { service.Main("embedder", run) }

// run starts the embedder with the command line args and serves until ctx
// ends: service.Start parses and checks the configuration, then calls serve.
func run(ctx context.Context, args []string) error {
	return service.Start(ctx, "embedder", args, new(Config), serve)
}

// serve embeds file versions until ctx ends, then drains NATS.
func serve(ctx context.Context, cfg *Config, deps service.Deps) error {
	log := deps.Log
	provider, err := engine.New(cfg.Embedding)
	if errors.Is(err, engine.ErrNoProvider) {
		log.Warn("no embedding provider configured: chunks are indexed for keyword search with embedding status missing")
	} else if err != nil {
		return err
	}
	st, err := stage.Connect(stage.Config{Name: "embedder", Common: &cfg.Common, Concurrency: cfg.Concurrency, MaxAckPending: cfg.MaxAckPending,
		Running: func(httpAddr string) {
			log.Info("embedder running", "nats", cfg.NATSURL, "provider", cfg.Embedding.Provider, "model", modelName(provider), "http", httpAddr)
		}}, deps)
	if err != nil {
		return err
	}
	defer st.Close()
	chunks := &stage.Loop{Metric: "embedder", Worker: "embedder", Stream: pipeline.ChunksStream, Consumer: pipeline.EmbedderConsumer}
	if err := st.Consume(ctx, chunks); err != nil {
		return err
	}
	var cache embedding.Cache
	if cfg.CacheBytes > 0 && provider != nil {
		kv, err := vectorcache.Open(ctx, st.JS, cfg.KVReplicas, cfg.CacheBytes)
		if err != nil {
			return err
		}
		cache = kv
	}
	chunks.Handle = embedding.New(provider, pipeline.Publisher{JS: st.JS, MaxInline: cfg.MaxMessageBytes}, cache, cfg.BatchSize, log).Handle
	return st.Run(ctx, chunks)
}

func modelName(p engine.Provider) string {
	if p == nil {
		return "none"
	}
	return p.Model()
}
