package main

// The metadata mode (-metadata): what a document metadata filter costs a
// search. Every file has metadata (addMetadata): a tag dept (one of ten
// strings), and from the file itself a number year (ten values) and a date
// reviewed (ten stretches of days), written with the indexer's commit path,
// which puts the tokens and range properties on every chunk and chunk
// vector. Each filter under test (metaFilterCases) matches exactly 10% of
// the documents. Each row calls hybrid_search with the same inputs without
// and with one filter, for keyword (alpha 0), vector (alpha 1) and hybrid
// (the default), in rounds that alternate which side goes first; Weaviate
// rows run the core queries from this process without and with the filter
// (for the vector ranking both as queryd sends it, the filter inside the
// nearVector query, and as it did before commit 9f68d19, the filter on the
// chunks found after it), which tells Weaviate's cost from Strata's. A check pass verifies
// the filtered answers: every hit's document matches the filter (Filter.Match
// on the metadata the corpus gave it), the hit shows that metadata, and
// top_k is full whenever the filter lets that many through.

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/queryd/store/grpcsearch"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/metafilter"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/terms"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/wvquery"
)

// The corpus's metadata: dept is a tag (a string), year and reviewed come
// from the file (typed: a number and a date).
var metaDepts = []string{"legal", "finance", "engineering", "sales", "marketing", "support", "hr", "operations", "research", "security"}

const (
	metaYear0 = 2015 // years metaYear0 .. metaYear0+9
	// reviewed: stretch s (0..9) is the days metaReviewedStep*s .. +28
	// after metaReviewed0.
	metaReviewedStep = 36
)

var metaReviewed0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// metaSlots are file k's three digits: those of its place p in a seeded
// permutation of the files, so each is uniform over the files, the three
// are independent (every combination once in each 1,000 files) and none
// follows the file order (the load order, and the files holding the
// model-embedded chunks). With a multiple of 1,000 files each value of
// each digit is exactly 10% of them.
func metaSlots(perm []int, k int) (dept, year, reviewed int) {
	p := perm[k]
	return p % 10, (p / 10) % 10, (p / 100) % 10
}

// addMetadata gives every file of c its metadata, as the ingestor hands it
// to the indexer: the sources (a tag, the file's own typed properties),
// which the indexer merges, and the merge itself.
func addMetadata(c *corpus, seed int64) {
	perm := rand.New(rand.NewPCG(uint64(seed), 0x6d657461)).Perm(len(c.Files))
	for k, f := range c.Files {
		d, y, r := metaSlots(perm, k)
		day := metaReviewedStep*r + perm[k]%29
		f.FV.MetadataSources = metadata.Sources{
			Tags: map[string]string{"dept": metaDepts[d]},
			File: metadata.Metadata{
				"year":     {Kind: metadata.Number, Number: float64(metaYear0 + y)},
				"reviewed": metadata.FromString(metaReviewed0.AddDate(0, 0, day).Format(time.DateOnly)),
			},
		}
		f.FV.Metadata, _ = metadata.Merge(f.FV.MetadataSources)
	}
}

// metaFilterCase is one filter under test.
type metaFilterCase struct {
	name   string
	raw    json.RawMessage // as hybrid_search takes it
	filter metadata.Filter
	where  *filters.WhereBuilder // as queryd sends it to Weaviate (shared/metafilter)
}

// metaFilterCases are the filters under test, each matching 10% of the
// documents (TestMetadataCorpus).
func metaFilterCases() []metaFilterCase {
	lastStretch := metaReviewed0.AddDate(0, 0, metaReviewedStep*9).Format(time.DateOnly)
	return parseFilterCases([]struct{ name, raw string }{
		{"equality", `{"dept": "legal"}`},
		{"number range", fmt.Sprintf(`{"year": {"gte": %d}}`, metaYear0+9)},
		{"date range", fmt.Sprintf(`{"reviewed": {"gte": %q}}`, lastStretch)},
		{"combination", fmt.Sprintf(`{"dept": {"any": ["legal", "finance"]}, "year": {"gte": %d}}`, metaYear0+5)},
	})
}

// metaSelectiveCases are filters the check also asks (not measured): one
// matching 1% of the documents, where a ranking that filters its
// candidates after the fact finds the fewest.
func metaSelectiveCases() []metaFilterCase {
	return parseFilterCases([]struct{ name, raw string }{
		{"1%", fmt.Sprintf(`{"dept": "legal", "year": %d}`, metaYear0+9)},
	})
}

func parseFilterCases(cases []struct{ name, raw string }) []metaFilterCase {
	var out []metaFilterCase
	for _, c := range cases {
		f, err := metadata.ParseFilter(json.RawMessage(c.raw))
		if err != nil {
			panic(fmt.Sprintf("metadata filter %s: %v", c.raw, err))
		}
		where, err := metafilter.Where(f, nil) // the loaded index has every range property
		if err != nil {
			panic(fmt.Sprintf("metadata filter %s: %v", c.raw, err))
		}
		out = append(out, metaFilterCase{name: c.name, raw: json.RawMessage(c.raw), filter: f, where: where})
	}
	return out
}

