// Package store answers queryd's questions from the Weaviate index. It only
// reads: queryd connects with a key whose role cannot write.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/queryd/store/grpcsearch"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/terms"
	"github.com/strata-kb/strata/shared/wvquery"
)

// Where is a filter over indexed objects.
type Where = filters.WhereBuilder

// Chunk is an indexed chunk as stored.
type Chunk struct {
	ID              string
	Project         string
	FileID          string
	FileVersionID   string
	FilePath        string
	Branch          string
	Index           int
	Content         string
	StartOffset     int
	EndOffset       int
	TokenCount      int
	SourceChecksum  string
	CreatedAt       string
	SectionID       string
	HeadingPath     []string
	EmbeddingStatus string
	EmbeddingModel  string
	Score           float64 // search hits only
	// SectionTokens and SectionChunks are the section's totals as the chunk
	// records them; 0 for chunks written before the chunk recorded them.
	SectionTokens, SectionChunks int
	// PageStart and PageEnd are the pages the chunk spans (1-based), 0
	// for formats without pages.
	PageStart, PageEnd int
	// OCRConfidence is the mean OCR confidence (0-100] of text read from a
	// scan or a picture; 0 for text the file held.
	OCRConfidence float64
}

// Document is a file's current state.
type Document struct {
	FileID        string
	FilePath      string
	Name          string
	Folder        string
	Branch        string
	FileVersionID string
	Title         string
	Status        string
	Error         string
	Deleted       bool
	ChunkCount    int
	// AccessError says why the document's groups could not be read: it is
	// then readable by admins only (package access).
	AccessError string
	// Readers is the document's readers list as the index holds it
	// (package access: groups, or Everyone, or Nobody), filled by
	// DocumentByID; get_info shows it to admins only.
	Readers      []string
	DocumentInfo // format and times, filled by AllDocuments (documents.go)
	// Metadata is the document's metadata (package metadata), filled by
	// the catalog and AllDocuments; MetadataWarnings what its merge dropped.
	Metadata         metadata.Metadata
	MetadataWarnings []string
}

// Store reads the index.
type Store struct {
	wv *weaviate.Client
	// consistency is the read consistency level on a replicated Weaviate
	// ("" on a single node, which refuses the argument).
	consistency string

	mu           sync.Mutex
	lastProjects []string // the last tenant list read (Projects)
	// ahead holds projects whose watermark Weaviate answered while the
	// catalog did not know them yet (a first commit its watch has not
	// delivered): the project list includes them, so a search sees a
	// project another tool on this replica has already shown.
	ahead map[string]bool

	// catalog, once ready, answers the project list, watermarks, version
	// visibility and counts from memory (SetCatalog); nil: Weaviate answers.
	catalog *Catalog
	facts   schemaFacts
	// rpc, when set (SetGRPC), runs filtered reads over gRPC.
	rpc *searchRPC
	// byID is how reads by id are hedged (byid.go).
	byID byIDState
}

// SetCatalog makes the store answer from c whenever c covers the question.
func (s *Store) SetCatalog(c *Catalog) *Store {
	s.catalog = c
	return s
}

// withAhead adds to the catalog's projects those read ahead of it.
func (s *Store) withAhead(projects []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.ahead {
		if !slices.Contains(projects, p) {
			projects = append(projects, p)
		}
	}
	slices.Sort(projects)
	return projects
}

// readAhead records that Weaviate showed project committed before the
// catalog knew it.
func (s *Store) readAhead(project string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ahead == nil {
		s.ahead = map[string]bool{}
	}
	s.ahead[project] = true
}

// New returns a Store.
func New(wv *weaviate.Client) *Store { return &Store{wv: wv} }

// SetReadConsistency sets the consistency level of reads on a replicated
// Weaviate. ONE lets reads go on while a node is down and is still exact:
// committed objects are immutable and written to every replica
// (consistency ALL) before their commit is published.
func (s *Store) SetReadConsistency(level string) *Store {
	s.consistency = level
	return s
}

var chunkFields = []graphql.Field{
	{Name: "content"}, {Name: "file_id"}, {Name: "file_version_id"}, {Name: "file_path"}, {Name: "branch"},
	{Name: "index"}, {Name: "start_offset"}, {Name: "end_offset"}, {Name: "token_count"}, {Name: "source_checksum"},
	{Name: "created_at"}, {Name: "section_id"}, {Name: "heading_path"}, {Name: "embedding_status"}, {Name: "embedding_model"},
	{Name: "section_token_count"}, {Name: "section_chunk_count"}, {Name: "page_start"}, {Name: "page_end"},
	{Name: "ocr_confidence"},
	{Name: "_additional", Fields: []graphql.Field{{Name: "id"}, {Name: "score"}}},
}

