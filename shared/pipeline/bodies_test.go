package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// TestABodyOverTheLimitTravelsByReference: a body over the publisher's
// inline limit, or over the server's max_payload whatever the publisher's
// limit, is written to the bodies bucket and the message names it; Body
// reads it back whole, a body within the limit travels in the message, and
// a body gone from the bucket is ErrBodyGone.
func TestABodyOverTheLimitTravelsByReference(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "bodies-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	small := bytes.Repeat([]byte("s"), 1000)
	large := bytes.Repeat([]byte("large body "), 1000)              // 11,000 bytes
	overServer := bytes.Repeat([]byte("x"), int(nc.MaxPayload())+1) // over max_payload
	fileVersion := []byte(`{"object":{"bucket":"strata","key":"acme/manual.pdf"},"text":"` + string(bytes.Repeat([]byte("t"), 8000)) + `"}`)
	pub := pipeline.Publisher{JS: js, MaxInline: 4096}
	unlimited := pipeline.Publisher{JS: js} // the server's limit alone
	sends := []struct {
		pub  pipeline.Publisher
		id   string
		body []byte
		ref  bool
	}{
		{pub, "small", small, false},
		{pub, "large", large, true},
		{unlimited, "large-inline", large, false},
		{unlimited, "over-server", overServer, true},
		{pub, "file version", fileVersion, true},
	}
	for _, s := range sends {
		if err := s.pub.Publish(ctx, "strata.chunks.bodies", s.id, nil, s.body); err != nil {
			t.Fatalf("publish %s: %v", s.id, err)
		}
	}
	cons, err := js.OrderedConsumer(ctx, pipeline.ChunksStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"strata.chunks.bodies"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sends {
		msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("next message (%s): %v", s.id, err)
		}
		ref := msg.Headers().Get(pipeline.HeaderBodyRef)
		if (ref != "") != s.ref {
			t.Errorf("%s (%d bytes): sent by reference %q, want by reference %v", s.id, len(s.body), ref, s.ref)
		}
		if s.ref && s.id != "file version" && len(msg.Data()) != 0 {
			t.Errorf("%s: a message sent by reference carries %d bytes of body", s.id, len(msg.Data()))
		}
		if s.id == "file version" && (!s.ref || pipeline.ObjectKeyOf(msg.Data()) != "acme/manual.pdf" || len(msg.Data()) > 100) {
			t.Errorf("a file version sent by reference carries %q: its object's key alone, for dead letters", msg.Data())
		}
		got, err := pipeline.Body(ctx, js, msg)
		if err != nil || !bytes.Equal(got, s.body) {
			t.Errorf("%s: Body gave %d bytes (%v), want the %d sent", s.id, len(got), err, len(s.body))
		}
		if s.id == "large" {
			store, err := js.ObjectStore(ctx, pipeline.BodiesBucket)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Delete(ctx, ref); err != nil {
				t.Fatal(err)
			}
			if _, err := pipeline.Body(ctx, js, msg); !errors.Is(err, pipeline.ErrBodyGone) {
				t.Errorf("a body deleted from the bucket: %v, want ErrBodyGone", err)
			}
		}
	}
	store, err := js.ObjectStore(ctx, pipeline.BodiesBucket)
	if err != nil {
		t.Fatal(err)
	}
	status, err := store.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if streamAge := pipeline.StreamConfigs(1)[0].MaxAge; status.TTL() != streamAge {
		t.Errorf("bodies are kept %v, the messages naming them %v", status.TTL(), streamAge)
	}
}
