package main

// The access mode (-access): what per-document access control costs a
// reader. One file in -access-every has the group readersGroup, the others
// otherGroup (corpus.go), written with the indexer's commit path, which
// puts the readers on every object of a file. queryd gets two keys: an
// admin (groups *, read unfiltered) and a restricted key (group
// readersGroup only: queryd adds `readers ContainsAny ["*", readersGroup]`
// to its Weaviate queries, and checks the readers of an object read by id).
// Each row calls the same tool with the same inputs, drawn from the files
// the restricted key may read, once per key, in rounds that alternate which
// key goes first; Weaviate rows run a tool's core query from this process
// without and with the readers filter, which tells Weaviate's cost of the
// filter from Strata's. A check pass then verifies the restricted key's
// answers: no hit from a file it may not read, and a full top_k whenever
// the filtered query finds that many.

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/measure/program"
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
)

// accessKeys are queryd's two keys in the access mode.
type accessKeys struct{ admin, restricted string }

func newAccessKeys() (accessKeys, error) {
	key := func() (string, error) {
		b := make([]byte, 20)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return "bench-" + hex.EncodeToString(b), nil
	}
	var k accessKeys
	var err error
	if k.admin, err = key(); err != nil {
		return k, err
	}
	k.restricted, err = key()
	return k, err
}

// querydSearchMatches is queryd's cap on search_files' matches
// (tools.MaxSearchMatches); its store fetches 3/2 of it a round
// (store.SearchVector), searchFilesFetch.
const (
	querydSearchMatches = 300
	searchFilesFetch    = querydSearchMatches * 3 / 2
)

// grants are the keys' grants as STRATA_API_KEYS spells them.
const (
	adminGrant      = "*|*"               // every project, every document
	restrictedGrant = "*|" + readersGroup // every project, documents of readersGroup (and those without groups)
)

// env is queryd's STRATA_API_KEYS for the two keys; it comes after the
// stack's own, and of a variable given twice a process sees the last.
func (k accessKeys) env() []string {
	return []string{"STRATA_API_KEYS=" + k.admin + "=" + adminGrant + ";" + k.restricted + "=" + restrictedGrant}
}

// restrictedReaders are the values of the readers filter queryd adds to the
// restricted key's queries.
var restrictedReaders = access.Grant{Groups: []string{readersGroup}}.FilterValues()

// accessCase is one row: a tool called by both keys, or a Weaviate query
// without and with the readers filter.
type accessCase struct {
	name string
	kind string // keyword, vector, hybrid, read by id: what the goal names; "" for other rows
	tool string // MCP tool; "" for a Weaviate row
	args func(in input) map[string]any
	// topK is the results of a full answer (0: not a search); expect, when
	// set, is how many the restricted key should get for in (the filtered
	// query's rows, at most topK).
	topK   int
	expect func(ctx context.Context, in input) (int, error)
	// plain and filtered are a Weaviate row's sides.
	plain, filtered func(ctx context.Context, in input) (int, error)
	doc             string
}

func (ac accessCase) weaviate() bool { return ac.tool == "" }

// accessResult is one row at one concurrency: side a is the admin (or the
// query without the filter), side b the restricted key (or with it).
type accessResult struct {
	accessCase
	pair // experiment: -access-flat-cutoff
}

// accessCheck is what the check pass found for one tool.
type accessCheck struct {
	name, tool string
	inputs     int
	errors     int
	firstErr   string
	// Hits of each key, and the admin's hits in files the restricted key
	// may not read (what the filter had to drop).
	adminHits, adminHidden int
	hits                   int
	violations             int // restricted hits in files it may not read: must be 0
	// full counts the inputs whose filtered query found at least top_k
	// rows, short those of them (or of any input) where the restricted key
	// got fewer hits than the filtered query found (at most top_k).
	full, short int
	// Reads by id of chunks of files the restricted key may not read.
	hiddenReads, hiddenRefused, hiddenAdminRead int
}

// accessBench measures the access rows.
type accessBench struct {
	*bench
	restricted sessions
	filtered   *direct  // the direct queries with the restricted key's readers filter
	common     []string // keyword queries of common words only (no file's marker)
}

