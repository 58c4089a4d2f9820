package worker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func setup(t *testing.T, durable string) (jetstream.JetStream, jetstream.Consumer) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real nats-server; skipped with -short")
	}
	url := serverstest.NATS(t)
	nc, js, err := pipeline.Connect(url, "worker-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := pipeline.ConsumerConfig(durable, 16)
	cfg.FilterSubject = "strata.chunks.test"
	cons, err := pipeline.EnsureConsumer(context.Background(), js, pipeline.ChunksStream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return js, cons
}

func publish(t *testing.T, js jetstream.JetStream, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := js.Publish(context.Background(), "strata.chunks.test", []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAckRetryAndDeadLetter(t *testing.T) {
	js, cons := setup(t, "w1")
	var mu sync.Mutex
	attempts := map[string]int{}
	done := make(chan struct{})
	handle := func(_ context.Context, msg jetstream.Msg) error {
		mu.Lock()
		defer mu.Unlock()
		body := string(msg.Data())
		attempts[body]++
		switch body {
		case "poison":
			return Permanent(errors.New("cannot parse poison"))
		case "flaky":
			if attempts[body] < 3 {
				return errors.New("temporarily down")
			}
		case "always-failing":
			if attempts[body] == 5 {
				defer close(done)
			}
			return errors.New("still down")
		}
		return nil
	}
	maxDeliver := pipeline.MaxDeliver
	health := &healthLog{}
	loop := New(Config{Stage: "test", Concurrency: 2, MaxDeliver: maxDeliver, RetryDelays: []time.Duration{20 * time.Millisecond}, Health: health}, js, cons, handle, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- loop.Run(ctx) }()
	publish(t, js, "ok", "poison", "flaky", "always-failing")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("always-failing was not retried %d times: %v", maxDeliver, attempts)
	}
	// The last dead-lettering finishes: both letters stored, nothing held.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		dl, err := js.Stream(context.Background(), pipeline.DeadLetterStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := dl.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ci, err := cons.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs >= 2 && ci.NumAckPending == 0 && ci.NumPending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after 30 s waiting for the last dead letter: %d dead letters, consumer pending %d, ack pending %d",
				info.State.Msgs, ci.NumPending, ci.NumAckPending)
		}
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if attempts["ok"] != 1 || attempts["poison"] != 1 || attempts["flaky"] != 3 || attempts["always-failing"] != maxDeliver {
		t.Fatalf("attempts %v", attempts)
	}
	mu.Unlock()
	// Health saw every attempt: two went through (ok, flaky's third).
	health.mu.Lock()
	if health.ok != 2 || health.failed != 1+2+maxDeliver {
		t.Fatalf("health saw %d attempts go through and %d fail", health.ok, health.failed)
	}
	health.mu.Unlock()

	dl, err := js.Stream(context.Background(), pipeline.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := dl.Info(context.Background())
	if info.State.Msgs != 2 {
		t.Fatalf("%d dead letters, want 2 (poison, always-failing)", info.State.Msgs)
	}
	want := map[string]string{"poison": "1", "always-failing": "5"}
	for seq := uint64(1); seq <= 2; seq++ {
		m, err := dl.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		body := string(m.Data)
		if m.Header.Get(HeaderDelivered) != want[body] || m.Header.Get(HeaderStage) != "test" ||
			m.Header.Get(HeaderOriginalSubject) != "strata.chunks.test" || m.Header.Get(HeaderError) == "" {
			t.Fatalf("dead letter %q headers %v", body, m.Header)
		}
	}
	ci, _ := cons.Info(context.Background())
	if ci.NumAckPending != 0 || ci.NumPending != 0 {
		t.Fatalf("consumer still holds work: pending %d, ack pending %d", ci.NumPending, ci.NumAckPending)
	}
}

func TestShutdownFinishesInFlightWork(t *testing.T) {
	js, cons := setup(t, "w2")
	started := make(chan struct{})
	var finished bool
	handle := func(ctx context.Context, _ jetstream.Msg) error {
		close(started)
		select {
		case <-time.After(time.Second): // long work; shutdown must wait for it
		case <-ctx.Done():
			return ctx.Err()
		}
		finished = true
		return nil
	}
	loop := New(Config{Stage: "test", Concurrency: 1, MaxDeliver: 5}, js, cons, handle, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- loop.Run(ctx) }()
	publish(t, js, "slow")
	<-started
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	if !finished {
		t.Fatal("Run returned before the in-flight handler finished")
	}
	ci, _ := cons.Info(context.Background())
	if ci.NumAckPending != 0 || ci.AckFloor.Stream != 1 {
		t.Fatalf("in-flight message not acked on shutdown: ack pending %d, ack floor %d", ci.NumAckPending, ci.AckFloor.Stream)
	}
}

// TestTraceContinuesAcrossStages: a message published inside a span is
// handled in a child span of the same trace, through the NATS headers.
func TestTraceContinuesAcrossStages(t *testing.T) {
	js, cons := setup(t, "w3")
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	ctx, parent := otel.Tracer("test").Start(context.Background(), "upload")
	if err := (pipeline.Publisher{JS: js}).Publish(ctx, "strata.chunks.test", "", nil, []byte("traced")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	handled := make(chan struct{})
	loop := New(Config{Stage: "test", Concurrency: 1, MaxDeliver: 5}, js, cons, func(context.Context, jetstream.Msg) error {
		close(handled)
		return nil
	}, quiet)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(runCtx) }()
	<-handled
	cancel()
	<-done
	for _, s := range rec.Ended() {
		if s.Name() == "test strata.chunks.test" {
			if s.Parent().TraceID() != parent.SpanContext().TraceID() || s.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Fatalf("handler span is not a child of the publisher's span: %v vs %v", s.Parent(), parent.SpanContext())
			}
			return
		}
	}
	t.Fatalf("no handler span among %d recorded", len(rec.Ended()))
}

