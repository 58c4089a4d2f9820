package store

// Access changes being applied. An access change rewrites the readers of
// every object of a document, which takes seconds for a document of
// thousands of chunks; meanwhile the indexer announces the change in NATS
// KV (pipeline.RelabelsBucket) and every read here takes the document's
// readers from the announcement: in the where filter Weaviate applies
// (withReaders), for reads by id (readableObject) and in the catalog
// (projectCatalog.readable). Who may read a document therefore changes
// when its change is read, and never object by object.
//
// An announcement speaks for the file version it names: once the catalog
// holds another version of the file (new content or a delete, whose own
// readers are as new as its read) it no longer applies. The indexer
// withdraws it when the change is done.

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/wvquery"
)

// watchRelabels follows the relabels bucket until ctx ends. While the
// watch is down no announcement applies (reads fall back to the readers
// the objects hold).
func (c *Catalog) watchRelabels(ctx context.Context, js jetstream.JetStream) {
	c.followBucket(ctx, js, pipeline.RelabelsBucket, func(e jetstream.KeyValueEntry) {
		if e != nil { // nil: the end of the initial values
			c.noteRelabel(e)
		}
	}, c.clearRelabels)
}

// noteRelabel applies one update of the bucket.
func (c *Catalog) noteRelabel(e jetstream.KeyValueEntry) {
	project, fileID, ok := pipeline.ParseRelabelKey(e.Key())
	if !ok {
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		c.setRelabel(project, fileID, nil)
		return
	}
	var r pipeline.Relabel
	if err := json.Unmarshal(e.Value(), &r); err != nil || r.Project != project || r.FileID != fileID || len(r.Readers) == 0 {
		c.log.Warn("access change announcement unreadable", "key", e.Key(), "err", err)
		c.setRelabel(project, fileID, nil) // fall back to the objects' readers
		return
	}
	c.setRelabel(project, fileID, &r)
}

// setRelabel records r as fileID's announcement (nil: none).
func (c *Catalog) setRelabel(project, fileID string, r *pipeline.Relabel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byFile := c.relabels[project]
	if r == nil {
		if _, ok := byFile[fileID]; ok {
			delete(byFile, fileID)
			c.relabelCount.Add(-1)
		}
		return
	}
	if byFile == nil {
		if c.relabels == nil {
			c.relabels = map[string]map[string]pipeline.Relabel{}
		}
		byFile = map[string]pipeline.Relabel{}
		c.relabels[project] = byFile
		if pc := c.byKey[project]; pc != nil {
			pc.relabels = byFile
		}
	}
	if _, ok := byFile[fileID]; !ok {
		c.relabelCount.Add(1)
	}
	byFile[fileID] = *r
}

func (c *Catalog) clearRelabels() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for project := range c.relabels {
		clear(c.relabels[project])
	}
	c.relabelCount.Store(0)
}

// relabelled splits the files of project whose access is being changed by
// whether the caller with g may read them after the change.
func (c *Catalog) relabelled(project string, g access.Grant) (allow, deny []string) {
	if c == nil || c.relabelCount.Load() == 0 {
		return nil, nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	pc := c.byKey[project]
	for fileID, r := range c.relabels[project] {
		if r.Expired(time.Now()) || pc != nil && !pc.relabelApplies(r) {
			continue
		}
		if g.Matches(r.Readers) {
			allow = append(allow, fileID)
		} else {
			deny = append(deny, fileID)
		}
	}
	slices.Sort(allow)
	slices.Sort(deny)
	return allow, deny
}

// relabelApplies reports whether r still speaks for its file: the catalog
// holds no other version of it (c.mu held).
func (pc *projectCatalog) relabelApplies(r pipeline.Relabel) bool {
	if r.Expired(time.Now()) {
		return false
	}
	list := pc.files[r.FileID]
	if len(list) == 0 {
		return true
	}
	last := list[len(list)-1]
	return !last.Deleted && last.FileVersionID == r.FileVersionID
}

// readersOf is who may read v's file now: the readers of the access change
// being applied to it, else v's own (c.mu held).
func (pc *projectCatalog) readersOf(v Version) []string {
	if r, ok := pc.relabels[v.FileID]; ok && pc.relabelApplies(r) {
		return r.Readers
	}
	return v.Readers
}

// readable reports whether the caller in ctx may read v's file (c.mu held).
func (pc *projectCatalog) readable(ctx context.Context, v Version) bool {
	return Readable(ctx, pc.readersOf(v))
}

// relabelledReaders is readers, the filter of what the caller may read,
// with the files of allow added and those of deny taken out.
func relabelledReaders(readers *filters.WhereBuilder, allow, deny []string) *filters.WhereBuilder {
	if len(deny) > 0 {
		ops := []*filters.WhereBuilder{readers}
		for _, id := range deny {
			ops = append(ops, filters.Where().WithPath([]string{"file_id"}).WithOperator(filters.NotEqual).WithValueText(id))
		}
		readers = wvquery.And(ops...)
	}
	if len(allow) > 0 {
		files := filters.Where().WithPath([]string{"file_id"}).WithOperator(filters.ContainsAny).WithValueText(allow...)
		readers = filters.Where().WithOperator(filters.Or).WithOperands([]*filters.WhereBuilder{readers, files})
	}
	return readers
}

// relabelledObject reports whether the caller in ctx may read an object
// of fileID whose readers are readers, given the changes being applied.
func (c *Catalog) relabelledObject(ctx context.Context, project, fileID string, readers []string) bool {
	if c != nil && c.relabelCount.Load() > 0 {
		c.mu.RLock()
		r, ok := c.relabels[project][fileID]
		applies := ok && !r.Expired(time.Now()) && (c.byKey[project] == nil || c.byKey[project].relabelApplies(r))
		c.mu.RUnlock()
		if applies {
			readers = r.Readers
		}
	}
	return access.GrantFrom(ctx).Matches(readers)
}