// matching returns the files of c whose metadata f matches.
func (c *corpus) matching(f metadata.Filter) []*corpusFile {
	var out []*corpusFile
	for _, file := range c.Files {
		if f.Match(file.FV.Metadata) {
			out = append(out, file)
		}
	}
	return out
}

// The direct side's queries with a metadata filter (nil: none).

// keywordWhere is hybrid_search's keyword ranking as queryd asks Weaviate
// for it (store.SearchKeywordMatching's first round, 3 x limit rows): the
// BM25 query of direct.keyword (the stemmed terms, then the exact words when
// they find nothing) within where.
func (d *direct) keywordWhere(ctx context.Context, project, query string, limit int, where *filters.WhereBuilder) (int, error) {
	scope := wvquery.And(intOp("valid_from", filters.LessThanEqual, d.at[project]),
		filters.Where().WithPath([]string{"branch"}).WithOperator(filters.ContainsAny).WithValueText(""))
	if where != nil {
		scope = wvquery.And(scope, where)
	}
	ask := func(bm *grpcsearch.BM25) (int, error) {
		return d.search(ctx, grpcsearch.Query{Class: schema.ChunkClass, Tenant: project, Fields: chunkFields, BM25: bm, Where: scope, Limit: 3 * limit})
	}
	exact := &grpcsearch.BM25{Query: query, Properties: []string{"content"}}
	stemmed := terms.Query(query)
	if stemmed == "" {
		return ask(exact)
	}
	n, err := ask(&grpcsearch.BM25{Query: stemmed, Properties: []string{schema.ContentTermsProperty, schema.HeadingTermsProperty + "^1"}})
	if err != nil || n > 0 {
		return n, err
	}
	return ask(exact)
}

// queryd's vector search (store.SearchVector) asks for at most this many
// rounds of nearest neighbours.
const querydVectorRounds = 6

// vectorRounds is hybrid_search's vector ranking as queryd asked Weaviate
// for it before commit 9f68d19 (store.SearchVector without VectorWhere,
// the filter on the chunks found after it): rounds of the max(3/2 limit, 30)
// nearest ChunkVectors (nearVector with an offset, no metadata filter),
// then those chunks within where, until limit chunks pass or 6 rounds are
// done. It returns the chunks found (at most limit) and the rounds taken.
func (d *direct) vectorRounds(ctx context.Context, project string, vec []float32, limit int, where *filters.WhereBuilder) (found, rounds int, err error) {
	fetch := max(limit*3/2, 30)
	for offset := 0; found < limit && rounds < querydVectorRounds; offset += fetch {
		rounds++
		ids, err := d.nearest(ctx, project, vec, offset, fetch, nil)
		if err != nil {
			return found, rounds, err
		}
		if len(ids) > 0 {
			n, err := d.chunksWhere(ctx, project, ids, where)
			if err != nil {
				return found, rounds, err
			}
			found += n
		}
		if len(ids) < fetch {
			break
		}
	}
	return min(found, limit), rounds, nil
}

// vectorInside is the vector ranking with the filter inside the nearVector
// query (ChunkVector carries the same meta tokens and range properties as
// Chunk): one round of the max(3/2 limit, 30) nearest ChunkVectors that
// match, then their chunks: what queryd sends (store.SearchVector with
// VectorWhere, since commit 9f68d19).
func (d *direct) vectorInside(ctx context.Context, project string, vec []float32, limit int, where *filters.WhereBuilder) (int, error) {
	ids, err := d.nearest(ctx, project, vec, 0, max(limit*3/2, 30), where)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	n, err := d.chunksWhere(ctx, project, ids, where)
	return min(n, limit), err
}

// nearest is the chunk ids of the fetch nearest ChunkVectors from offset
// on (main only), within where.
func (d *direct) nearest(ctx context.Context, project string, vec []float32, offset, fetch int, where *filters.WhereBuilder) ([]string, error) {
	return d.nearestTo(ctx, project, &grpcsearch.NearVector{Vector: vec, Target: d.vectorName}, offset, fetch, where)
}

// chunksWhere reads the chunks of ids as of the watermark within where
// (store.visibleChunks' query) and returns how many there are.
func (d *direct) chunksWhere(ctx context.Context, project string, ids []string, where *filters.WhereBuilder) (int, error) {
	filter := wvquery.And(filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(ids...),
		intOp("valid_from", filters.LessThanEqual, d.at[project]))
	if where != nil {
		filter = wvquery.And(filter, where)
	}
	return d.search(ctx, grpcsearch.Query{Class: schema.ChunkClass, Tenant: project, Fields: chunkFields, Where: filter, Limit: len(ids)})
}

// hybrid_search's defaults the rows rely on.
const (
	hybridTopK  = 10             // top_k
	hybridFetch = 2 * hybridTopK // each ranking's limit
	// hybridMaxTopK is hybrid_search's largest top_k: the check also asks
	// for it, where a filter that drops 90% of the candidates needs the
	// most of them.
	hybridMaxTopK = 50
)

