package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A message whose body is over the message limit (a long manual's
// structure, the vectors of its thousands of chunks) travels by reference:
// the body is written to the JetStream object store BodiesBucket first, and
// the message carries its name in HeaderBodyRef and no body. The worker
// loop (package worker) reads it back before the handler sees the message,
// so no stage handles a reference itself.
//
// The bucket keeps an object as long as the streams keep a message (their
// MaxAge, counted from its writing), so a body lives as long as the message
// that names it and is collected with it: a replay (`nats` CLI) within the
// streams' age finds its body, and nothing else has to delete it. A dead
// letter keeps only the reference: re-driven more than 30 days after the
// upload, it finds the body gone and is dead-lettered again, saying so.
const (
	BodiesBucket  = "strata-bodies"
	HeaderBodyRef = "Strata-Body-Ref"
)

// headerRoom is what a message's headers may take beside its body (message
// id, kind, trace, the body reference) within the server's max_payload.
const headerRoom = 16 << 10

// BodiesConfig returns the configuration of the object store holding
// bodies sent by reference, with the given replica count.
func BodiesConfig(replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket:      BodiesBucket,
		Description: "bodies of Strata messages over the message limit, kept as long as the streams keep the messages",
		TTL:         streamMaxAge,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	}
}

// ErrBodyGone is why a message sent by reference cannot be handled: its
// body is no longer in BodiesBucket (older than the streams' age, or the
// bucket was removed). No redelivery brings it back.
var ErrBodyGone = errors.New("message body sent by reference is gone from " + BodiesBucket)

// inlineLimit is the largest body p sends in the message itself: its own
// MaxInline, within the server's max_payload less room for the headers.
func (p Publisher) inlineLimit() int {
	limit := p.MaxInline
	if p.JS == nil {
		return limit
	}
	if nc := p.JS.Conn(); nc != nil {
		if server := int(nc.MaxPayload()) - headerRoom; server > 0 && (limit <= 0 || server < limit) {
			limit = server
		}
	}
	return limit
}

// putBody writes data to BodiesBucket under a name made from subject and
// msgID (so a republish overwrites its own body), or the body's checksum
// without an id, and returns the name.
func (p Publisher) putBody(ctx context.Context, subject, msgID string, data []byte) (string, error) {
	store, err := p.JS.ObjectStore(ctx, BodiesBucket)
	if err != nil {
		return "", fmt.Errorf("open object store %s (created by the stack's set-up with the streams): %w", BodiesBucket, err)
	}
	if msgID == "" { // the same body under the same name
		sum := sha256.Sum256(data)
		msgID = hex.EncodeToString(sum[:])
	}
	name := subject + "/" + msgID
	if _, err := store.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(data)); err != nil {
		return "", fmt.Errorf("write the %d-byte body of %s to %s: %w", len(data), name, BodiesBucket, err)
	}
	return name, nil
}

// referenceStub is the body a message sent by reference carries: the
// object's key as the whole body holds it ({"object":{"key":...}}), so
// what reads a message only for its object (a dead letter's listing,
// ObjectKeyOf) needs no trip to the bucket; nil for a body without one.
func referenceStub(data []byte) []byte {
	key := ObjectKeyOf(data)
	if key == "" {
		return nil
	}
	stub, err := json.Marshal(map[string]any{"object": map[string]string{"key": key}})
	if err != nil {
		return nil
	}
	return stub
}

// Body returns msg's body: its data, or, for a message sent by reference,
// the body read from BodiesBucket. A body that is gone is ErrBodyGone.
func Body(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg) ([]byte, error) {
	name := msg.Headers().Get(HeaderBodyRef)
	if name == "" {
		return msg.Data(), nil
	}
	store, err := js.ObjectStore(ctx, BodiesBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("body %s: %w (no bucket)", name, ErrBodyGone)
	}
	if err != nil {
		return nil, fmt.Errorf("open object store %s for body %s: %w", BodiesBucket, name, err)
	}
	// A deadline of its own: without one, nats.go gives the whole read 5 s,
	// short for tens of MB on a loaded cluster.
	ctx, cancel := context.WithTimeout(ctx, bodyReadTimeout)
	defer cancel()
	obj, err := store.Get(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("body %s: %w", name, ErrBodyGone)
	}
	if err != nil {
		return nil, fmt.Errorf("read body %s from %s: %w", name, BodiesBucket, err)
	}
	defer obj.Close()
	info, err := obj.Info()
	if err != nil {
		return nil, fmt.Errorf("read body %s from %s: %w", name, BodiesBucket, err)
	}
	data := make([]byte, info.Size) // GetBytes would grow a buffer to twice the body
	if _, err := io.ReadFull(obj, data); err != nil {
		return nil, fmt.Errorf("read body %s (%d bytes) from %s: %w", name, info.Size, BodiesBucket, err)
	}
	return data, nil
}

// bodyReadTimeout bounds reading one body back.
const bodyReadTimeout = 2 * time.Minute
