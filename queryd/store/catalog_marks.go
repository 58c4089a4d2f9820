package store

import (
	"context"
	"encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
)

// watchMarks follows the embedded bucket until ctx ends (the catalog is
// not ready while its watch is down).
func (c *Catalog) watchMarks(ctx context.Context, js jetstream.JetStream) {
	c.followBucket(ctx, js, pipeline.EmbeddedBucket, c.noteMark, func() { c.marksReady.Store(false) })
}

// noteMark applies one update of the embedded bucket (nil: the end of its
// initial values).
func (c *Catalog) noteMark(e jetstream.KeyValueEntry) {
	if e == nil {
		c.marksReady.Store(true)
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	var m pipeline.EmbeddedMark
	if err := json.Unmarshal(e.Value(), &m); err != nil || m.Project == "" || m.Model == "" {
		c.log.Warn("embedded mark unreadable", "key", e.Key(), "err", err)
		return
	}
	c.mark(m)
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