var documentFields = []graphql.Field{
	{Name: "file_id"}, {Name: "file_path"}, {Name: "name"}, {Name: "folder"}, {Name: "branch"}, {Name: "file_version_id"},
	{Name: "title"}, {Name: "status"}, {Name: "error"}, {Name: "deleted"}, {Name: "chunk_count"}, {Name: "access_error"},
}

// Projects lists the projects (tenants) that have an index. Listing
// tenants asks every node; while a replicated Weaviate has a node down it
// can stall, so it is bounded and the last list answers meanwhile.
func (s *Store) Projects(ctx context.Context) ([]string, error) {
	if s.catalog.Ready() {
		return s.withAhead(s.catalog.Projects()), nil
	}
	listCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ts, err := s.wv.Schema().TenantsGetter().WithClassName(schema.ChunkClass).Do(listCtx)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		s.mu.Lock()
		last := s.lastProjects
		s.mu.Unlock()
		if last != nil && ctx.Err() == nil {
			return slices.Clone(last), nil // callers filter it in place
		}
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name)
	}
	s.mu.Lock()
	s.lastProjects = out
	s.mu.Unlock()
	return slices.Clone(out), nil
}

// HasProject reports whether project has an index.
func (s *Store) HasProject(ctx context.Context, project string) (bool, error) {
	ps, err := s.Projects(ctx)
	if err != nil {
		return false, err
	}
	for _, p := range ps {
		if p == project {
			return true, nil
		}
	}
	return false, nil
}

func eq(path, value string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.Equal).WithValueText(value)
}

// Or combines filters with OR.
func Or(ws ...*filters.WhereBuilder) *filters.WhereBuilder {
	if len(ws) == 1 {
		return ws[0]
	}
	return filters.Where().WithOperator(filters.Or).WithOperands(ws)
}

// FileFilter matches a file's chunks.
func FileFilter(fileID string) *filters.WhereBuilder { return eq("file_id", fileID) }

// SectionFilter matches a section's chunks.
func SectionFilter(sectionID string) *filters.WhereBuilder { return eq("section_id", sectionID) }

func or(ws ...*filters.WhereBuilder) *filters.WhereBuilder {
	return filters.Where().WithOperator(filters.Or).WithOperands(ws)
}

// ChunkFilter matches one chunk.
func ChunkFilter(id string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"id"}).WithOperator(filters.Equal).WithValueText(id)
}

// FolderFilter matches chunks of files under folder on branch.
func FolderFilter(branch, folder string) *filters.WhereBuilder {
	return wvquery.And(eq("branch", branch), filters.Where().WithPath([]string{"file_path"}).WithOperator(filters.Like).WithValueText(escapeLike(folder)+"/*"))
}

// escapeLike neutralises Weaviate's Like wildcards in a literal path.
func escapeLike(s string) string {
	return strings.NewReplacer("*", "?", "?", "?").Replace(s)
}

// FindDocument returns the document of path on branch ("" = main), tombstones included.
func (s *Store) FindDocument(ctx context.Context, project, branch, path string) (*Document, error) {
	docs, err := s.documents(ctx, project, wvquery.And(eq("file_path", path), eq("branch", branch)), 1)
	if err != nil || len(docs) == 0 {
		return nil, err
	}
	return &docs[0], nil
}

// Documents lists the live documents of a project (all branches).
func (s *Store) Documents(ctx context.Context, project string, limit int) ([]Document, error) {
	return s.documents(ctx, project, filters.Where().WithPath([]string{"deleted"}).WithOperator(filters.Equal).WithValueBoolean(false), limit)
}

func (s *Store) documents(ctx context.Context, project string, where *filters.WhereBuilder, limit int) ([]Document, error) {
	rows, err := s.get(ctx, schema.DocumentClass, project, documentFields, where, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithLimit(limit)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Document, 0, len(rows))
	for _, r := range rows {
		out = append(out, documentOf(r))
	}
	return out, nil
}

// ListChunks returns a file version's chunks in order. A version's chunks
// are numbered from 0 without gaps, so a page is the ids of its indexes.
func (s *Store) ListChunks(ctx context.Context, project, fileVersionID string, offset, limit int) ([]Chunk, error) {
	q := getQuery{where: eq("file_version_id", fileVersionID), sort: []graphql.Sort{{Path: []string{"index"}, Order: graphql.Asc}},
		offset: offset, limit: limit}
	if offset >= 0 && limit > 0 && limit <= maxIDWindow && ids.Valid(fileVersionID) {
		q.where, q.offset = wvquery.And(eq("file_version_id", fileVersionID), chunkIDsIn(fileVersionID, offset, offset+limit-1)), 0
	}
	rows, err := s.find(ctx, schema.ChunkClass, project, chunkFields, q)
	if err != nil {
		return nil, err
	}
	return chunks(project, rows), nil
}

