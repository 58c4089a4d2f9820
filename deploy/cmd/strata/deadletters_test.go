package main

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
	"github.com/strata-kb/strata/shared/worker"
)

// TestRedriveKeepsABodySentByReference: a dead letter whose body went by
// reference is re-driven with its reference (and its kind), so the stage
// reads the body from the bucket again, not the stub the letter carries.
func TestRedriveKeepsABodySentByReference(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "redrive-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	l := letter{Data: []byte(`{"object":{"key":"acme/manual.pdf"}}`), Headers: nats.Header{
		worker.HeaderOriginalSubject: {"strata.chunks.acme"},
		pipeline.HeaderKind:          {pipeline.KindFileVersion},
		pipeline.HeaderBodyRef:       {"strata.chunks.acme/v1"},
	}}
	subject, seq, err := redrive(ctx, js, l)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, pipeline.ChunksStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := stream.GetMsg(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	if subject != "strata.chunks.acme" || m.Header.Get(pipeline.HeaderBodyRef) != "strata.chunks.acme/v1" ||
		m.Header.Get(pipeline.HeaderKind) != pipeline.KindFileVersion || string(m.Data) != string(l.Data) {
		t.Fatalf("re-driven to %s with headers %v and body %q", subject, m.Header, m.Data)
	}
}