// accessRun is the access mode's report.
type accessRun struct {
	pairRun
	restricted string // the restricted key's status
	checks     []accessCheck
	results    []accessResult
}

// filteredBy returns a copy of d whose gRPC queries add readers ContainsAny values.
func (d *direct) filteredBy(values []string) *direct {
	c := *d
	c.readers = values
	return &c
}

// commonQueries are n keyword queries of three content words and no
// file's marker: most of their best hits are in files the restricted key
// may not read, the case where the filter drops most of a ranking.
func commonQueries(seed int64, n int) []string {
	rng := mrand.New(mrand.NewPCG(uint64(seed), 0xc0ffee))
	out := make([]string, n)
	for i := range out {
		w := func() string { return vocabulary[20+rng.IntN(120)] }
		out[i] = w() + " " + w() + " " + w()
	}
	return out
}

// accessCases lists the rows, in table order.
func (b *accessBench) accessCases() []accessCase {
	d, f, q := b.direct, b.filtered, b.queries
	common := func(in input) string { return b.common[in.query%len(b.common)] }
	upTo := func(n int, fn func(ctx context.Context, in input) (int, error)) func(ctx context.Context, in input) (int, error) {
		return func(ctx context.Context, in input) (int, error) {
			rows, err := fn(ctx, in)
			return min(n, rows), err
		}
	}
	const hybridTopK = 10 // hybrid_search's default
	kw := func(dd *direct) func(ctx context.Context, in input) (int, error) {
		return func(ctx context.Context, in input) (int, error) {
			return dd.keyword(ctx, in.project(), q.texts[in.query], topK)
		}
	}
	kwCommon := func(dd *direct) func(ctx context.Context, in input) (int, error) {
		return func(ctx context.Context, in input) (int, error) {
			return dd.keyword(ctx, in.project(), common(in), topK)
		}
	}
	vec := func(dd *direct) func(ctx context.Context, in input) (int, error) {
		return func(ctx context.Context, in input) (int, error) {
			return dd.vector(ctx, in.project(), q.vecs[in.query], topK, 0)
		}
	}
	vecDist := func(dd *direct) func(ctx context.Context, in input) (int, error) {
		return func(ctx context.Context, in input) (int, error) {
			return dd.vectorN(ctx, in.project(), q.vecs[in.query], searchFilesFetch, b.cfg.Similarity)
		}
	}
	near := func(dd *direct) func(ctx context.Context, in input) (int, error) {
		return func(ctx context.Context, in input) (int, error) {
			ids, err := dd.neighbours(ctx, in.project(), q.vecs[in.query], 30, 0)
			return len(ids), err
		}
	}
	byQuery := func(dd *direct) func(ctx context.Context, in input) (int, error) {
		return func(ctx context.Context, in input) (int, error) {
			return dd.chunkByQuery(ctx, in.project(), in.chunkID())
		}
	}
	everyone := d.filteredBy([]string{access.Everyone, readersGroup, otherGroup})
	return []accessCase{
		{name: "search_keyword", kind: "keyword", tool: "search_keyword", topK: topK,
			args:   func(in input) map[string]any { return map[string]any{"query": q.texts[in.query]} },
			expect: upTo(topK, kw(f)),
			doc:    "two content words and a made-up word of a readable file (BM25 ranks that file's chunks first)"},
		{name: "search_keyword (common words)", kind: "keyword", tool: "search_keyword", topK: topK,
			args:   func(in input) map[string]any { return map[string]any{"query": common(in)} },
			expect: upTo(topK, kwCommon(f)),
			doc:    "three content words, no file's made-up word: most of the best hits are in files the restricted key may not read"},
		{name: "search_knowledge", kind: "vector", tool: "search_knowledge", topK: topK,
			args:   func(in input) map[string]any { return map[string]any{"query": q.texts[in.query]} },
			expect: upTo(topK, vec(f)),
			doc:    "the query embedded by queryd (both keys alike), 30 nearest ChunkVectors, their chunks"},
		{name: "search_files", kind: "vector", tool: "search_files", topK: searchFilesLimit,
			args: func(in input) map[string]any {
				return map[string]any{"project_reference": in.project(), "query_vector": q.vecs[in.query], "dimension": "512",
					"limit": searchFilesLimit, "similarity_threshold": b.cfg.Similarity}
			},
			expect: upTo(searchFilesLimit, vecDist(f)),
			doc:    fmt.Sprintf("the query's vector precomputed, the ChunkVectors within distance %.2f (%d nearest a round), their chunks", 1-b.cfg.Similarity, searchFilesFetch)},
		{name: "hybrid_search", kind: "hybrid", tool: "hybrid_search", topK: hybridTopK,
			args: func(in input) map[string]any { return map[string]any{"query": q.texts[in.query]} },
			expect: func(ctx context.Context, in input) (int, error) {
				k, err := kw(f)(ctx, in)
				if err != nil {
					return 0, err
				}
				v, err := vec(f)(ctx, in)
				return min(hybridTopK, k+v), err
			},
			doc: "BM25 and vector rankings fused (defaults: relative fusion, top_k 10), the query embedded by queryd"},
		{name: "get_file_chunk", kind: "read by id", tool: "get_file_chunk",
			args: func(in input) map[string]any {
				return map[string]any{"project_reference": in.project(), "chunk_id": in.chunkID()}
			},
			doc: "a chunk of a readable file by id"},
		{name: "Weaviate keyword", plain: kw(d), filtered: kw(f),
			doc: "search_keyword's BM25 query (limit 15) as queryd sends it, over gRPC"},
		{name: "Weaviate keyword (common words)", plain: kwCommon(d), filtered: kwCommon(f),
			doc: "the same with the common-words queries"},
		{name: "Weaviate vector", plain: vec(d), filtered: vec(f),
			doc: "search_knowledge's pair with the query vector precomputed: nearVector on ChunkVector, limit 30, then Get Chunk where id in (...)"},
		{name: "Weaviate nearVector alone", plain: near(d), filtered: near(f),
			doc: "the first half of the vector pair: nearVector on ChunkVector, limit 30, chunk ids only"},
		{name: "Weaviate nearVector alone, filter admitting all", plain: near(d), filtered: near(everyone),
			doc: fmt.Sprintf("the same, the filtered side with readers ContainsAny [\"*\", %q, %q], which every object matches: the cost of a filter that drops nothing", readersGroup, otherGroup)},
		{name: "Weaviate vector within distance", plain: vecDist(d), filtered: vecDist(f),
			doc: fmt.Sprintf("search_files' pair: nearVector within the distance, limit %d (queryd's first round for %d matches), then the chunks", searchFilesFetch, querydSearchMatches)},
		{name: "Weaviate read by id: REST GET / gRPC query", plain: func(ctx context.Context, in input) (int, error) { return d.chunk(ctx, in.project(), in.chunkID()) },
			filtered: byQuery(f),
			doc:      "what queryd does for each key: an admin's GET /v1/objects/Chunk/{id}, against a restricted key's gRPC Get Chunk where id = {id} and the readers filter, limit 1 (a hidden chunk then answers as a missing one)"},
		{name: "Weaviate read by id: gRPC query", plain: byQuery(d), filtered: byQuery(f),
			doc: "the gRPC Get by id on both sides, without and with the readers filter: the filter's own cost in that query"},
		{name: "Weaviate GET Chunk by id (A/A)",
			plain:    func(ctx context.Context, in input) (int, error) { return d.chunk(ctx, in.project(), in.chunkID()) },
			filtered: func(ctx context.Context, in input) (int, error) { return d.chunk(ctx, in.project(), in.chunkID()) },
			doc:      "the same REST GET on both sides: the method's noise floor"},
	}
}