// metaKinds are the rankings measured: hybrid_search's alpha for each.
var metaKinds = []struct {
	kind  string
	alpha *float64 // nil: the default (hybrid)
}{{"keyword", ptrTo(0.0)}, {"vector", ptrTo(1.0)}, {"hybrid", nil}}

func ptrTo[T any](v T) *T { return &v }

// metaRow is one row: hybrid_search without and with a filter, or a
// Weaviate query without and with it.
type metaRow struct {
	name   string
	kind   string // keyword, vector, hybrid: a tool row the goal names; "A/A" both sides unfiltered; "" a Weaviate row
	filter *metaFilterCase
	alpha  *float64
	// topK is the row's top_k (0: hybrid_search's default); a row with
	// checkOnly is checked, not measured.
	topK      int
	checkOnly bool
	// plain and filtered are a Weaviate row's sides.
	plain, filtered func(ctx context.Context, in input) (int, error)
	doc             string
}

func (r metaRow) weaviate() bool { return r.kind == "" }

// k is the row's top_k.
func (r metaRow) k() int {
	if r.topK > 0 {
		return r.topK
	}
	return hybridTopK
}

// metaResult is one row at one concurrency: side a without the filter, b with it.
type metaResult struct {
	metaRow
	pair // experiment: the settings of ChunkVector's vector index changed (-metadata-index)
}

// metaCheck is what the check pass found for one filter and ranking.
type metaCheck struct {
	name, kind, filter string
	topK               int
	inputs, errors     int
	firstErr           string
	// plainHits are the unfiltered answers' hits, plainMatching those of
	// them in documents the filter matches.
	plainHits, plainMatching int
	hits                     int
	violations               int // filtered hits in documents the filter does not match: must be 0
	metaWrong                int // filtered hits whose metadata is not their document's
	// full counts the inputs where the filter lets at least top_k through
	// (Weaviate, the filter inside each ranking's query), short the
	// answers with fewer hits than that (at most top_k).
	full, short int
	// rounds and shortRankings: queryd's filtered vector ranking as this
	// process replays it (vectorRounds): rounds taken, and rankings that
	// ended with fewer than 2 x top_k chunks (the ranking's limit).
	rounds, rankings, shortRankings int
}

// metaBench measures the metadata rows.
type metaBench struct {
	*bench
	filters   []metaFilterCase
	selective []metaFilterCase       // checked, not measured
	files     map[string]*corpusFile // by file id
}

// metaRun is the metadata mode's report.
type metaRun struct {
	pairRun
	props       string // the metadata properties' index settings
	filters     []metaFilterCase
	selective   []metaFilterCase
	experiments []string // the index settings of each experiment, in turn
	queries     int      // the query pool's size
	checks      []metaCheck
	results     []metaResult
}

// metaRows lists the rows, in table order.
func (mb *metaBench) metaRows() []metaRow {
	d, q := mb.direct, mb.queries
	var rows []metaRow
	for i := range mb.filters {
		fc := &mb.filters[i]
		for _, k := range metaKinds {
			rows = append(rows, metaRow{name: k.kind + ", " + fc.name, kind: k.kind, filter: fc, alpha: k.alpha,
				doc: fmt.Sprintf("hybrid_search %s, without and with metadata %s", alphaDoc(k.alpha), fc.raw)})
		}
	}
	for i := range mb.filters {
		fc := &mb.filters[i]
		for _, k := range metaKinds {
			rows = append(rows, metaRow{name: fmt.Sprintf("%s top_k %d, %s", k.kind, hybridMaxTopK, fc.name), kind: k.kind, filter: fc, alpha: k.alpha,
				topK: hybridMaxTopK, checkOnly: true})
		}
	}
	for i := range mb.selective {
		fc := &mb.selective[i]
		for _, k := range metaKinds {
			rows = append(rows, metaRow{name: k.kind + ", " + fc.name, kind: k.kind, filter: fc, alpha: k.alpha, checkOnly: true})
		}
	}
	rows = append(rows, metaRow{name: "hybrid, no filter on either side (A/A)", kind: "A/A",
		doc: "hybrid_search with its defaults on both sides: the method's noise floor"})
	for i := range mb.filters {
		fc := &mb.filters[i]
		kw := func(w *filters.WhereBuilder) func(ctx context.Context, in input) (int, error) {
			return func(ctx context.Context, in input) (int, error) {
				return d.keywordWhere(ctx, in.project(), q.texts[in.query], hybridFetch, w)
			}
		}
		rounds := func(w *filters.WhereBuilder) func(ctx context.Context, in input) (int, error) {
			return func(ctx context.Context, in input) (int, error) {
				n, _, err := d.vectorRounds(ctx, in.project(), q.vecs[in.query], hybridFetch, w)
				return n, err
			}
		}
		inside := func(w *filters.WhereBuilder) func(ctx context.Context, in input) (int, error) {
			return func(ctx context.Context, in input) (int, error) {
				return d.vectorInside(ctx, in.project(), q.vecs[in.query], hybridFetch, w)
			}
		}
		near := func(w *filters.WhereBuilder) func(ctx context.Context, in input) (int, error) {
			return func(ctx context.Context, in input) (int, error) {
				ids, err := d.nearest(ctx, in.project(), q.vecs[in.query], 0, max(hybridFetch*3/2, 30), w)
				return len(ids), err
			}
		}
		rows = append(rows,
			metaRow{name: "Weaviate keyword, " + fc.name, filter: fc, plain: kw(nil), filtered: kw(fc.where),
				doc: fmt.Sprintf("the keyword ranking's BM25 query as queryd sends it (limit %d), the filter ANDed to its where", 3*hybridFetch)},
			metaRow{name: "Weaviate vector, filter after nearVector, " + fc.name, filter: fc, plain: rounds(nil), filtered: rounds(fc.where),
				doc: fmt.Sprintf("the vector ranking as queryd asked for it before commit 9f68d19: nearVector on ChunkVector without the filter, %d at a time with an offset, then those chunks within the filter, until %d pass or %d rounds", max(hybridFetch*3/2, 30), hybridFetch, querydVectorRounds)},
			metaRow{name: "Weaviate vector, filter in nearVector, " + fc.name, filter: fc, plain: inside(nil), filtered: inside(fc.where),
				doc: fmt.Sprintf("the vector ranking as queryd asks for it (store.SearchVector with VectorWhere, since commit 9f68d19): the filter inside the nearVector query on ChunkVector (one round of %d), then the chunks", max(hybridFetch*3/2, 30))},
			metaRow{name: "Weaviate nearVector alone, " + fc.name, filter: fc, plain: near(nil), filtered: near(fc.where),
				doc: fmt.Sprintf("the first half of the previous row: nearVector on ChunkVector, limit %d, chunk ids only, without and with the filter", max(hybridFetch*3/2, 30))},
		)
	}
	return rows
}

