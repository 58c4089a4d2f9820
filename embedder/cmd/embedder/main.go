// Command embedder consumes file versions from the chunks stream, embeds their
// chunks with the configured provider and publishes the vectors.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/strata-kb/strata/embedder/embed"
	"github.com/strata-kb/strata/embedder/embedding"
	"github.com/strata-kb/strata/embedder/vectorcache"
	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/health"
	"github.com/strata-kb/strata/shared/logging"
	"github.com/strata-kb/strata/shared/metrics"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/tracing"
	"github.com/strata-kb/strata/shared/worker"
)

// Config is the embedder's configuration.
type Config struct {
	config.Common
	Embedding     embed.Config
	CacheBytes    int64
	BatchSize     int
	Concurrency   int
	MaxAckPending int
}

// RegisterFlags registers the embedder's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Common.RegisterFlags(fs, "127.0.0.1:8082")
	c.Embedding.RegisterFlags(fs)
	fs.Int64Var(&c.CacheBytes, "cache-bytes", 1<<30, "size of the vector cache (NATS KV strata_embedding_cache); 0 disables it")
	fs.IntVar(&c.BatchSize, "batch-size", 32, "texts per provider call")
	fs.IntVar(&c.Concurrency, "concurrency", 2, "file versions embedded at once")
	fs.IntVar(&c.MaxAckPending, "max-ack-pending", 32, "unacknowledged messages the consumer may hold")
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
	if c.MaxAckPending < c.Concurrency {
		p.Addf("max-ack-pending", "must be >= concurrency (%d), got %d", c.Concurrency, c.MaxAckPending)
	}
	return p.Err()
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "embedder:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var cfg Config
	fs := flag.NewFlagSet("embedder", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := config.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h or -version: printed what was asked
		}
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log, err := logging.New("embedder", cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	stopTracing, err := tracing.Setup(ctx, "embedder", cfg.TraceExporter)
	if err != nil {
		return err
	}
	defer stopTracing(context.WithoutCancel(ctx))
	provider, err := embed.New(cfg.Embedding)
	if errors.Is(err, embed.ErrNoProvider) {
		log.Warn("no embedding provider configured: chunks are indexed for keyword search with embedding status missing")
	} else if err != nil {
		return err
	}
	nc, js, err := pipeline.Connect(cfg.NATSURL, "strata-embedder", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	reg := metrics.New()
	stage := reg.NewStage("embedder")
	cons, err := pipeline.EnsureConsumer(ctx, js, pipeline.ChunksStream, pipeline.ConsumerConfig(pipeline.EmbedderConsumer, cfg.MaxAckPending))
	if err != nil {
		return err
	}
	var cache embedding.Cache
	if cfg.CacheBytes > 0 && provider != nil {
		kv, err := vectorcache.Open(ctx, js, cfg.KVReplicas, cfg.CacheBytes)
		if err != nil {
			return err
		}
		cache = kv
	}
	emb := embedding.New(provider, pipeline.Publisher{JS: js}, cache, cfg.BatchSize, log)
	loop := worker.New(worker.Config{Stage: "embedder", Concurrency: cfg.Concurrency, MaxDeliver: pipeline.MaxDeliver, Observer: stage, RetryDelays: cfg.Retries()},
		js, cons, emb.Handle, log)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler())
	go stage.WatchLag(ctx, cons, 5*time.Second)
	hs, err := health.Listen(cfg.HTTPAddr, func() error {
		if !nc.IsConnected() {
			return errors.New("nats disconnected")
		}
		return nil
	}, mux)
	if err != nil {
		return err
	}
	go hs.Serve(ctx, log)
	log.Info("embedder running", "nats", cfg.NATSURL, "provider", cfg.Embedding.Provider, "model", modelName(provider), "http", hs.Addr())
	err = loop.Run(ctx)
	drainCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = pipeline.Drain(drainCtx, nc)
	return err
}

func modelName(p embed.Provider) string {
	if p == nil {
		return "none"
	}
	return p.Model()
}
