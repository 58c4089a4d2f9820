// Package live takes bucket events the moment MinIO sends them. MinIO has
// two NATS targets for the watched bucket: a durable one that keeps events in
// a queue directory and replays them into JetStream every 3 seconds, and a
// live one that publishes each event on a plain NATS subject as it happens.
// Live events are best effort: one that is dropped (no ingestor running, a
// full queue, a failure) still arrives from the durable target, where the
// copy of an event already committed is skipped.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Handler processes one bucket notification (ingest.Ingestor.HandleEvent).
type Handler func(ctx context.Context, data []byte) error

// Observer counts live events by outcome: processed, failed or dropped.
type Observer interface {
	Observe(outcome string, took time.Duration)
}

// Config bounds the listener.
type Config struct {
	Subject string
	Queue   string // queue group: each live event goes to one ingestor replica
	// Concurrency is how many live events are processed at once; more wait
	// up to Backlog, and beyond that are dropped for the durable copy.
	Concurrency int
	Backlog     int
	Timeout     time.Duration // per event
}

// Listener subscribes to live events and processes them.
type Listener struct {
	cfg    Config
	handle Handler
	obs    Observer
	log    *slog.Logger
}

// New returns a listener; obs may be nil.
func New(cfg Config, handle Handler, obs Observer, log *slog.Logger) *Listener {
	return &Listener{cfg: cfg, handle: handle, obs: obs, log: log}
}

// Start subscribes and processes live events until ctx ends; those not
// finished by then are left to their durable copies. wait returns once the
// subscription is gone and the workers have stopped.
func (l *Listener) Start(ctx context.Context, nc *nats.Conn) (wait func(), err error) {
	queue := make(chan *nats.Msg, max(l.cfg.Backlog, 1))
	sub, err := nc.QueueSubscribe(l.cfg.Subject, l.cfg.Queue, func(m *nats.Msg) {
		select {
		case queue <- m:
		default:
			l.observe("dropped", 0)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to live events on %s: %w", l.cfg.Subject, err)
	}
	var wg sync.WaitGroup
	for range max(l.cfg.Concurrency, 1) {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case m := <-queue:
					l.process(ctx, m.Data)
				}
			}
		})
	}
	wg.Go(func() {
		<-ctx.Done()
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			l.log.Warn("unsubscribe from live events", "err", err)
		}
	})
	return wg.Wait, nil
}

func (l *Listener) process(ctx context.Context, data []byte) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	if err := l.handle(ctx, data); err != nil {
		// Not retried here: the durable copy of the event is on its way.
		l.log.Info("live event failed; its durable copy will be processed", "err", err)
		l.observe("failed", time.Since(start))
		return
	}
	l.observe("processed", time.Since(start))
}

func (l *Listener) observe(outcome string, took time.Duration) {
	if l.obs != nil {
		l.obs.Observe(outcome, took)
	}
}