// healthLog counts the attempts a loop tells its Health.
type healthLog struct {
	mu         sync.Mutex
	ok, failed int
}

func (h *healthLog) Observe(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.ok++
	} else {
		h.failed++
	}
}

// TestHeldBackWorkIsTriedAgainInPlace: an attempt refused by a full disk
// is tried again in place, every HeldBackRetry, with the same delivery:
// however long the disk stays full nothing is redelivered or
// dead-lettered, and the work goes through once the refusal ends.
func TestHeldBackWorkIsTriedAgainInPlace(t *testing.T) {
	js, cons := setup(t, "w-held")
	full := errors.New("write /data/x: no space left on device")
	var mu sync.Mutex
	var delivered []uint64
	done := make(chan struct{})
	handle := func(_ context.Context, msg jetstream.Msg) error {
		mu.Lock()
		defer mu.Unlock()
		meta, _ := msg.Metadata()
		delivered = append(delivered, meta.NumDelivered)
		if len(delivered) <= pipeline.MaxDeliver+2 { // full for longer than every delivery allows
			return full
		}
		close(done)
		return nil
	}
	health := &healthLog{}
	loop := New(Config{Stage: "test", Concurrency: 1, MaxDeliver: pipeline.MaxDeliver, RetryDelays: []time.Duration{20 * time.Millisecond},
		Health: health, HeldBack: func(err error) bool { return errors.Is(err, full) }, HeldBackRetry: 20 * time.Millisecond}, js, cons, handle, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- loop.Run(ctx) }()
	publish(t, js, "held")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the held-back work never went through: attempts with deliveries %v", delivered)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, d := range delivered {
		if d != 1 {
			t.Fatalf("attempt %d was delivery %d: held-back work was redelivered (%v)", i+1, d, delivered)
		}
	}
	health.mu.Lock()
	defer health.mu.Unlock()
	if health.failed != pipeline.MaxDeliver+2 || health.ok != 1 {
		t.Fatalf("health saw %d refusals and %d successes", health.failed, health.ok)
	}
	dl, err := js.Stream(context.Background(), pipeline.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := dl.Info(context.Background()); info.State.Msgs != 0 {
		t.Fatalf("%d dead letters", info.State.Msgs)
	}
}

// TestAMessageSentByReferenceIsHandledWithItsBody: the handler of a message
// whose body went to the bodies bucket reads the body, not the empty
// message; a message whose body is gone is dead-lettered at once with the
// reason, and its dead letter keeps the reference (not a body that may not
// fit a message).
func TestAMessageSentByReferenceIsHandledWithItsBody(t *testing.T) {
	js, cons := setup(t, "w5")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pub := pipeline.Publisher{JS: js, MaxInline: 64}
	big := strings.Repeat("a body over the inline limit ", 10)
	if err := pub.Publish(ctx, "strata.chunks.test", "kept", nil, []byte(big)); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, "strata.chunks.test", "gone", nil, []byte(big+"gone")); err != nil {
		t.Fatal(err)
	}
	store, err := js.ObjectStore(ctx, pipeline.BodiesBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, "strata.chunks.test/gone"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	handled := make(chan struct{}, 2)
	loop := New(Config{Stage: "test", Concurrency: 1, MaxDeliver: 5, RetryDelays: []time.Duration{20 * time.Millisecond}}, js, cons,
		func(_ context.Context, msg jetstream.Msg) error {
			mu.Lock()
			seen = append(seen, string(msg.Data()))
			mu.Unlock()
			handled <- struct{}{}
			return nil
		}, quiet)
	runCtx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- loop.Run(runCtx) }()
	select {
	case <-handled:
	case <-ctx.Done():
		t.Fatal("the message sent by reference was not handled")
	}
	dl, err := js.Stream(ctx, pipeline.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	var letter *jetstream.RawStreamMsg
	for letter == nil {
		if letter, err = dl.GetLastMsgForSubject(ctx, pipeline.DeadLetterSubjectFor("test")); err != nil && ctx.Err() != nil {
			t.Fatalf("no dead letter for the message whose body is gone: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != big {
		t.Fatalf("the handler saw %q, want the one body read back", seen)
	}
	if ref := letter.Header.Get(pipeline.HeaderBodyRef); ref != "strata.chunks.test/gone" || len(letter.Data) != 0 ||
		letter.Header.Get(HeaderDelivered) != "1" || !strings.Contains(letter.Header.Get(HeaderError), "gone") {
		t.Fatalf("dead letter of the message whose body is gone: ref %q, %d bytes, headers %v", ref, len(letter.Data), letter.Header)
	}
}
