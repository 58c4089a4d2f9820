package pipeline

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/tracing"
)

// Publisher publishes to JetStream with a message id, so a retried or replayed
// publish is stored once within the stream's duplicate window.
type Publisher struct {
	JS jetstream.JetStream
	// MaxInline is the largest body sent in the message itself; a larger
	// one goes by reference (BodiesBucket). 0: what the server's
	// max_payload allows (a smaller server limit always wins).
	MaxInline int
}

// Publish publishes data on subject and waits for the stream's ack. A body
// over the inline limit is written to BodiesBucket first and the message
// names it (HeaderBodyRef), so a consumer never meets a reference to a body
// not yet written.
func (p Publisher) Publish(ctx context.Context, subject, msgID string, headers map[string]string, data []byte) error {
	m := nats.NewMsg(subject)
	m.Data = data
	if limit := p.inlineLimit(); limit > 0 && len(data) > limit {
		name, err := p.putBody(ctx, subject, msgID, data)
		if err != nil {
			return fmt.Errorf("publish %s: %w", subject, err)
		}
		m.Data = referenceStub(data)
		m.Header.Set(HeaderBodyRef, name)
	}
	for k, v := range headers {
		m.Header.Set(k, v)
	}
	if msgID != "" {
		m.Header.Set(nats.MsgIdHdr, msgID)
	}
	tracing.Inject(ctx, m.Header) // the next stage continues this trace
	if _, err := p.JS.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	return nil
}