// toolSide calls tool through the clients of one key.
func toolSide(s sessions, tool string, args func(input) map[string]any) callFunc {
	return func(ctx context.Context, worker int, in input, inspect bool) (outcome, error) {
		text, err := call(ctx, s[worker], tool, args(in))
		if err != nil || !inspect {
			return outcome{}, err
		}
		hits, err := countHits(text)
		return outcome{hits: hits, bytes: len(text)}, err
	}
}

func directSide(fn func(ctx context.Context, in input) (int, error)) callFunc {
	return func(ctx context.Context, _ int, in input, _ bool) (outcome, error) {
		rows, err := fn(ctx, in)
		return outcome{hits: rows}, err
	}
}

// runAccess measures the selected rows at each concurrency; with
// experiment set, only the vector rows (see flatCutoffExperiment).
func (b *accessBench) runAccess(ctx context.Context, experiment string) ([]accessResult, error) {
	var out []accessResult
	for _, ac := range b.accessCases() {
		if !b.cfg.selected(ac.name) {
			continue
		}
		if experiment != "" {
			if !vectorRows[ac.name] {
				continue
			}
			ac.name += " [" + experiment + "]"
		}
		sides := []callFunc{directSide(ac.plain), directSide(ac.filtered)}
		if !ac.weaviate() {
			sides = []callFunc{toolSide(b.sessions, ac.tool, ac.args), toolSide(b.restricted, ac.tool, ac.args)}
		}
		if err := b.measurePairs(ctx, "access", ac.name, experiment, sides, func(p pair) {
			r := accessResult{accessCase: ac, pair: p}
			b.printAccess(r)
			out = append(out, r)
		}); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (b *accessBench) printAccess(r accessResult) {
	an, bn := "admin", "restricted"
	if r.weaviate() {
		an, bn = "plain", "filtered"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-34s c=%-2d n=%-4d %s p50 %7s p90 %7s | %s p50 %7s p90 %7s | x%.2f %+.2f ms | load %s",
		r.name, r.c, r.a.calls, an, ms(r.a.percentile(0.5)), ms(r.a.percentile(0.9)), bn, ms(r.b.percentile(0.5)), ms(r.b.percentile(0.9)),
		r.p50Ratio(), r.p50Diff(), r.load1)
	sb.WriteString(r.sideErrors())
	fmt.Fprintln(b.progress, sb.String())
}

// msf is a duration in milliseconds as a number.
func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// checkAccess calls every selected tool row with both keys over n inputs
// and checks the restricted key's answers against the corpus's groups.
func (b *accessBench) checkAccess(ctx context.Context, n int) ([]accessCheck, error) {
	var out []accessCheck
	files := map[string]*corpusFile{}
	for _, f := range b.corpus.Files {
		files[f.FV.FileID] = f
	}
	for _, ac := range b.accessCases() {
		if ac.weaviate() || !b.cfg.selected(ac.name) {
			continue
		}
		chk := accessCheck{name: ac.name, tool: ac.tool}
		for _, in := range b.inputs(seedOf("check/"+ac.name, 0), n) {
			chk.inputs++
			fail := func(err error) {
				chk.errors++
				if chk.firstErr == "" {
					chk.firstErr = err.Error()
				}
			}
			admin, err := call(ctx, b.sessions[0], ac.tool, ac.args(in))
			if err != nil {
				fail(fmt.Errorf("admin: %w", err))
				continue
			}
			restricted, err := call(ctx, b.restricted[0], ac.tool, ac.args(in))
			if err != nil {
				fail(fmt.Errorf("restricted: %w", err))
				continue
			}
			af, err := hitFiles(admin)
			if err != nil {
				fail(fmt.Errorf("admin: %w", err))
				continue
			}
			rf, err := hitFiles(restricted)
			if err != nil {
				fail(fmt.Errorf("restricted: %w", err))
				continue
			}
			chk.adminHits += len(af)
			for _, id := range af {
				if f := files[id]; f == nil || !f.Readable {
					chk.adminHidden++
				}
			}
			chk.hits += len(rf)
			for _, id := range rf {
				if f := files[id]; f == nil || !f.Readable {
					chk.violations++
				}
			}
			if ac.expect != nil {
				want, err := ac.expect(ctx, in)
				if err != nil {
					fail(fmt.Errorf("filtered query: %w", err))
					continue
				}
				if want >= ac.topK {
					chk.full++
				}
				if len(rf) < want {
					chk.short++
				}
			}
			if ac.kind == "read by id" {
				// The same chunk position in the next file the key may not read.
				hidden := b.hiddenNeighbour(in.file)
				if hidden == nil {
					continue
				}
				hin := input{file: hidden, chunk: in.chunk % len(hidden.FV.Chunks), query: in.query}
				chk.hiddenReads++
				if _, err := call(ctx, b.restricted[0], ac.tool, ac.args(hin)); err != nil {
					var te toolError
					if !errors.As(err, &te) {
						fail(fmt.Errorf("restricted read of a hidden chunk: %w", err))
						continue
					}
					chk.hiddenRefused++
				} else {
					chk.violations++
				}
				if _, err := call(ctx, b.sessions[0], ac.tool, ac.args(hin)); err == nil {
					chk.hiddenAdminRead++
				}
			}
		}
		program.Logf(b.progress, "check %s: %d inputs, restricted hits %d (%d in files it may not read), admin hits %d (%d in them), short answers %d of %d, %d errors %s",
			chk.name, chk.inputs, chk.hits, chk.violations, chk.adminHits, chk.adminHidden, chk.short, chk.inputs, chk.errors, clip(chk.firstErr, 160))
		out = append(out, chk)
	}
	return out, nil
}

// hiddenNeighbour is the first file after f that the restricted key may not read.
func (b *accessBench) hiddenNeighbour(f *corpusFile) *corpusFile {
	files := b.corpus.Files
	start := 0
	for i, g := range files {
		if g == f {
			start = i
			break
		}
	}
	for i := 1; i < len(files); i++ {
		if g := files[(start+i)%len(files)]; !g.Readable {
			return g
		}
	}
	return nil
}

// hitFiles returns the file id of every hit in a tool's JSON answer: the
// first list field among hitKeys, each item's document_id, file_id or
// chunk.file_id; an answer about one thing (get_file_chunk's {"chunk": ...})
// is one hit. An item without a file id is an error: the check could not
// tell whether the key may read it.
func hitFiles(text string) ([]string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("answer is not a JSON object: %w", err)
	}
	fileOf := func(v any) (string, bool) {
		item, _ := v.(map[string]any)
		for _, k := range []string{"document_id", "file_id"} {
			if id, ok := item[k].(string); ok && id != "" {
				return id, true
			}
		}
		if ch, ok := item["chunk"].(map[string]any); ok {
			if id, ok := ch["file_id"].(string); ok && id != "" {
				return id, true
			}
		}
		return "", false
	}
	for _, k := range hitKeys {
		list, ok := m[k].([]any)
		if !ok {
			continue
		}
		out := make([]string, 0, len(list))
		for i, item := range list {
			id, ok := fileOf(item)
			if !ok {
				return nil, fmt.Errorf("hit %d of %q names no file", i, k)
			}
			out = append(out, id)
		}
		return out, nil
	}
	if id, ok := fileOf(m); ok {
		return []string{id}, nil
	}
	return nil, errors.New("answer has neither a list of hits nor a file")
}

// statusDocuments is the document count the status tool reports to a key.
func statusDocuments(ctx context.Context, s *rpcClient) (int, error) {
	text, err := call(ctx, s, "status", map[string]any{})
	if err != nil {
		return 0, fmt.Errorf("status: %w", err)
	}
	var st struct {
		DocumentCount int `json:"documentCount"`
	}
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		return 0, fmt.Errorf("status answer: %w", err)
	}
	return st.DocumentCount, nil
}