// GetChunk returns a chunk of a version visible as of sequence at, or nil.
func (s *Store) GetChunk(ctx context.Context, project, id string, at int64) (*Chunk, error) {
	o, err := s.objectByID(ctx, schema.ChunkClass, project, id)
	if err != nil || o == nil {
		return nil, err
	}
	if props, _ := o.Properties.(map[string]any); int64(wvquery.Float(props, "valid_from")) > at {
		return nil, nil // committed after the view
	}
	c := chunkFromObject(project, o)
	latest, err := s.LatestVersions(ctx, project, []string{c.FileID}, at)
	if err != nil || latest[c.FileID] != c.FileVersionID {
		return nil, err // a replaced or deleted version's chunk is not current
	}
	return &c, nil
}

// SearchKeyword runs BM25 over the chunk content of main as of sequence at,
// within where (nil = everything). Chunks of versions replaced by then are
// dropped, fetching further until limit hits are found or the results end.
func (s *Store) SearchKeyword(ctx context.Context, project, query string, limit int, where *filters.WhereBuilder, at int64) ([]Chunk, error) {
	return s.SearchKeywordIn(ctx, project, query, limit, where, "", at)
}

// SearchKeywordIn is SearchKeyword over a branch view (the branch's files
// over main's; "" = main).
func (s *Store) SearchKeywordIn(ctx context.Context, project, query string, limit int, where *filters.WhereBuilder, branch string, at int64) ([]Chunk, error) {
	return s.SearchKeywordMatching(ctx, project, query, MatchStemmed, limit, where, branch, at)
}

// Match says how keyword search compares words.
type Match struct {
	// Exact compares the content's words as written (lowercased); otherwise
	// the stemmed terms (shared/terms) of the content and, HeadingWeight
	// times over, of the title, path and headings are compared.
	Exact         bool
	HeadingWeight int // 0: headings only as part of the content
}

// HeadingWeight is the default weight of title, path and heading terms
// against body terms in stemmed search (chosen by go tool task eval, docs/eval).
const HeadingWeight = 1

var (
	// MatchStemmed is stemmed matching with the default heading weight.
	MatchStemmed = Match{HeadingWeight: HeadingWeight}
	// MatchExact compares words as written.
	MatchExact = Match{Exact: true}
)

// String is hybrid_search's name of the match: stemmed or exact.
func (m Match) String() string {
	if m.Exact {
		return "exact"
	}
	return "stemmed"
}

// bm25 is the BM25 clause of a keyword search.
func bm25(query string, match Match) *grpcsearch.BM25 {
	stemmed := terms.Query(Sanitize(query))
	if match.Exact || stemmed == "" {
		return &grpcsearch.BM25{Query: Sanitize(query), Properties: []string{"content"}}
	}
	props := []string{schema.ContentTermsProperty}
	if match.HeadingWeight > 0 {
		props = append(props, fmt.Sprintf("%s^%d", schema.HeadingTermsProperty, match.HeadingWeight))
	}
	return &grpcsearch.BM25{Query: stemmed, Properties: props}
}

// SearchKeywordMatching is SearchKeywordIn with a choice of match. A stemmed
// search that finds nothing is asked again exactly: chunks written before the
// stemmed index existed have no terms until they are reindexed.
func (s *Store) SearchKeywordMatching(ctx context.Context, project, query string, match Match, limit int, where *filters.WhereBuilder, branch string, at int64) ([]Chunk, error) {
	branches := []string{""}
	if branch != "" {
		branches = append(branches, branch)
	}
	scope := wvquery.And(intLE("valid_from", at), filters.Where().WithPath([]string{"branch"}).WithOperator(filters.ContainsAny).WithValueText(branches...))
	if where != nil {
		scope = wvquery.And(scope, where)
	}
	scope, err := s.withoutReplaced(ctx, schema.ChunkClass, scope, at)
	if err != nil {
		return nil, err
	}
	var out []Chunk
	// Pages of limit*3 rows, larger where many rows were replaced versions
	// not closed (pages.go).
	base := limit * 3
	depth := searchRounds * base
	for offset := 0; len(out) < limit && offset < depth; {
		n := nextPage(base, depth, offset, len(out), limit-len(out))
		rows, err := s.find(ctx, schema.ChunkClass, project, chunkFields, getQuery{bm25: bm25(query, match), where: scope, limit: n, offset: offset})
		if err != nil {
			return nil, err
		}
		if offset == 0 && len(rows) == 0 && !match.Exact {
			match = MatchExact // the same first page, exactly
			continue
		}
		offset += n
		cs := chunks(project, rows)
		visible, err := s.visible(ctx, project, cs, branch, at)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if visible[c.ID] {
				out = append(out, c)
			}
		}
		if len(cs) < n {
			break
		}
	}
	return out[:min(limit, len(out))], nil
}

