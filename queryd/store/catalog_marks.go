package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
)

// watchMarks follows the embedded bucket until ctx ends, restarting the
// watch when it breaks (the catalog is not ready meanwhile).
func (c *Catalog) watchMarks(ctx context.Context, js jetstream.JetStream) {
	for {
		err := c.watchMarksOnce(ctx, js)
		c.marksReady.Store(false)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("embedded marks watch restarts", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (c *Catalog) watchMarksOnce(ctx context.Context, js jetstream.JetStream) error {
	kv, err := awaitBucket(ctx, js, pipeline.EmbeddedBucket)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", pipeline.EmbeddedBucket, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("watch %s: closed", pipeline.EmbeddedBucket)
			}
			if e == nil { // the end of the initial values
				c.marksReady.Store(true)
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var m pipeline.EmbeddedMark
			if err := json.Unmarshal(e.Value(), &m); err != nil || m.Project == "" || m.Model == "" {
				c.log.Warn("embedded mark unreadable", "key", e.Key(), "err", err)
				continue
			}
			c.mark(m)
		}
	}
}

// mark records that m's version has m.Model's vectors; a visible indexed
// version adds its chunks to the project's embedded count once.
func (c *Catalog) mark(m pipeline.EmbeddedMark) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byModel := c.marks[m.Project]
	if byModel == nil {
		byModel = map[string]map[string]bool{}
		c.marks[m.Project] = byModel
	}
	versions := byModel[m.Model]
	if versions == nil {
		versions = map[string]bool{}
		byModel[m.Model] = versions
	}
	if versions[m.FileVersionID] {
		return // a replay
	}
	versions[m.FileVersionID] = true
	if pc := c.byKey[m.Project]; pc != nil {
		if v, ok := pc.visible[m.FileVersionID]; ok && !v.Deleted && v.Status == pipeline.StatusIndexed {
			pc.embedded[m.Model] += v.ChunkCount
		}
	}
}

// hasMarks reports whether any version was marked embedded with model (""
// = with any model): then its vectors, and their collection, exist.
func (c *Catalog) hasMarks(model string) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, byModel := range c.marks {
		if model == "" && len(byModel) > 0 {
			return true
		}
		if len(byModel[model]) > 0 {
			return true
		}
	}
	return false
}