// runAccessMode is the access mode after loading: wait for the vector
// index, connect both keys, check, measure, write the report.
func runAccessMode(ctx context.Context, rep *report, st *localstack.Stack, b *bench, keys accessKeys, drain time.Duration) error {
	cfg := b.cfg
	run := &accessRun{pairRun: newPairRun(rep, cfg, drain)}
	restricted, err := openSessions(ctx, st.Env.MCPURL, keys.restricted, cfg.maxConcurrency())
	if err != nil {
		return fmt.Errorf("restricted key: %w", err)
	}
	defer restricted.close()
	ab := &accessBench{bench: b, restricted: restricted, filtered: b.direct.filteredBy(restrictedReaders), common: commonQueries(cfg.Seed, 64)}
	b.inputFiles = rep.corpus.readable()
	if len(b.inputFiles) == 0 {
		return errors.New("access: no file is readable by the restricted key")
	}
	if run.check, err = b.checkIndex(ctx); err != nil {
		return err
	}
	n, err := statusDocuments(ctx, restricted[0])
	if err != nil {
		return fmt.Errorf("restricted key: %w", err)
	}
	run.hnsw = vectorIndexSettings(ctx, st)
	run.restricted = fmt.Sprintf("the restricted key's status reports %d documents (%d files have %s)", n, len(b.inputFiles), readersGroup)
	program.Logf(b.progress, "index check: %s; %s", run.check, run.restricted)
	if run.checks, err = ab.checkAccess(ctx, cfg.AccessChecks); err != nil {
		return err
	}
	hits := 0
	for _, c := range run.checks {
		hits += c.hits
	}
	if len(run.checks) > 0 && hits == 0 {
		return errors.New("access: the restricted key got no hit at all: are readers written on the objects (indexer/index)?")
	}
	run.startMeasuring()
	run.results, err = ab.runAccess(ctx, "")
	run.measured()
	if err != nil {
		return err
	}
	if cfg.AccessFlatCutoff > 0 {
		if err := writeAccess(run); err != nil { // keep what was measured should the experiment fail
			return err
		}
		more, err := flatCutoffExperiment(ctx, st, ab, cfg.AccessFlatCutoff)
		run.results = append(run.results, more...)
		run.measured()
		if err != nil {
			return err
		}
	}
	return writeAccess(run)
}

