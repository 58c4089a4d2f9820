package store

// How many rows a search asks Weaviate for at a time. Committed chunks are
// immutable versions (indexer/index/doc.go): a file's replaced versions keep
// their chunks, and their vectors, until garbage collection (7 days by
// default), and a search drops them only after Weaviate found them. Where
// most chunks are replaced ones (files overwritten often), fixed pages sized
// for a mostly current index took several, each ranking every row up to
// its offset again: under strata-chaos (60 files overwritten about every
// 18 s, about ten committed chunks per current one) a keyword search took
// about 2-3 pages and a vector search 1.4-3.7, each with a read of its chunk
// rows, so hybrid_search made about seven Weaviate queries in a row. The
// first page is therefore sized from the catalog's share of current chunks
// (1.0-1.3 pages there), and the search goes no deeper than it did with
// fixed pages.

import "math"

const (
	// searchRounds bounds how many pages of the base size a search reads:
	// its depth (rows ranked) is at most searchRounds*base, however the
	// pages are cut.
	searchRounds = 6
	// pageMargin is how many more rows than the expected share of current
	// ones a page asks for, so one page is usually enough.
	pageMargin = 2
)

// chunkShare returns project's chunks of its visible versions and every
// chunk its committed versions wrote (replaced ones included), as far as
// the catalog knows them.
func (c *Catalog) chunkShare(project string) (current, committed int, ok bool) {
	if c == nil {
		return 0, 0, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	pc := c.byKey[project]
	if pc == nil {
		return 0, 0, false
	}
	return pc.stats.Chunks, len(pc.chunks.file), true
}

// searchPages returns the first page and the depth of a search of project
// that wants limit current hits and would read pages of base rows: the
// first page is limit times the project's committed chunks per current one
// (pageMargin over), at least base; the depth is searchRounds*base, as with
// fixed pages. Without the catalog's counts the page is base.
func (s *Store) searchPages(project string, limit, base int) (page, depth int) {
	depth = searchRounds * base
	current, committed, ok := s.catalog.chunkShare(project)
	return firstPage(limit, base, depth, current, committed, ok), depth
}

// firstPage is searchPages' arithmetic: a page that holds limit current
// rows if they are spread evenly among the committed ones.
func firstPage(limit, base, depth, current, committed int, known bool) int {
	if !known || committed <= current || current <= 0 {
		return base
	}
	want := math.Ceil(float64(limit) * pageMargin * float64(committed) / float64(current))
	return int(min(max(want, float64(base)), float64(depth)))
}

// nextPage is the size of the page after the rows fetched so far: the same
// size again, cut at depth.
func nextPage(page, fetched, depth int) int { return min(page, depth-fetched) }
