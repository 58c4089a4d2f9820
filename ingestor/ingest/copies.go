package ingest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/strata-kb/strata/ingestor/event"
)

// MinIO announces each upload twice: at once (the live target) and again
// from its durable queue about 3 s later. The second copy of an upload
// whose first is still being read in this ingestor used to be read again
// beside it (the state says pending until the indexer commits): a slow
// file, a 200 MB scan read by OCR, was read twice at once, twice the CPU
// and twice the memory. copies makes such a copy wait for the first and
// skip the work if the first published the file version (the chunks stream
// holds it); if the first failed, the copy does the work. Copies that reach
// another ingestor replica are still read there, and the stream's
// de-duplication drops the second file version, as before.
type copies struct {
	mu        sync.Mutex
	inFlight  map[uploadID]chan struct{} // closed when the first copy ends
	published map[uploadID]time.Time     // first copies that published, for CopyWindow
}

// uploadID names one upload, the same in both copies of its event.
type uploadID struct{ key, sequencer, etag, versionID string }

func uploadOf(r event.Record) uploadID {
	return uploadID{r.Key, r.Sequencer, r.ETag, r.VersionID}
}

// claim waits while another copy of id is in flight here. It returns false
// when a copy of id published its file version within CopyWindow of now
// (nothing left to do); true when the caller is to read the upload, and
// must then call done with whether it published.
func (c *copies) claim(ctx context.Context, id uploadID, now time.Time) (bool, error) {
	for {
		c.mu.Lock()
		if c.inFlight == nil {
			c.inFlight, c.published = map[uploadID]chan struct{}{}, map[uploadID]time.Time{}
		}
		if at, ok := c.published[id]; ok && now.Sub(at) <= CopyWindow {
			c.mu.Unlock()
			return false, nil
		}
		wait, busy := c.inFlight[id]
		if !busy {
			c.inFlight[id] = make(chan struct{})
			c.mu.Unlock()
			return true, nil
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, fmt.Errorf("wait for the other copy of %s's event: %w", id.key, ctx.Err())
		}
	}
}

// done ends the caller's claim on id, recording at when it published.
func (c *copies) done(id uploadID, published bool, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.inFlight[id])
	delete(c.inFlight, id)
	if !published {
		return
	}
	for old, t := range c.published { // a few entries a second: pruned as they come
		if at.Sub(t) > CopyWindow {
			delete(c.published, old)
		}
	}
	c.published[id] = at
}