// Sanitize makes user text safe to hand to the query builder: valid UTF-8, no
// control characters. The builder quotes it; this keeps quoting unambiguous.
func Sanitize(s string) string {
	s = strings.ToValidUTF8(s, " ")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// get runs a GraphQL Get of class within where, restricted to what the
// caller in ctx may read (withReaders); build adds the rest (not a where).
func (s *Store) get(ctx context.Context, class, project string, fields []graphql.Field, where *filters.WhereBuilder, build func(*graphql.GetBuilder) *graphql.GetBuilder) ([]map[string]any, error) {
	g := s.wv.GraphQL().Get().WithClassName(class).WithTenant(project).WithFields(fields...)
	if where = s.withReaders(ctx, project, class, where); where != nil {
		g = g.WithWhere(where)
	}
	if s.consistency != "" {
		g = g.WithConsistencyLevel(s.consistency)
	}
	resp, err := build(g).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("query %s of %s: %w", class, project, err)
	}
	if missing, err := graphQLError(resp.Errors, "query %s of %s", class, project); missing || err != nil {
		if err != nil {
			return nil, err
		}
		return nil, nil // no index for this project yet
	}
	return wvquery.Rows(resp, class), nil
}

func chunks(project string, rows []map[string]any) []Chunk {
	out := make([]Chunk, 0, len(rows))
	for _, r := range rows {
		add, _ := r["_additional"].(map[string]any)
		score, _ := strconv.ParseFloat(wvquery.Str(add, "score"), 64)
		var hp []string
		if l, ok := r["heading_path"].([]any); ok {
			for _, h := range l {
				if s, ok := h.(string); ok {
					hp = append(hp, s)
				}
			}
		}
		out = append(out, Chunk{
			ID: wvquery.Str(add, "id"), Project: project, FileID: wvquery.Str(r, "file_id"), FileVersionID: wvquery.Str(r, "file_version_id"),
			FilePath: wvquery.Str(r, "file_path"), Branch: wvquery.Str(r, "branch"), Index: wvquery.Int(r, "index"), Content: wvquery.Str(r, "content"),
			StartOffset: wvquery.Int(r, "start_offset"), EndOffset: wvquery.Int(r, "end_offset"), TokenCount: wvquery.Int(r, "token_count"),
			SourceChecksum: wvquery.Str(r, "source_checksum"), CreatedAt: wvquery.Str(r, "created_at"), SectionID: wvquery.Str(r, "section_id"),
			HeadingPath: hp, EmbeddingStatus: wvquery.Str(r, "embedding_status"), EmbeddingModel: wvquery.Str(r, "embedding_model"), Score: score,
			SectionTokens: wvquery.Int(r, "section_token_count"), SectionChunks: wvquery.Int(r, "section_chunk_count"),
			PageStart: wvquery.Int(r, "page_start"), PageEnd: wvquery.Int(r, "page_end"), OCRConfidence: wvquery.Float(r, "ocr_confidence"),
		})
	}
	return out
}

func isNotFound(err error) bool {
	var ce *fault.WeaviateClientError
	return errors.As(err, &ce) && ce.StatusCode == 404
}

// SectionExists reports whether any chunk belongs to section id.
func (s *Store) SectionExists(ctx context.Context, project, id string) (bool, error) {
	rows, err := s.get(ctx, schema.ChunkClass, project, []graphql.Field{{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}}},
		SectionFilter(id), func(g *graphql.GetBuilder) *graphql.GetBuilder { return g.WithLimit(1) })
	return len(rows) > 0, err
}

// graphQLError turns GraphQL errors into one error naming what was asked
// (format and args). missing reports the errors of a project without an
// index (no tenant yet), which callers answer as empty.
func graphQLError(errs []*models.GraphQLError, format string, args ...any) (missing bool, err error) {
	if len(errs) == 0 {
		return false, nil
	}
	joined := wvquery.Errors(errs)
	if wvquery.NoTenant(joined) {
		return true, nil
	}
	return false, fmt.Errorf(format+": %s", append(args, joined)...)
}

// And matches what every filter matches.
func And(ws ...*filters.WhereBuilder) *filters.WhereBuilder { return wvquery.And(ws...) }

// PathPrefixFilter matches objects whose file_path starts with prefix.
func PathPrefixFilter(prefix string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"file_path"}).WithOperator(filters.Like).WithValueText(escapeLike(prefix) + "*")
}

// FileIDsFilter matches objects of the given files.
func FileIDsFilter(fileIDs []string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"file_id"}).WithOperator(filters.ContainsAny).WithValueText(fileIDs...)
}
