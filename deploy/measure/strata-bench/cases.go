package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/strata-kb/strata/embedder/engine/uselite"
	"github.com/strata-kb/strata/shared/ids"
)

// input is what one call is about: a file, one of its chunks and a query of
// the pool. Both sides of a comparison get the same inputs.
type input struct {
	file  *corpusFile
	chunk int // index of the chunk in its file
	query int // index in the query pool
}

func (in input) project() string { return in.file.project() }
func (in input) chunkID() string { return in.file.FV.Chunks[in.chunk].ID }
func (in input) sectionID() string {
	return in.file.FV.Chunks[in.chunk].SectionID
}

// sectionRange is the first and last chunk index of the input chunk's section.
func (in input) sectionRange() (from, to int) {
	sid := in.sectionID()
	from, to = -1, -1
	for _, c := range in.file.FV.Chunks {
		if c.SectionID == sid {
			if from < 0 {
				from = c.Index
			}
			to = c.Index
		}
	}
	return from, to
}

// queryPool holds the search queries and their embeddings by the local
// model (computed once, so direct vector queries and search_files carry no
// embedding time).
type queryPool struct {
	texts []string
	vecs  [][]float32
}

func newQueryPool(ctx context.Context, m *uselite.Model, c *corpus, seed int64, n int) (*queryPool, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b9))
	p := &queryPool{}
	for range n {
		p.texts = append(p.texts, queryText(rng, c.Files[rng.IntN(len(c.Files))]))
	}
	vecs, err := m.Embed(ctx, p.texts)
	if err != nil {
		return nil, fmt.Errorf("embed queries: %w", err)
	}
	p.vecs = vecs
	return p, nil
}

// outcome is what a call returned: results (hits or rows) and answer bytes.
// Only calls made with inspect set count hits and bytes.
type outcome struct{ hits, bytes int }

// callFunc makes one call; worker selects the caller's session.
type callFunc func(ctx context.Context, worker int, in input, inspect bool) (outcome, error)

// benchCase is one row of the table: a tool (or the in-process query
// embedding) and, where one exists, its direct Weaviate equivalent.
type benchCase struct {
	name      string
	tool      string // MCP tool; "" for in-process cases
	args      func(in input) map[string]any
	local     callFunc                                         // in-process cases
	direct    func(ctx context.Context, in input) (int, error) // nil: no direct equivalent
	directDoc string                                           // what the direct side runs
	// prime, when set, is an MCP call both sides make untimed before each
	// timed call: what an agent did just before (rates then include it).
	prime func(in input) (tool string, args map[string]any)
}

// Tool arguments the cases use beyond their defaults.
const (
	searchFilesLimit = 10
	queryDocsLimit   = 10 // query_documents' default
	topK             = 5  // search_keyword's and search_knowledge's default
	maxSearchMatches = 1000
)