func alphaDoc(alpha *float64) string {
	switch {
	case alpha == nil:
		return "with its defaults (relative fusion, alpha 0.5)"
	case *alpha == 0:
		return "alpha 0 (keyword only)"
	}
	return "alpha 1 (vector only)"
}

// args are hybrid_search's arguments for a tool row's input, with or
// without the row's filter.
func (mb *metaBench) args(r metaRow, filtered bool) func(in input) map[string]any {
	return func(in input) map[string]any {
		a := map[string]any{"query": mb.queries.texts[in.query]}
		if r.topK > 0 {
			a["top_k"] = r.topK
		}
		if r.alpha != nil {
			a["alpha"] = *r.alpha
		}
		if filtered && r.filter != nil {
			a["metadata"] = r.filter.raw
		}
		return a
	}
}

// callStructured invokes a tool and returns its structured content (the
// JSON; hybrid_search may lead its text with a note), else its text.
func callStructured(ctx context.Context, c *rpcClient, tool string, args map[string]any) (string, error) {
	res, text, err := callTool(ctx, c, tool, args)
	if err != nil {
		return "", err
	}
	if sc := res.Result.StructuredContent; len(sc) > 0 && string(sc) != "null" {
		return string(sc), nil
	}
	return text, nil
}

// structuredSide calls tool through s, one client per worker.
func structuredSide(s sessions, tool string, args func(input) map[string]any) callFunc {
	return func(ctx context.Context, worker int, in input, inspect bool) (outcome, error) {
		text, err := callStructured(ctx, s[worker], tool, args(in))
		if err != nil || !inspect {
			return outcome{}, err
		}
		hits, err := countHits(text)
		return outcome{hits: hits, bytes: len(text)}, err
	}
}

// indexRows are the rows an experiment on ChunkVector's vector index
// measures again: those whose nearVector query may carry the filter.
func indexRow(r metaRow) bool {
	return r.kind == "vector" || r.kind == "hybrid" ||
		strings.HasPrefix(r.name, "Weaviate vector, filter in nearVector") || strings.HasPrefix(r.name, "Weaviate nearVector alone")
}