// writeAccess writes the report to stdout and to cfg.Out (default docs/bench/access.md).
func writeAccess(run *accessRun) error {
	out := cmp.Or(run.cfg.Out, filepath.Join("docs", "bench", "access.md"))
	if err := writeOut(out, run.markdown); err != nil {
		return err
	}
	program.Logf(os.Stderr, "access report: %s", out)
	return nil
}

// Goals of the issue: searches at p50 at most this many times the admin's,
// a read by id at most this much slower.
const (
	accessSearchGoal = 1.2
	accessReadGoal   = 100 * time.Microsecond
)

// goal says whether a tool row at one client meets its goal.
func (r accessResult) goal() string {
	if r.weaviate() || r.kind == "" {
		return "-"
	}
	a, b := r.a.percentile(0.5), r.b.percentile(0.5)
	if r.kind == "read by id" {
		if d := b - a; d > accessReadGoal {
			return fmt.Sprintf("missed (%+.2f ms)", msf(d))
		}
		return "met"
	}
	if x := ratio(b, a); x > accessSearchGoal {
		return fmt.Sprintf("missed (x%.3f)", x)
	}
	return "met"
}

func (run *accessRun) markdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	c, cfg := run.corpus, run.cfg
	readable := len(c.readable())
	run.head(bw, "Per-document access: a restricted key against an admin, side by side")
	fmt.Fprintf(bw, "Index: %d chunks in %d files x %d chunks (%d sections, ~%d words a chunk), project(s) %s; vectors 512-d (use-lite-512: the first %d chunks embedded with the model, the rest random unit vectors), HNSW cosine. ",
		c.chunkCount(), len(c.Files), c.ChunksPerFile, sectionsPerFile, wordsPerChunk, strings.Join(c.Projects, ", "), run.sample)
	fmt.Fprintf(bw, "Every file has groups: file k has `%s` when k %% %d == 0 (%d files, %.1f%%), `%s` otherwise. ",
		readersGroup, cfg.AccessEvery, readable, 100*float64(readable)/float64(len(c.Files)), otherGroup)
	fmt.Fprintf(bw, "Loaded with the indexer's commit path (index.Writer.ApplyFileVersion + ApplyVectors, which write each file's readers from FileVersion.Access on every object) in %s (%.0f chunks/s), vector queue drained %s later. %s; %s.\n\n",
		run.load.Elapsed.Round(time.Second), run.load.chunksPerSecond(), run.drain.Round(time.Second), run.check, run.restricted)
	run.vectorIndex(bw)
	fmt.Fprintf(bw, "Keys: admin `%s` (every document: no readers filter) and restricted `%s` (queryd adds `readers ContainsAny [%s]` to its Weaviate queries of a document's objects; the Weaviate read-by-id rows show how it reads one object for each key).\n\n",
		adminGrant, restrictedGrant, `"`+strings.Join(restrictedReaders, `", "`)+`"`)
	fmt.Fprintf(bw, "Method: every row calls the same thing with the same inputs on both sides, drawn from the %d files the restricted key may read (the query pool from their made-up words); after a warm-up, %d rounds per side alternate which side goes first. Load average %s before measuring; measured in %s. Latencies in ms, percentiles nearest-rank.\n\n",
		readable, cfg.Rounds, run.loadMeasure, run.elapsed.Round(time.Second))

	fmt.Fprintln(bw, "## Goal")
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "A key that may read %.0f%% of the documents gets keyword, vector and hybrid answers with p50 at most %.1fx the admin's, and a read by id at most %s ms slower (one client).\n\n",
		100/float64(cfg.AccessEvery), accessSearchGoal, ms(accessReadGoal))
	fmt.Fprintln(bw, "| row | kind | admin p50 | restricted p50 | restricted / admin | difference ms | goal |")
	fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|---|")
	for _, r := range run.results {
		if r.weaviate() || r.c != 1 || r.experiment != "" {
			continue
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %.2f | %+.2f | %s |\n", r.name, r.kind, ms(r.a.percentile(0.5)), ms(r.b.percentile(0.5)),
			r.p50Ratio(), r.p50Diff(), r.goal())
	}
	fmt.Fprintln(bw)

	fmt.Fprintln(bw, "## MCP tools: admin against restricted key")
	fmt.Fprintln(bw)
	pairTableHead(bw, "row", "admin", "restricted", "admin hits", "restricted hits", 0.9)
	for _, r := range run.results {
		if !r.weaviate() {
			r.markdownRow(bw, r.name, 0.9)
		}
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "## Weaviate alone: the same queries without and with the readers filter")
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "From this process with queryd's client and protocol (gRPC for searches, REST for reads by id), the restricted side with the filter queryd adds for that key. Whatever the tool rows add beyond this row's difference is Strata's.")
	fmt.Fprintln(bw)
	pairTableHead(bw, "query", "no filter", "readers filter", "rows", "filtered rows", 0.9)
	for _, r := range run.results {
		if r.weaviate() {
			r.markdownRow(bw, r.name, 0.9)
		}
	}
	fmt.Fprintln(bw)

	fmt.Fprintln(bw, "## Access check")
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "Before measuring, each tool was called by both keys for %d inputs of the same kind. A violation is a restricted hit in a file it may not read (or, for get_file_chunk, a chunk of such a file that it could read); short counts the answers with fewer hits than the same query with the readers filter finds in Weaviate (at most top_k); full counts the inputs where that query found at least top_k.\n\n", cfg.AccessChecks)
	fmt.Fprintln(bw, "| tool | inputs | admin hits | of them in files the restricted key may not read | restricted hits | violations | full top_k available | short answers | hidden chunks read by id: refused / tried (admin read) | errors |")
	fmt.Fprintln(bw, "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	for _, k := range run.checks {
		hidden := "-"
		if k.hiddenReads > 0 {
			hidden = fmt.Sprintf("%d / %d (%d)", k.hiddenRefused, k.hiddenReads, k.hiddenAdminRead)
		}
		full := "-"
		if k.tool != "get_file_chunk" {
			full = fmt.Sprint(k.full)
		}
		errs := errorsCell(k.errors, k.firstErr)
		fmt.Fprintf(bw, "| %s | %d | %d | %d | %d | %d | %s | %d | %s | %s |\n", k.name, k.inputs, k.adminHits, k.adminHidden, k.hits, k.violations, full, k.short, hidden, errs)
	}
	fmt.Fprintln(bw)
	rowDocs(bw, run.results, func(r accessResult) (string, string, bool) { return r.name, r.doc, r.experiment == "" })
	if cfg.AccessFlatCutoff > 0 {
		fmt.Fprintf(bw, "Rows marked [flatSearchCutoff %d] were measured last, after ChunkVector's flatSearchCutoff was set to %d (Weaviate's default: 40000). Weaviate searches a filtered vector query flat (every vector the filter allows) when the filter allows fewer objects than the cutoff, else it walks the graph with the filter (filterStrategy); the restricted key's filter allows about %d ChunkVectors here.\n\n",
			cfg.AccessFlatCutoff, cfg.AccessFlatCutoff, readable*c.ChunksPerFile)
	}
	fmt.Fprintln(bw, pairsNote)
	return bw.Flush()
}

