// Package worker is the receive loop every stage runs: bounded concurrency
// over a durable JetStream pull consumer, the ack decision made once by
// whoever finishes the work, InProgress while work runs long, redelivery with
// backoff for transient errors, and a dead letter (message and reason kept)
// for poison messages.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/tick"
	"github.com/strata-kb/strata/shared/tracing"
)

// Dead-letter headers: what failed, where and why. The body is the original message.
const (
	HeaderStage            = "Strata-Stage"
	HeaderError            = "Strata-Error"
	HeaderDelivered        = "Strata-Delivered"
	HeaderOriginalSubject  = "Strata-Original-Subject"
	HeaderOriginalStream   = "Strata-Original-Stream"
	HeaderOriginalSequence = "Strata-Original-Sequence"
	HeaderOriginalMsgID    = "Strata-Original-Msg-Id"
	HeaderFailedAt         = "Strata-Failed-At"
)

// permanentError marks work that will never succeed on retry.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as poison: the message is dead-lettered at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// Handler processes one message. It returns nil when the work is done,
// a Permanent error for poison input, and any other error to retry later.
type Handler func(ctx context.Context, msg jetstream.Msg) error

// Observer is told the outcome of every message: "acked", "retried" or
// "dead_lettered" (metrics.Stage).
type Observer interface {
	Observe(outcome string, took time.Duration)
}

// Config bounds a receive loop.
type Config struct {
	Stage       string
	Concurrency int
	// MaxDeliver must match the consumer's; the last failed attempt is dead-lettered.
	MaxDeliver int
	// ProgressEvery is how often a running handler extends its ack deadline.
	ProgressEvery time.Duration
	// RetryDelays are the NakWithDelay delays by attempt; the last one repeats.
	RetryDelays []time.Duration
	// Observer, if set, is told every outcome.
	Observer Observer
	// Health, if set, is told every attempt's error (nil: it went
	// through), so a replica refused by a full disk says so
	// (stagehealth.Reporter).
	Health interface{ Observe(err error) }
	// HeldBack, if set, says whether an error is a condition outside the
	// message that holds the stage back (stagehealth.DiskFull: a full
	// disk). Such an attempt is tried again in place every HeldBackRetry,
	// the message kept (its ack deadline extended), until it goes through
	// or fails otherwise, or the loop stops: it counts no delivery, so a
	// disk full for hours dead-letters nothing, and the work goes on within
	// HeldBackRetry of space returning, not after a backoff grown while it
	// was full (2 minutes at the 4th attempt).
	HeldBack      func(error) bool
	HeldBackRetry time.Duration
}

// Loop runs a Handler over a consumer.
type Loop struct {
	cfg      Config
	stopping chan struct{} // closed when Run's context ends: held-back work is left to be redelivered
	stopOnce sync.Once
	js       jetstream.JetStream
	consumer jetstream.Consumer
	handle   Handler
	log      *slog.Logger
}

// New returns a receive loop; Run starts it.
func New(cfg Config, js jetstream.JetStream, consumer jetstream.Consumer, handle Handler, log *slog.Logger) *Loop {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 10 * time.Second
	}
	if cfg.HeldBackRetry <= 0 {
		cfg.HeldBackRetry = 5 * time.Second
	}
	if len(cfg.RetryDelays) == 0 {
		cfg.RetryDelays = pipeline.RetryDelays
	}
	return &Loop{cfg: cfg, js: js, consumer: consumer, handle: handle, log: log.With("stage", cfg.Stage), stopping: make(chan struct{})}
}

// Run receives until ctx is cancelled, then stops pulling, finishes the
// messages already received and returns. Handlers run with a context that is
// not cancelled by shutdown, so in-flight work completes.
func (l *Loop) Run(ctx context.Context) error {
	it, err := l.consumer.Messages(jetstream.PullMaxMessages(l.cfg.Concurrency))
	if err != nil {
		return fmt.Errorf("%s: open message iterator: %w", l.cfg.Stage, err)
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			l.stopOnce.Do(func() { close(l.stopping) })
			it.Drain()
		case <-stopped:
		}
	}()
	defer close(stopped)

	workCtx := context.WithoutCancel(ctx)
	sem := make(chan struct{}, l.cfg.Concurrency)
	for {
		msg, err := it.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				break
			}
			// Transient pull errors (server restarts, leadership changes) are reported by
			// the iterator and it keeps going; give up only on shutdown.
			l.log.Warn("receive", "err", err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			l.process(workCtx, msg)
		}()
	}
	for range l.cfg.Concurrency { // wait for in-flight work
		sem <- struct{}{}
	}
	return nil
}

