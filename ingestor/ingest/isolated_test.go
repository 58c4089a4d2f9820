package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/tokens"
	"github.com/strata-kb/strata/shared/pipeline"
)

// recordingReader answers with err, or reads with the registry, and
// counts the files it was given.
type recordingReader struct {
	err   error
	reads int
}

func (r *recordingReader) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	r.reads++
	if r.err != nil {
		return nil, r.err
	}
	return registry().Extract(ctx, data, name, lim)
}

// TestAFileWhoseAttemptWasCutShortIsReadAlone: a redelivered event, or
// one whose upload already has an attempt begun and not committed (the live
// copy's reader died), is read by the isolated reader; a first attempt is
// read in process. A reader that died there records the file failed with
// the cause; one stopped from outside leaves it to be read again.
func TestAFileWhoseAttemptWasCutShortIsReadAlone(t *testing.T) {
	c, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	const key = "acme/guide.md"
	put := eventJSON("s3:ObjectCreated:Put", key, 7)
	pendingFrom := func(etag, sequencer string, ago time.Duration) *fakeStates {
		return &fakeStates{states: []pipeline.ObjectState{{Key: key, Project: "acme", ETag: etag, Sequencer: sequencer,
			State: pipeline.StatePending, Stages: pipeline.StageTimes{Seen: time.Now().Add(-ago)}}}}
	}
	// limits() allows 20 s of extraction and 10 min of OCR: an attempt
	// older than that and a minute was cut short.
	cutShort, inFlight := 12*time.Minute, 3*time.Second
	died := fmt.Errorf("%w (signal: killed)", extract.ErrReaderDied)
	interrupted := fmt.Errorf("%w: shutting down", extract.ErrInterrupted)
	for _, tc := range []struct {
		name      string
		states    *fakeStates
		delivered uint64
		isolated  error // what the isolated reader answers
		alone     bool  // read by the isolated reader
		status    string
		retried   bool
	}{
		{"first delivery", &fakeStates{}, 1, nil, false, pipeline.StatusIndexed, false},
		{"redelivered", &fakeStates{}, 2, nil, true, pipeline.StatusIndexed, false},
		{"an attempt at this upload was cut short", pendingFrom("etag1", "0A", cutShort), 1, nil, true, pipeline.StatusIndexed, false},
		{"an attempt at this upload is in flight", pendingFrom("etag1", "0A", inFlight), 1, nil, false, pipeline.StatusIndexed, false},
		{"an attempt at an older upload began", pendingFrom("etag0", "09", cutShort), 1, nil, false, pipeline.StatusIndexed, false},
		{"the isolated reader died", &fakeStates{}, 3, died, true, pipeline.StatusFailed, false},
		{"the isolated reader was stopped from outside", &fakeStates{}, 2, interrupted, true, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inProcess, alone := &recordingReader{}, &recordingReader{err: tc.isolated}
			pub := &fakePub{}
			in := New(Config{MaxObjectBytes: 1 << 10, TargetTokens: 64, Limits: limits(), Isolated: alone},
				fakeStore{objects: map[string][]byte{key: []byte("# Guide")}}, &fakeAssets{}, inProcess, pub, tc.states, c, slog.New(slog.DiscardHandler))
			err := in.HandleDelivery(context.Background(), put, tc.delivered)
			if tc.retried {
				if !errors.Is(err, extract.ErrInterrupted) || len(pub.msgs) != 0 {
					t.Fatalf("want a retry and nothing published, got %v and %d messages", err, len(pub.msgs))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := alone.reads == 1 && inProcess.reads == 0; got != tc.alone {
				t.Fatalf("read alone %v (isolated %d, in process %d), want %v", got, alone.reads, inProcess.reads, tc.alone)
			}
			fv := decode(t, pub.msgs[0])
			if fv.Status != tc.status {
				t.Fatalf("status %q (%s), want %q", fv.Status, fv.Error, tc.status)
			}
			if tc.status == pipeline.StatusFailed && (!strings.Contains(fv.Error, "signal: killed") || !strings.Contains(fv.Error, "read alone after an earlier attempt")) {
				t.Fatalf("failure reason %q", fv.Error)
			}
		})
	}
}
