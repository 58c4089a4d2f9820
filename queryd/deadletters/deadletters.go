// Package deadletters reads the DEADLETTER stream for the failures view:
// which object a dead letter was about, at which stage, why, after how many
// attempts and when.
package deadletters

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// Letter is one dead-lettered message.
type Letter struct {
	Sequence  uint64
	Stage     string
	Error     string
	Attempts  int
	FailedAt  time.Time
	Project   string // "" when the message named no valid object
	ObjectKey string // the bucket key, e.g. "acme/docs/a.md"
}

// Reader reads dead letters.
type Reader struct{ JS jetstream.JetStream }

// Recent returns up to max of the most recent dead letters, newest first.
func (r Reader) Recent(ctx context.Context, max int) ([]Letter, error) {
	st, err := r.JS.Stream(ctx, pipeline.DeadLetterStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	var out []Letter
	for seq := info.State.LastSeq; seq >= info.State.FirstSeq && seq > 0 && len(out) < max; seq-- {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("dead letter %d: %w", seq, err)
		}
		out = append(out, parse(m))
	}
	return out, nil
}

func parse(m *jetstream.RawStreamMsg) Letter {
	l := Letter{Sequence: m.Sequence, Stage: m.Header.Get(worker.HeaderStage), Error: m.Header.Get(worker.HeaderError), FailedAt: m.Time}
	l.Attempts, _ = strconv.Atoi(m.Header.Get(worker.HeaderDelivered))
	if t, err := time.Parse(time.RFC3339Nano, m.Header.Get(worker.HeaderFailedAt)); err == nil {
		l.FailedAt = t
	}
	key := pipeline.ObjectKeyOf(m.Data)
	if k, err := objkey.Parse(key); err == nil {
		l.Project, l.ObjectKey = k.Project, key
	}
	return l
}