// cases lists every row, in table order.
func (b *bench) cases() []benchCase {
	d, q := b.direct, b.queries
	return []benchCase{
		{name: "mcp-go no-op tool (anchor)", local: b.anchor.call},
		{name: "list_file_chunks", tool: "list_file_chunks",
			args: func(in input) map[string]any {
				return map[string]any{"project_reference": in.project(), "file_path": in.file.FV.Object.Path}
			},
			direct: func(ctx context.Context, in input) (int, error) {
				return d.listChunks(ctx, in.project(), in.file.FV.FileVersionID, 101)
			},
			directDoc: "Get Chunk where file_version_id and id in the first 101 chunk ids, sort index, limit 101"},
		{name: "get_file_chunk", tool: "get_file_chunk",
			args: func(in input) map[string]any {
				return map[string]any{"project_reference": in.project(), "chunk_id": in.chunkID()}
			},
			direct:    func(ctx context.Context, in input) (int, error) { return d.chunk(ctx, in.project(), in.chunkID()) },
			directDoc: "GET /v1/objects/Chunk/{id}"},
		{name: "get_file_chunk_embedding", tool: "get_file_chunk_embedding",
			args: func(in input) map[string]any {
				return map[string]any{"project_reference": in.project(), "chunk_id": in.chunkID()}
			},
			direct: func(ctx context.Context, in input) (int, error) {
				return d.chunkVector(ctx, in.project(), in.chunkID(), uselite.ModelName)
			},
			directDoc: "GET /v1/objects/ChunkVector/{id} (no vector)"},
		{name: "search_keyword", tool: "search_keyword",
			args: func(in input) map[string]any { return map[string]any{"query": q.texts[in.query]} },
			direct: func(ctx context.Context, in input) (int, error) {
				return d.keyword(ctx, in.project(), q.texts[in.query], topK)
			},
			directDoc: "Get Chunk bm25(stemmed terms over content_terms, heading_terms^1; exact over content when that finds nothing) where valid_from<=W and branch in [\"\"], limit 15"},
		{name: "search_knowledge", tool: "search_knowledge",
			args: func(in input) map[string]any { return map[string]any{"query": q.texts[in.query]} },
			direct: func(ctx context.Context, in input) (int, error) {
				vec, err := b.embed(ctx, q.texts[in.query])
				if err != nil {
					return 0, err
				}
				return d.vector(ctx, in.project(), vec, topK, 0)
			},
			directDoc: "embed the query with the same model in this process, then Get ChunkVector nearVector(targetVectors) limit 30 + Get Chunk where id in (...)"},
		{name: "search_files", tool: "search_files",
			args: func(in input) map[string]any {
				return map[string]any{"project_reference": in.project(), "query_vector": q.vecs[in.query], "dimension": "512",
					"limit": searchFilesLimit, "similarity_threshold": b.cfg.Similarity}
			},
			direct: func(ctx context.Context, in input) (int, error) {
				return d.vector(ctx, in.project(), q.vecs[in.query], maxSearchMatches, b.cfg.Similarity)
			},
			directDoc: fmt.Sprintf("Get ChunkVector nearVector(targetVectors, distance %.2f) limit 3000 + Get Chunk where id in (...)", 1-b.cfg.Similarity)},
		{name: "query_documents", tool: "query_documents",
			args: func(in input) map[string]any { return map[string]any{"query": q.texts[in.query]} },
			direct: func(ctx context.Context, in input) (int, error) {
				vec, err := b.embed(ctx, q.texts[in.query])
				if err != nil {
					return 0, err
				}
				return d.hybrid(ctx, in.project(), q.texts[in.query], vec, 2*queryDocsLimit)
			},
			directDoc: "embed the query (same model, this process), then search_keyword's query (limit 60) + search_knowledge's pair (limit 60)"},
		{name: "read (document: toc)", tool: "read",
			args: func(in input) map[string]any { return map[string]any{"path_part_id": in.file.FV.FileID} },
			direct: func(ctx context.Context, in input) (int, error) {
				return d.sections(ctx, in.project(), in.file.FV.FileVersionID)
			},
			directDoc: "Get Section where file_version_id and valid_from<=W, sort ordinal, limit 2001"},
		{name: "read (section: inline)", tool: "read",
			args: func(in input) map[string]any { return map[string]any{"path_part_id": in.sectionID()} },
			direct: func(ctx context.Context, in input) (int, error) {
				return d.chunkRange(ctx, in.project(), in.file.FV.FileVersionID, in.sectionID(), 0, -1)
			},
			directDoc: "Get Chunk where file_version_id, valid_from<=W and section_id, sort index, limit 201"},
		{name: "read_around", tool: "read_around",
			args: func(in input) map[string]any { return map[string]any{"chunk_id": in.chunkID()} },
			direct: func(ctx context.Context, in input) (int, error) {
				from, to := in.sectionRange() // the section fits the token budget, so it comes back whole
				return d.chunkRange(ctx, in.project(), in.file.FV.FileVersionID, "", from, to)
			},
			directDoc: "Get Chunk where file_version_id, valid_from<=W and id in the anchor's section's chunk ids, sort index"},
		{name: "read_around (chunk returned before: after read of its section)", tool: "read_around",
			args:  func(in input) map[string]any { return map[string]any{"chunk_id": in.chunkID()} },
			prime: func(in input) (string, map[string]any) { return "read", map[string]any{"path_part_id": in.sectionID()} },
			direct: func(ctx context.Context, in input) (int, error) {
				from, to := in.sectionRange()
				return d.chunkRange(ctx, in.project(), in.file.FV.FileVersionID, "", from, to)
			},
			directDoc: "as read_around; before each call both sides read the anchor's section through queryd, untimed (queryd then knows where the anchor lies, as after a search that returned it)"},
		{name: "window of 3 chunks by index range (direct: by ids)",
			local: func(ctx context.Context, _ int, in input, _ bool) (outcome, error) {
				i := in.file.FV.Chunks[in.chunk].Index
				n, err := d.window(ctx, in.project(), in.file.FV.FileVersionID, max(0, i-1), i+1, false)
				return outcome{hits: n}, err
			},
			direct: func(ctx context.Context, in input) (int, error) {
				i := in.file.FV.Chunks[in.chunk].Index
				return d.window(ctx, in.project(), in.file.FV.FileVersionID, max(0, i-1), i+1, true)
			},
			directDoc: "left: Get Chunk where file_version_id, valid_from<=W and index in [i-1, i+1]; direct: the same with id in the three chunk ids instead of the index range"},
		{name: "get_info (document)", tool: "get_info",
			args: func(in input) map[string]any { return map[string]any{"path_part_id": in.file.FV.FileID} },
			direct: func(ctx context.Context, in input) (int, error) {
				return d.document(ctx, in.project(), in.file.FV.FileID)
			},
			directDoc: "Get Document where file_id, limit 1"},
		{name: "list_contents (folder)", tool: "list_contents",
			args: func(in input) map[string]any {
				return map[string]any{"path_part_id": ids.Folder(in.project(), "", in.file.Folder)}
			}},
		{name: "find (document name)", tool: "find",
			args: func(in input) map[string]any { return map[string]any{"name": baseName(in.file.FV.Object.Path)} }},
		{name: "list_files", tool: "list_files", args: func(input) map[string]any { return map[string]any{} }},
		{name: "status", tool: "status", args: func(input) map[string]any { return map[string]any{} }},
		{name: "embed query (in-process)", local: func(ctx context.Context, _ int, in input, _ bool) (outcome, error) {
			_, err := b.model.Embed(ctx, []string{q.texts[in.query]})
			return outcome{hits: 1}, err
		}},
	}
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// embed is the query embedding a text tool computes before its vector
// query (queryd embeds in its process with the same local model), so the
// direct side of a text query does the same work.
func (b *bench) embed(ctx context.Context, text string) ([]float32, error) {
	vs, err := b.model.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return vs[0], nil
}

// queryd is the MCP side of a case.
func (b *bench) queryd(bc benchCase) callFunc {
	if bc.local != nil {
		return bc.local
	}
	return func(ctx context.Context, worker int, in input, inspect bool) (outcome, error) {
		text, err := call(ctx, b.sessions[worker], bc.tool, bc.args(in))
		if err != nil || !inspect {
			return outcome{}, err
		}
		hits, err := countHits(text)
		return outcome{hits: hits, bytes: len(text)}, err
	}
}

// primeCall is the case's untimed call before each timed one, nil when it has none.
func (b *bench) primeCall(bc benchCase) callFunc {
	if bc.prime == nil {
		return nil
	}
	return func(ctx context.Context, worker int, in input, _ bool) (outcome, error) {
		tool, args := bc.prime(in)
		_, err := call(ctx, b.sessions[worker], tool, args)
		return outcome{}, err
	}
}

// directCall is the direct side of a case, nil when it has none.
func (b *bench) directCall(bc benchCase) callFunc {
	if bc.direct == nil {
		return nil
	}
	return func(ctx context.Context, _ int, in input, _ bool) (outcome, error) {
		rows, err := bc.direct(ctx, in)
		return outcome{hits: rows}, err
	}
}

// inputs draws n inputs from a seeded generator: the same seed gives both
// sides of a round the same calls. Files are drawn from b.inputFiles when
// set, else from the whole corpus.
func (b *bench) inputs(seed uint64, n int) []input {
	rng := rand.New(rand.NewPCG(uint64(b.cfg.Seed), seed))
	files := b.corpus.Files
	if b.inputFiles != nil { // access mode: files the restricted key may read
		files = b.inputFiles
	}
	out := make([]input, n)
	for i := range out {
		f := files[rng.IntN(len(files))]
		out[i] = input{file: f, chunk: rng.IntN(len(f.FV.Chunks)), query: rng.IntN(len(b.queries.texts))}
	}
	return out
}
