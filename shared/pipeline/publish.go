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
type Publisher struct{ JS jetstream.JetStream }

// Publish publishes data on subject and waits for the stream's ack.
func (p Publisher) Publish(ctx context.Context, subject, msgID string, headers map[string]string, data []byte) error {
	m := nats.NewMsg(subject)
	m.Data = data
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
