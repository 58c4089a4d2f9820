package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PingInterval is how often a client pings its server. With two pings
// unanswered the connection is stale and the client moves to another
// server: a paused (SIGSTOP) or frozen node is left within about 10 s,
// not nats.go's default two minutes.
const PingInterval = 5 * time.Second

// Connect connects to NATS with endless reconnects (a restarted server must
// not end a worker) and returns the JetStream context.
func Connect(url, name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	nc, err := nats.Connect(url,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.PingInterval(PingInterval),
		nats.MaxPingsOutstanding(2),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("nats disconnected", "err", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", "url", c.ConnectedUrl()) }),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}

// Drain flushes pending publishes and closes the connection, waiting until
// it is closed or ctx ends.
func Drain(ctx context.Context, nc *nats.Conn) error {
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		nc.Close()
		return fmt.Errorf("drain nats: %w", err)
	}
	select {
	case <-closed:
		return nil
	case <-ctx.Done():
		nc.Close()
		return fmt.Errorf("drain nats: %w", ctx.Err())
	}
}
