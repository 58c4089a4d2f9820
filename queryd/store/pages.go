package store

// How many rows a search asks Weaviate for at a time. Committed chunks are
// immutable versions (indexer/index/doc.go): a file's replaced versions keep
// their chunks, and their vectors, until garbage collection (7 days by
// default). The indexer closes their rows once it has replaced them
// (valid_to, indexer/index/validity.go) and searches leave closed rows out
// inside Weaviate (replaced.go), so the first page, of base rows, usually
// holds the hits. Rows not closed (an index written before valid_to
// existed, or a crash between a commit and its closing) are dropped only
// after Weaviate found them; the next page is then sized from the share of
// the rows so far that were kept, so such an index costs a search about
// one page more, not one page per base rows. A search goes no deeper than
// searchRounds pages of base rows.

import "math"

const (
	// searchRounds bounds how many pages of the base size a search reads:
	// its depth (rows ranked) is at most searchRounds*base, however the
	// pages are cut.
	searchRounds = 6
	// pageMargin is how many more rows than the expected share of current
	// ones a later page asks for, so one more page is usually enough.
	pageMargin = 2
)

// nextPage is the size of a search's next page: base for the first; after
// fetched rows of which kept were hits, the rows that hold the want hits
// still wanted if hits go on at the rate seen so far (pageMargin over), or
// twice the rows fetched when none was kept; at least base, and cut at
// depth.
func nextPage(base, depth, fetched, kept, want int) int {
	if fetched == 0 {
		return min(base, depth)
	}
	n := 2 * fetched
	if kept > 0 {
		n = int(math.Ceil(float64(want) * pageMargin * float64(fetched) / float64(kept)))
	}
	return min(max(n, base), depth-fetched)
}
