// Package stage is the start-up the three pipeline workers (ingestor,
// embedder, indexer) share: connect to NATS, make sure of each loop's
// durable consumer and its metrics, then report health (shared/stagehealth),
// run the loops (shared/worker), watch their lag, serve /healthz, /readyz
// and /metrics, and drain NATS once they end. What is a stage's own (the
// ingestor's live listener and reconciler, the indexer's writer and garbage
// collection, the embedder's provider) stays in its main, between Connect
// and Run:
//
//	st, err := stage.Connect(stage.Config{Name: "embedder", Common: &cfg.Common, ...}, deps)
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	chunks := &stage.Loop{Metric: "embedder", Worker: "embedder", Stream: pipeline.ChunksStream, Consumer: pipeline.EmbedderConsumer}
//	if err := st.Consume(ctx, chunks); err != nil {
//		return err
//	}
//	... // the stage's own, using st.NC and st.JS
//	chunks.Handle = emb.Handle
//	return st.Run(ctx, chunks)
package stage

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/metrics"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/service"
	"github.com/strata-kb/strata/shared/stagehealth"
	"github.com/strata-kb/strata/shared/worker"
)

// Config is what a stage's start-up needs of its configuration.
type Config struct {
	// Name names the stage: its NATS client is strata-<Name>, its health
	// is reported under Name.
	Name string
	// Common holds the NATS URL, the KV replicas, the retry delays and
	// the health endpoint's address.
	Common *config.Common
	// Concurrency is how many messages each loop handles at once;
	// MaxAckPending how many unacknowledged ones each consumer may hold.
	Concurrency, MaxAckPending int
	// Running, when set, is called once the health endpoint listens, with
	// its address, before the loops start (each stage logs "<name>
	// running" with its own attributes).
	Running func(httpAddr string)
	// Stopped, when set, is called once the loops have ended, before NATS
	// is drained.
	Stopped func()
}

// Stage is a worker's connection to NATS and the loops it runs.
type Stage struct {
	// NC and JS are the stage's NATS connection.
	NC *nats.Conn
	JS jetstream.JetStream

	cfg  Config
	deps service.Deps
}

// Loop is one durable consumer and what handles its messages.
type Loop struct {
	// Metric names the loop in the metrics: strata_<Metric>_... (metrics.Registry.NewStage).
	Metric string
	// Worker names the loop in the worker's logs and retries.
	Worker string
	// Stream and Consumer are the stream read and the durable consumer.
	Stream, Consumer string
	// Handle handles one message; set it before Run.
	Handle worker.Handler

	observer *metrics.Stage
	consumer jetstream.Consumer
}

// Connect connects to NATS as strata-<cfg.Name>.
func Connect(cfg Config, deps service.Deps) (*Stage, error) {
	nc, js, err := pipeline.Connect(cfg.Common.NATSURL, "strata-"+cfg.Name, deps.Log)
	if err != nil {
		return nil, err
	}
	return &Stage{NC: nc, JS: js, cfg: cfg, deps: deps}, nil
}

// Close closes the NATS connection.
func (s *Stage) Close() { s.NC.Close() }

// Consume registers l's metrics and makes sure of its durable consumer,
// so that messages published from now on wait for it.
func (s *Stage) Consume(ctx context.Context, l *Loop) error {
	l.observer = s.deps.Metrics.NewStage(l.Metric)
	cons, err := pipeline.EnsureConsumer(ctx, s.JS, l.Stream, pipeline.ConsumerConfig(l.Consumer, s.cfg.MaxAckPending))
	if err != nil {
		return err
	}
	l.consumer = cons
	return nil
}

// lagEvery is how often each loop's lag is read.
const lagEvery = 5 * time.Second

// Run reports the stage's health, serves /healthz, /readyz and /metrics,
// runs loops (each made sure of by Consume) until ctx ends, then drains
// NATS. It returns the first loop's error, else the first other one's.
func (s *Stage) Run(ctx context.Context, loops ...*Loop) error {
	health, err := stagehealth.Open(ctx, s.JS, s.cfg.Common.KVReplicas, s.cfg.Name, stagehealth.Instance())
	if err != nil {
		// The stage runs without its reports; each one tries the bucket again.
		s.deps.Log.Warn("stage health not reported yet", "err", err)
	}
	go health.Run(ctx)
	workers := make([]*worker.Loop, len(loops))
	for i, l := range loops {
		workers[i] = worker.New(worker.Config{Stage: l.Worker, Concurrency: s.cfg.Concurrency, MaxDeliver: pipeline.MaxDeliver, Observer: l.observer, RetryDelays: s.cfg.Common.Retries(), Health: health,
			// A full disk holds the stage back; it is not the message's fault.
			HeldBack: stagehealth.DiskFull},
			s.JS, l.consumer, l.Handle, s.deps.Log)
		go l.observer.WatchLag(ctx, l.consumer, lagEvery)
	}
	httpAddr, err := s.deps.ServeHealth(ctx, s.cfg.Common.HTTPAddr, service.NATSConnected(s.NC))
	if err != nil {
		return err
	}
	if s.cfg.Running != nil {
		s.cfg.Running(httpAddr)
	}
	done := make([]chan error, len(workers))
	for i := 1; i < len(workers); i++ {
		done[i] = make(chan error, 1)
		go func() { done[i] <- workers[i].Run(ctx) }()
	}
	err = workers[0].Run(ctx)
	for _, d := range done[1:] {
		if derr := <-d; err == nil {
			err = derr
		}
	}
	if s.cfg.Stopped != nil {
		s.cfg.Stopped()
	}
	drainCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = pipeline.Drain(drainCtx, s.NC)
	return err
}