func (l *Loop) process(ctx context.Context, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		l.log.Error("message without metadata", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	log := l.log.With("subject", msg.Subject(), "stream_seq", meta.Sequence.Stream, "delivered", meta.NumDelivered)
	// Continue the trace of whoever published the message (none for bucket events).
	ctx, span := tracing.Tracer().Start(tracing.Extract(ctx, msg.Headers()), l.cfg.Stage+" "+msg.Subject(),
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
			attribute.String("strata.stage", l.cfg.Stage), attribute.Int64("strata.delivered", int64(meta.NumDelivered))))
	defer span.End()

	// Keep the message while long work runs.
	stopProgress := tick.Every(l.cfg.ProgressEvery, func() bool { _ = msg.InProgress(); return true })
	start := time.Now()
	work, err := l.withBody(ctx, msg)
	if err == nil {
		err = l.handle(ctx, work)
	}
	for err != nil && l.cfg.HeldBack != nil && l.cfg.HeldBack(err) && !IsPermanent(err) {
		if l.cfg.Health != nil {
			l.cfg.Health.Observe(err)
		}
		log.Warn("held back: trying again in place", "err", err, "in", l.cfg.HeldBackRetry)
		select {
		case <-l.stopping:
		case <-time.After(l.cfg.HeldBackRetry):
			if work == nil { // the body was not read yet: the hold was on reading it
				work, err = l.withBody(ctx, msg)
			}
			if work != nil {
				err = l.handle(ctx, work)
			}
			continue
		}
		break // shutting down: retried as any failure, by redelivery
	}
	stopProgress()
	if l.cfg.Health != nil {
		l.cfg.Health.Observe(err)
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	observe := func(outcome string) {
		if l.cfg.Observer != nil {
			l.cfg.Observer.Observe(outcome, time.Since(start))
		}
	}

	switch {
	case err == nil:
		if err := msg.DoubleAck(ctx); err != nil {
			log.Warn("ack", "err", err)
		}
		observe("acked")
		log.Debug("done", "took", time.Since(start))
	case IsPermanent(err) || (l.cfg.MaxDeliver > 0 && int(meta.NumDelivered) >= l.cfg.MaxDeliver):
		log.Error("dead-lettering", "err", err)
		if dlErr := l.deadLetter(ctx, msg, meta, err); dlErr != nil {
			// Without a dead letter the message must not be lost: retry it.
			log.Error("dead-letter publish failed; will retry the message", "err", dlErr)
			_ = msg.NakWithDelay(l.delay(meta.NumDelivered))
			return
		}
		_ = msg.TermWithReason(truncate(err.Error(), 256))
		observe("dead_lettered")
	default:
		delay := l.delay(meta.NumDelivered)
		log.Warn("retrying", "err", err, "delay", delay)
		_ = msg.NakWithDelay(delay)
		observe("retried")
	}
}

// withBody returns msg with its body as the handler reads it: msg itself,
// or for a message sent by reference (pipeline.HeaderBodyRef) a message
// whose Data is the body read from pipeline.BodiesBucket. The original is
// what is acknowledged and dead-lettered (with the reference, not the body:
// a dead letter must fit a message too). A body that is gone is permanent.
func (l *Loop) withBody(ctx context.Context, msg jetstream.Msg) (jetstream.Msg, error) {
	if msg.Headers().Get(pipeline.HeaderBodyRef) == "" {
		return msg, nil
	}
	body, err := pipeline.Body(ctx, l.js, msg)
	if errors.Is(err, pipeline.ErrBodyGone) {
		return nil, Permanent(err)
	}
	if err != nil {
		return nil, err
	}
	return bodyMsg{Msg: msg, body: body}, nil
}

// bodyMsg is a message whose body was sent by reference, with the body read.
type bodyMsg struct {
	jetstream.Msg
	body []byte
}

func (m bodyMsg) Data() []byte { return m.body }

func (l *Loop) delay(delivered uint64) time.Duration {
	i := int(delivered) - 1
	if i >= len(l.cfg.RetryDelays) {
		i = len(l.cfg.RetryDelays) - 1
	}
	if i < 0 {
		i = 0
	}
	return l.cfg.RetryDelays[i]
}

func (l *Loop) deadLetter(ctx context.Context, msg jetstream.Msg, meta *jetstream.MsgMetadata, cause error) error {
	dl := nats.NewMsg(pipeline.DeadLetterSubjectFor(l.cfg.Stage))
	dl.Data = msg.Data()
	for k, vs := range msg.Headers() {
		if k == nats.MsgIdHdr {
			dl.Header.Set(HeaderOriginalMsgID, vs[0])
			continue
		}
		for _, v := range vs {
			dl.Header.Add(k, v)
		}
	}
	dl.Header.Set(HeaderStage, l.cfg.Stage)
	dl.Header.Set(HeaderError, truncate(cause.Error(), 2048))
	dl.Header.Set(HeaderDelivered, strconv.FormatUint(meta.NumDelivered, 10))
	dl.Header.Set(HeaderOriginalSubject, msg.Subject())
	dl.Header.Set(HeaderOriginalStream, meta.Stream)
	dl.Header.Set(HeaderOriginalSequence, strconv.FormatUint(meta.Sequence.Stream, 10))
	dl.Header.Set(HeaderFailedAt, time.Now().UTC().Format(time.RFC3339Nano))
	// Dedupe on the original position so a retried dead-lettering is stored once.
	dl.Header.Set(nats.MsgIdHdr, fmt.Sprintf("dl-%s-%s-%d", l.cfg.Stage, meta.Stream, meta.Sequence.Stream))
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := l.js.PublishMsg(pctx, dl)
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