// runMeta measures the selected rows at each concurrency; with experiment
// set, only the rows indexRow names.
func (mb *metaBench) runMeta(ctx context.Context, experiment string) ([]metaResult, error) {
	var out []metaResult
	for _, r := range mb.metaRows() {
		if r.checkOnly || !mb.cfg.selected(r.name) || (experiment != "" && !indexRow(r)) {
			continue
		}
		sides := []callFunc{directSide(r.plain), directSide(r.filtered)}
		if !r.weaviate() {
			sides = []callFunc{structuredSide(mb.sessions, "hybrid_search", mb.args(r, false)), structuredSide(mb.sessions, "hybrid_search", mb.args(r, true))}
		}
		if err := mb.measurePairs(ctx, "metadata", r.name, experiment, sides, func(p pair) {
			res := metaResult{metaRow: r, pair: p}
			mb.printMeta(res)
			out = append(out, res)
		}); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (mb *metaBench) printMeta(r metaResult) {
	var sb strings.Builder
	name := r.name
	if r.experiment != "" {
		name += " [" + r.experiment + "]"
	}
	fmt.Fprintf(&sb, "%-48s c=%-2d n=%-4d plain p50 %7s p95 %7s | filtered p50 %7s p95 %7s | x%.2f %+.2f ms | hits %s / %s | load %s",
		name, r.c, r.a.calls, ms(r.a.percentile(0.5)), ms(r.a.percentile(0.95)), ms(r.b.percentile(0.5)), ms(r.b.percentile(0.95)),
		r.p50Ratio(), r.p50Diff(), meanHits(r.a.hits), meanHits(r.b.hits), r.load1)
	sb.WriteString(r.sideErrors())
	fmt.Fprintln(mb.progress, sb.String())
}

// metaHit is what the check reads of a hit.
type metaHit struct {
	DocumentID string            `json:"document_id"`
	Metadata   metadata.Metadata `json:"metadata"`
}

// metaHits reads hybrid_search's hits.
func metaHits(text string) ([]metaHit, error) {
	var out struct {
		Results *[]metaHit `json:"results"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("answer is not hybrid_search's JSON: %w", err)
	}
	if out.Results == nil {
		return nil, errors.New("answer has no results")
	}
	for i, h := range *out.Results {
		if h.DocumentID == "" {
			return nil, fmt.Errorf("hit %d names no document", i)
		}
	}
	return *out.Results, nil
}

// available is how many hits a filtered answer of r can have for in:
// each ranking's matches with the filter inside Weaviate's query, at most
// top_k.
func (mb *metaBench) available(ctx context.Context, r metaRow, in input) (int, error) {
	d, q, fc, kind := mb.direct, mb.queries, r.filter, r.kind
	n := 0
	if kind != "vector" {
		k, err := d.keywordWhere(ctx, in.project(), q.texts[in.query], 2*r.k(), fc.where)
		if err != nil {
			return 0, err
		}
		n += k
	}
	if kind != "keyword" {
		v, err := d.vectorInside(ctx, in.project(), q.vecs[in.query], 2*r.k(), fc.where)
		if err != nil {
			return 0, err
		}
		n += v
	}
	return min(n, r.k()), nil
}

// checkMeta calls every selected tool row without and with its filter for
// n inputs and checks the filtered answers against the corpus's metadata.
func (mb *metaBench) checkMeta(ctx context.Context, n int) ([]metaCheck, error) {
	var out []metaCheck
	for _, r := range mb.metaRows() {
		if r.weaviate() || r.filter == nil || !mb.cfg.selected(r.name) {
			continue
		}
		chk := metaCheck{name: r.name, kind: r.kind, filter: string(r.filter.raw), topK: r.k()}
		plainArgs, filteredArgs := mb.args(r, false), mb.args(r, true)
		for _, in := range mb.inputs(seedOf("check/"+r.name, 0), n) {
			chk.inputs++
			fail := func(err error) {
				chk.errors++
				if chk.firstErr == "" {
					chk.firstErr = err.Error()
				}
			}
			plain, err := callStructured(ctx, mb.sessions[0], "hybrid_search", plainArgs(in))
			if err != nil {
				fail(fmt.Errorf("unfiltered: %w", err))
				continue
			}
			filtered, err := callStructured(ctx, mb.sessions[0], "hybrid_search", filteredArgs(in))
			if err != nil {
				fail(fmt.Errorf("filtered: %w", err))
				continue
			}
			ph, err := metaHits(plain)
			if err != nil {
				fail(fmt.Errorf("unfiltered: %w", err))
				continue
			}
			fh, err := metaHits(filtered)
			if err != nil {
				fail(fmt.Errorf("filtered: %w", err))
				continue
			}
			chk.plainHits += len(ph)
			for _, h := range ph {
				if f := mb.files[h.DocumentID]; f != nil && r.filter.filter.Match(f.FV.Metadata) {
					chk.plainMatching++
				}
			}
			chk.hits += len(fh)
			for _, h := range fh {
				f := mb.files[h.DocumentID]
				if f == nil || !r.filter.filter.Match(f.FV.Metadata) {
					chk.violations++
					continue
				}
				if metaJSON(h.Metadata) != metaJSON(f.FV.Metadata) {
					chk.metaWrong++
				}
			}
			want, err := mb.available(ctx, r, in)
			if err != nil {
				fail(fmt.Errorf("filtered query in Weaviate: %w", err))
				continue
			}
			if want >= r.k() {
				chk.full++
			}
			if len(fh) < want {
				chk.short++
			}
			if r.kind != "keyword" {
				found, rounds, err := mb.direct.vectorRounds(ctx, in.project(), mb.queries.vecs[in.query], 2*r.k(), r.filter.where)
				if err != nil {
					fail(fmt.Errorf("queryd's vector ranking replayed: %w", err))
					continue
				}
				chk.rankings++
				chk.rounds += rounds
				if found < 2*r.k() {
					chk.shortRankings++
				}
			}
		}
		program.Logf(mb.progress, "check %s: %d inputs, filtered hits %d (%d not matching, %d with wrong metadata), unfiltered hits %d (%d matching), short answers %d (full top_k available %d), %d errors %s",
			chk.name, chk.inputs, chk.hits, chk.violations, chk.metaWrong, chk.plainHits, chk.plainMatching, chk.short, chk.full, chk.errors, clip(chk.firstErr, 160))
		out = append(out, chk)
	}
	return out, nil
}

// metaJSON is m as JSON with its keys in order ("" for none): how two
// documents' metadata compare.
func metaJSON(m metadata.Metadata) string {
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "!" + err.Error()
	}
	return string(b)
}

// runMetadataMode is the metadata mode after loading: check the index,
// check the filtered answers, measure, write the report.
func runMetadataMode(ctx context.Context, rep *report, st *localstack.Stack, b *bench, drain time.Duration) error {
	cfg := b.cfg
	mb := &metaBench{bench: b, filters: metaFilterCases(), selective: metaSelectiveCases(), files: map[string]*corpusFile{}}
	for _, f := range rep.corpus.Files {
		mb.files[f.FV.FileID] = f
	}
	run := &metaRun{pairRun: newPairRun(rep, cfg, drain), filters: mb.filters, selective: mb.selective, queries: len(b.queries.texts)}
	var err error
	if run.check, err = b.checkIndex(ctx); err != nil {
		return err
	}
	run.hnsw = vectorIndexSettings(ctx, st)
	run.props = metaPropertySettings(ctx, st)
	program.Logf(b.progress, "index check: %s; ChunkVector: %s; metadata properties: %s", run.check, run.hnsw, run.props)
	if run.checks, err = mb.checkMeta(ctx, cfg.MetadataChecks); err != nil {
		return err
	}
	hits := 0
	for _, c := range run.checks {
		hits += c.hits
	}
	if len(run.checks) > 0 && hits == 0 {
		return errors.New("metadata: no filtered answer had a hit: are the metadata tokens written on the chunks (indexer/index)?")
	}
	run.startMeasuring()
	run.results, err = mb.runMeta(ctx, "")
	run.measured()
	if err != nil {
		if len(run.results) > 0 {
			_ = writeMetadata(run) // keep what was measured
		}
		return err
	}
	var changed []string
	for _, setting := range cfg.MetadataIndex {
		if err := writeMetadata(run); err != nil { // keep what was measured should the experiment fail
			return err
		}
		if err := setVectorIndex(ctx, st, setting.key, setting.value); err != nil {
			return err
		}
		changed = append(changed, fmt.Sprintf("%s %v", setting.key, setting.value))
		run.experiments = append(run.experiments, strings.Join(changed, ", "))
		program.Logf(b.progress, "experiment: ChunkVector's vector index now: %s", vectorIndexSettings(ctx, st))
		more, err := mb.runMeta(ctx, strings.Join(changed, ", "))
		run.results = append(run.results, more...)
		run.measured()
		if err != nil {
			_ = writeMetadata(run)
			return err
		}
	}
	return writeMetadata(run)
}

// indexSetting is one change to ChunkVector's vector index config (-metadata-index).
type indexSetting struct {
	key   string
	value any // a whole number or a string
}

// parseIndexSettings reads "key=value,key=value" (applied in turn, each
// on top of the ones before).
func parseIndexSettings(s string) ([]indexSetting, error) {
	var out []indexSetting
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		var value any = v
		if n, err := strconv.Atoi(v); err == nil {
			value = n
		}
		out = append(out, indexSetting{key: k, value: value})
	}
	return out, nil
}

// setVectorIndex sets one key of the index config of every named vector
// of ChunkVector (e.g. flatSearchCutoff: Weaviate searches a filtered
// query flat, over every allowed vector, when the filter allows fewer
// objects than it, else it walks the graph with filterStrategy, acorn or
// sweeping).
func setVectorIndex(ctx context.Context, st *localstack.Stack, key string, value any) error {
	wv, err := schema.NewClient(st.Servers.WeaviateHost, st.Servers.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		return err
	}
	class, err := wv.Schema().ClassGetter().WithClassName(schema.ChunkVectorClass).Do(ctx)
	if err != nil {
		return fmt.Errorf("index experiment: read %s: %w", schema.ChunkVectorClass, err)
	}
	for name, vc := range class.VectorConfig {
		c, ok := vc.VectorIndexConfig.(map[string]any)
		if !ok {
			return fmt.Errorf("index experiment: vector %s: index config %T", name, vc.VectorIndexConfig)
		}
		c[key] = value
		vc.VectorIndexConfig = c
		class.VectorConfig[name] = vc
	}
	if err := wv.Schema().ClassUpdater().WithClass(class).Do(ctx); err != nil {
		return fmt.Errorf("index experiment: set %s %v on %s: %w", key, value, schema.ChunkVectorClass, err)
	}
	return nil
}

// metaPropertySettings are the metadata properties of Chunk and
// ChunkVector as Weaviate's schema reports them (type, tokenization,
// filterable and range indexes): whether a range filter has a range index.
func metaPropertySettings(ctx context.Context, st *localstack.Stack) string {
	var out []string
	for _, class := range []string{schema.ChunkClass, schema.ChunkVectorClass} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+st.Env.WeaviateHost+"/v1/schema/"+class, nil)
		req.Header.Set("Authorization", "Bearer "+st.Env.WeaviateWriterKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		var c struct {
			Properties []struct {
				Name              string   `json:"name"`
				DataType          []string `json:"dataType"`
				Tokenization      string   `json:"tokenization"`
				IndexFilterable   *bool    `json:"indexFilterable"`
				IndexRangeFilters *bool    `json:"indexRangeFilters"`
			} `json:"properties"`
		}
		err = json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		var props []string
		for _, p := range c.Properties {
			if p.Name != metadata.TokensProperty && !metadata.IsRangeProperty(p.Name) {
				continue
			}
			s := p.Name + " " + strings.Join(p.DataType, ",")
			if p.Tokenization != "" {
				s += " (" + p.Tokenization + ")"
			}
			if p.IndexFilterable != nil && *p.IndexFilterable {
				s += " filterable"
			}
			if p.IndexRangeFilters != nil && *p.IndexRangeFilters {
				s += " rangeFilters"
			}
			props = append(props, s)
		}
		sort.Strings(props)
		out = append(out, class+": "+strings.Join(props, "; "))
	}
	return strings.Join(out, "; ")
}

// writeMetadata writes the report to stdout and to cfg.Out (default docs/bench/metadata.md).
func writeMetadata(run *metaRun) error {
	out := cmp.Or(run.cfg.Out, filepath.Join("docs", "bench", "metadata.md"))
	if err := writeOut(out, run.markdown); err != nil {
		return err
	}
	program.Logf(os.Stderr, "metadata report: %s", out)
	return nil
}

// metaSearchGoal: a filtered search's p50 at most this many times the
// unfiltered one's (issue 35).
const metaSearchGoal = 1.2

// goal says whether a tool row meets the goal.
func (r metaResult) goal() string {
	if r.weaviate() || r.kind == "A/A" {
		return "-"
	}
	if x := r.p50Ratio(); x > metaSearchGoal {
		return fmt.Sprintf("missed (x%.3f)", x)
	}
	return "met"
}

func (run *metaRun) markdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	c, cfg := run.corpus, run.cfg
	run.head(bw, "Metadata filters: hybrid_search without and with a filter matching 10% of the documents, side by side")
	fmt.Fprintf(bw, "Index: %d chunks in %d files x %d chunks (%d sections, ~%d words a chunk), project(s) %s; vectors 512-d (use-lite-512: %d chunks embedded with the model, spread over the files, one in every %d chunks; the rest random unit vectors), HNSW cosine. ",
		c.chunkCount(), len(c.Files), c.ChunksPerFile, sectionsPerFile, wordsPerChunk, strings.Join(c.Projects, ", "), run.sample, max(1, c.chunkCount()/max(1, run.sample)))
	fmt.Fprintf(bw, "Every document has metadata: the tag `dept` (a string, one of %d: %s), and from the file itself `year` (a number, %d-%d) and `reviewed` (a date in %d: ten stretches of 29 days); ",
		len(metaDepts), strings.Join(metaDepts, ", "), metaYear0, metaYear0+9, metaReviewed0.Year())
	fmt.Fprintf(bw, "each value is given to 10%% of the documents by the digits of the document's place in a seeded permutation, so the keys are independent and follow neither the file order nor the model-embedded chunks. ")
	fmt.Fprintf(bw, "Loaded with the indexer's commit path (index.Writer.ApplyFileVersion + ApplyVectors, which merge FileVersion.MetadataSources and write the `meta` tokens and range properties on every chunk and chunk vector) in %s (%.0f chunks/s), vector queue drained %s later. %s.\n\n",
		run.load.Elapsed.Round(time.Second), run.load.chunksPerSecond(), run.drain.Round(time.Second), run.check)
	run.vectorIndex(bw)
	fmt.Fprintf(bw, "Metadata properties as Weaviate reports them: %s.\n\n", run.props)
	fmt.Fprintln(bw, "Filters (each matches exactly 10% of the documents, counted with metadata.Filter.Match on the corpus):")
	fmt.Fprintln(bw)
	for _, fc := range run.filters {
		fmt.Fprintf(bw, "- %s: `%s`: %d of %d documents\n", fc.name, fc.raw, len(c.matching(fc.filter)), len(c.Files))
	}
	fmt.Fprintln(bw)
	if len(run.selective) > 0 {
		fmt.Fprintln(bw, "The filter check also asks (not measured):")
		fmt.Fprintln(bw)
		for _, fc := range run.selective {
			fmt.Fprintf(bw, "- %s: `%s`: %d of %d documents\n", fc.name, fc.raw, len(c.matching(fc.filter)), len(c.Files))
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintf(bw, "Method: every row calls the same thing with the same inputs on both sides, without and with the filter; the queries are a pool of %d (two content words and the made-up word of a random document, so the document the query names matches a filter one time in ten). hybrid_search is called with top_k %d (its default); alpha 0 for keyword, 1 for vector, the default (0.5, relative fusion) for hybrid. After a warm-up, %d rounds per side alternate which side goes first. Load average %s before measuring; measured in %s. Latencies in ms, percentiles nearest-rank.\n\n",
		run.queries, hybridTopK, cfg.Rounds, run.loadMeasure, run.elapsed.Round(time.Second))

	fmt.Fprintln(bw, "## Goal")
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "A metadata filter matching 10%% of the documents keeps keyword, vector and hybrid p50 at most %.1fx the unfiltered query's (one client; issue 35).\n\n", metaSearchGoal)
	fmt.Fprintln(bw, "| row | kind | filter | unfiltered p50 | filtered p50 | filtered / unfiltered | difference ms | goal |")
	fmt.Fprintln(bw, "|---|---|---|---:|---:|---:|---:|---|")
	for _, r := range run.results {
		if r.weaviate() || r.c != 1 || r.experiment != "" {
			continue
		}
		filter := "-"
		if r.filter != nil {
			filter = "`" + string(r.filter.raw) + "`"
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %.2f | %+.2f | %s |\n", r.name, r.kind, strings.ReplaceAll(filter, "|", "\\|"), ms(r.a.percentile(0.5)), ms(r.b.percentile(0.5)),
			r.p50Ratio(), r.p50Diff(), r.goal())
	}
	fmt.Fprintln(bw)

	fmt.Fprintln(bw, "## hybrid_search through MCP: without against with the filter")
	fmt.Fprintln(bw)
	pairTableHead(bw, "row", "unfiltered", "filtered", "hits", "filtered hits", 0.95)
	for _, r := range run.results {
		if !r.weaviate() && r.experiment == "" {
			r.markdownRow(bw, r.name, 0.95)
		}
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "## Weaviate alone: the same queries without and with the filter")
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "From this process with queryd's client and protocol (gRPC), the filter built as queryd builds it (`meta` ContainsAny tokens; a range on the key's property AND its `key#kind` token). Whatever the tool rows add beyond these rows' difference is Strata's.")
	fmt.Fprintln(bw)
	pairTableHead(bw, "query", "no filter", "filter", "rows", "filtered rows", 0.95)
	for _, r := range run.results {
		if r.weaviate() && r.experiment == "" {
			r.markdownRow(bw, r.name, 0.95)
		}
	}
	fmt.Fprintln(bw)
	for _, e := range run.experiments {
		fmt.Fprintf(bw, "## Experiment: ChunkVector's vector index with %s\n\n", e)
		fmt.Fprintf(bw, "Measured after the rows above, with the index settings changed (Weaviate's defaults: flatSearchCutoff 40000, filterStrategy acorn; a filter allowing fewer objects than flatSearchCutoff is searched flat, over every allowed vector, else the graph is walked with the filter strategy). Each filter here allows about %d ChunkVectors.\n\n",
			run.corpus.chunkCount()/10)
		pairTableHead(bw, "row", "no filter", "filter", "rows", "filtered rows", 0.95)
		for _, r := range run.results {
			if r.experiment == e {
				r.markdownRow(bw, r.name, 0.95)
			}
		}
		fmt.Fprintln(bw)
	}

	fmt.Fprintln(bw, "## Filter check")
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "Before measuring, each tool row's hybrid_search was called without and with its filter for %d inputs, at its default top_k (%d) and at its largest (%d). A violation is a filtered hit in a document the filter does not match (metadata.Filter.Match on the metadata the corpus gave the document); wrong metadata a hit whose `metadata` is not its document's. Full counts the inputs where the filter lets at least top_k through in Weaviate (each ranking's query with the filter inside, 2 x top_k rows each, as hybrid_search asks), short the answers with fewer hits than that (at most top_k). The vector ranking is also replayed from this process as queryd asked for it before commit 9f68d19 (the filter after nearVector: nearVector without the filter, then the chunks within it, max(3 x top_k, 30) at a time, at most %d rounds): rounds is its mean, short rankings those that ended with fewer than 2 x top_k chunks.\n\n",
		cfg.MetadataChecks, hybridTopK, hybridMaxTopK, querydVectorRounds)
	fmt.Fprintln(bw, "| row | filter | top_k | inputs | unfiltered hits | of them matching | filtered hits | violations | wrong metadata | full top_k available | short answers | filter after nearVector: rounds (mean) | filter after nearVector: short rankings | errors |")
	fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, k := range run.checks {
		rounds, shortRank := "-", "-"
		if k.rankings > 0 {
			rounds = fmt.Sprintf("%.1f", float64(k.rounds)/float64(k.rankings))
			shortRank = fmt.Sprintf("%d / %d", k.shortRankings, k.rankings)
		}
		errs := errorsCell(k.errors, k.firstErr)
		fmt.Fprintf(bw, "| %s | `%s` | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s | %s | %s |\n", k.name, strings.ReplaceAll(k.filter, "|", "\\|"), k.topK, k.inputs,
			k.plainHits, k.plainMatching, k.hits, k.violations, k.metaWrong, k.full, k.short, rounds, shortRank, errs)
	}
	fmt.Fprintln(bw)
	rowDocs(bw, run.results, func(r metaResult) (string, string, bool) { return r.name, r.doc, r.experiment == "" })
	fmt.Fprintln(bw, pairsNote)
	return bw.Flush()
}