func meanHits(h float64) string {
	if h == math.Trunc(h) {
		return fmt.Sprintf("%.0f", h)
	}
	return fmt.Sprintf("%.1f", h)
}

// vectorIndexSettings are the settings of ChunkVector's vector index that
// decide how a filtered search runs (filter strategy, the allow-list size
// under which Weaviate searches flat instead of walking the graph,
// compression), as Weaviate's schema reports them.
func vectorIndexSettings(ctx context.Context, st *localstack.Stack) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+st.Env.WeaviateHost+"/v1/schema/"+schema.ChunkVectorClass, nil)
	req.Header.Set("Authorization", "Bearer "+st.Env.WeaviateWriterKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer resp.Body.Close()
	var class struct {
		VectorConfig map[string]struct {
			VectorIndexType   string         `json:"vectorIndexType"`
			VectorIndexConfig map[string]any `json:"vectorIndexConfig"`
		} `json:"vectorConfig"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&class); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var out []string
	for name, vc := range class.VectorConfig {
		c := vc.VectorIndexConfig
		var parts []string
		for _, k := range []string{"filterStrategy", "flatSearchCutoff", "distance", "ef", "dynamicEfMin", "dynamicEfMax", "dynamicEfFactor", "maxConnections"} {
			if v, ok := c[k]; ok {
				parts = append(parts, fmt.Sprintf("%s %v", k, v))
			}
		}
		for _, comp := range []string{"rq", "pq", "bq", "sq"} {
			if m, ok := c[comp].(map[string]any); ok && m["enabled"] == true {
				parts = append(parts, fmt.Sprintf("%s on (bits %v, rescoreLimit %v)", comp, m["bits"], m["rescoreLimit"]))
			}
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", name, vc.VectorIndexType, strings.Join(parts, ", ")))
	}
	if len(out) == 0 {
		return "unknown (no named vector)"
	}
	return strings.Join(out, "; ")
}

// vectorRows are the rows the flatSearchCutoff experiment measures again.
var vectorRows = map[string]bool{"search_knowledge": true, "search_files": true, "hybrid_search": true,
	"Weaviate vector": true, "Weaviate nearVector alone": true, "Weaviate vector within distance": true}

// flatCutoffExperiment sets flatSearchCutoff of ChunkVector's vector
// indexes to cutoff and measures the vector rows again. Weaviate searches
// a filtered query flat (every allowed vector) when the filter allows
// fewer objects than flatSearchCutoff, else it walks the graph with the
// filter (filterStrategy); a restricted key's allow list is its share of
// the index, so the cutoff decides which of the two its searches take.
func flatCutoffExperiment(ctx context.Context, st *localstack.Stack, b *accessBench, cutoff int) ([]accessResult, error) {
	wv, err := schema.NewClient(st.Servers.WeaviateHost, st.Servers.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		return nil, err
	}
	class, err := wv.Schema().ClassGetter().WithClassName(schema.ChunkVectorClass).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("flatSearchCutoff experiment: read %s: %w", schema.ChunkVectorClass, err)
	}
	for name, vc := range class.VectorConfig {
		c, ok := vc.VectorIndexConfig.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("flatSearchCutoff experiment: vector %s: index config %T", name, vc.VectorIndexConfig)
		}
		c["flatSearchCutoff"] = cutoff
		vc.VectorIndexConfig = c
		class.VectorConfig[name] = vc
	}
	if err := wv.Schema().ClassUpdater().WithClass(class).Do(ctx); err != nil {
		return nil, fmt.Errorf("flatSearchCutoff experiment: update %s: %w", schema.ChunkVectorClass, err)
	}
	program.Logf(b.progress, "flatSearchCutoff experiment: ChunkVector's vector index now: %s", vectorIndexSettings(ctx, st))
	return b.runAccess(ctx, fmt.Sprintf("flatSearchCutoff %d", cutoff))
}
