package tools

// Reading a section inline is otherwise two Weaviate round trips in a row:
// the Section object (is the id a current section, within the budget?), then
// its chunks. A section's id derives from its version's (ids.Section), so
// its chunks can be asked for by section_id alone before the section is
// known, and used only when the id resolves to a section read inline, as of
// the same watermark. The chunks record their section, so with the catalog
// saying their version is current they resolve the section alone: one
// round trip.

import (
	"context"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
)

// maxPrefetchProjects bounds the speculative queries of one read: a key
// reading more projects than this resolves the id first.
const maxPrefetchProjects = 4

// sectionPrefetch is one project's speculative inline read of a section.
type sectionPrefetch struct {
	at   int64
	done chan struct{}
	rows []store.ChunkDetail
	err  error
}

// sectionPrefetches are a read's speculative section reads by project.
type sectionPrefetches struct {
	cancel context.CancelFunc
	by     map[string]*sectionPrefetch
	// catalog: the catalog answers for every project as of its watermark,
	// so the prefetched chunks may resolve the section (sectionNode).
	catalog bool
}

// prefetchSection starts the inline read of id as a section in each
// project the key reads, unless id cannot be one (a project or folder root,
// a document the catalog knows) or the key reads too many projects. The
// caller must call stop when done.
func (c *kbCall) prefetchSection(ctx context.Context, id string) *sectionPrefetches {
	p := &sectionPrefetches{cancel: func() {}, by: map[string]*sectionPrefetch{}}
	if !ids.Valid(id) || len(c.projects) > maxPrefetchProjects {
		return p
	}
	marks := make(map[string]int64, len(c.projects))
	p.catalog = c.t.docs != nil
	for _, project := range c.projects {
		if id == ids.Project(project) || id == ids.Folder(project, "", "") {
			return p
		}
		at, err := c.watermark(ctx, project)
		if err != nil {
			return p // resolve reports it
		}
		if c.t.docs != nil {
			_, found, ok := c.t.docs.DocumentAt(ctx, project, id, at)
			if ok && found {
				return p
			}
			p.catalog = p.catalog && ok
		}
		marks[project] = at
	}
	ctx, p.cancel = context.WithCancel(ctx)
	for project, at := range marks {
		f := &sectionPrefetch{at: at, done: make(chan struct{})}
		p.by[project] = f
		go func() {
			defer close(f.done)
			f.rows, f.err = c.t.knowledge.ChunkDetails(ctx, project, inlineSectionQuery(id, "", at))
		}()
	}
	return p
}

// stop abandons the reads not used and waits for them to end, so none
// outlives the call.
func (p *sectionPrefetches) stop() {
	p.cancel()
	for _, f := range p.by {
		<-f.done
	}
}

// rowsFor returns the prefetched chunks of section node n; ok is false when
// there are none to use (not asked, failed, another view or version), and
// the caller queries as usual.
func (p *sectionPrefetches) rowsFor(ctx context.Context, n *node) (rows []store.ChunkDetail, ok bool) {
	f := p.by[n.project]
	if f == nil || n.section == nil || f.at != n.at {
		return nil, false
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, false
	}
	if f.err != nil {
		return nil, false
	}
	for _, r := range f.rows {
		if r.FileVersionID != n.section.FileVersionID || r.SectionID != n.section.ID {
			return nil, false // not expected: section ids are unique to a version
		}
	}
	return f.rows, true
}

// sectionNode resolves id as a section from its prefetched chunks, without
// reading the Section object, when they tell it alone: the chunks record
// their section (store.ChunkDetail.Section, as the indexer writes them) and
// the catalog says their version is current as of the watermark. n is nil
// when they do not (nothing prefetched, another version, chunks written
// before that record, which then cost the wait for them before the usual
// resolution); without a catalog that answers it returns at once, so the
// usual resolution runs while the chunks are read. noChunks reports that
// every project was asked and none has a chunk in a section with this id,
// so id is most likely not a section (or one without chunks).
func (p *sectionPrefetches) sectionNode(ctx context.Context, c *kbCall, id string) (n *node, noChunks bool) {
	if len(p.by) == 0 || !p.catalog {
		return nil, false
	}
	noChunks = true
	for project, f := range p.by {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, false
		}
		if f.err != nil {
			noChunks = false
			continue
		}
		if len(f.rows) == 0 {
			continue
		}
		noChunks = false
		first := f.rows[0]
		if first.Section == nil || first.Branch != "" || first.SectionID != id {
			continue
		}
		if !c.t.currentInCatalog(ctx, project, first.FileID, first.FileVersionID, f.at) {
			continue
		}
		sec := *first.Section
		return &node{typ: typeSection, project: project, at: f.at, section: &sec, fileID: first.FileID, path: first.FilePath}, false
	}
	return nil, noChunks
}

// inlineSectionQuery selects a section's chunks for reading it inline: up to
// one more than maxInlineChunks, so that too many can be told.
func inlineSectionQuery(sectionID, fileVersionID string, at int64) store.ChunkQuery {
	return store.ChunkQuery{FileVersionID: fileVersionID, SectionID: sectionID, To: -1, At: at, Limit: maxInlineChunks + 1}
}
