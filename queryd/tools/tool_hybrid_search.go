package tools

// hybrid_search: Strata's own search tool. Keyword (BM25) and vector
// rankings are fused per call as the caller chooses, and every hit says how
// it was found (explain). It takes the Veryfront scopes (branch, release)
// and the Knowledge Stack scope (parent_path_part_ids), plus metadata
// filters; every answer carries the watermark it read.

import (
	"context"
	_ "embed"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

//go:embed schemas/hybrid_search.input.json
var hybridSearchInput string

var hybridSearchTool = define(ToolsetStrata, "hybrid_search", hybridSearchDescription, hybridSearchInput, (*Tools).hybridSearch).
	when("the store searches a branch by keyword (always in queryd)", func(t *Tools) bool { return t.keyword != nil })

const hybridSearchDescription = "Hybrid search you can steer and explain: BM25 keyword and dense vector rankings fused per call " +
	"(fusion \"relative\" score or \"ranked\" reciprocal rank; alpha 0 = keyword only, 1 = vector only). Every hit shows its keyword " +
	"and vector rank and score. Scope by project, branch or release, parent_path_part_ids, path_prefix, content_types and modification time. " +
	"The answer carries the index watermark (commit sequence) it read."

type hybridArgs struct {
	Query            string   `json:"query"`
	ProjectReference *string  `json:"project_reference"`
	TopK             *float64 `json:"top_k"`
	Fusion           *string  `json:"fusion"`
	Alpha            *float64 `json:"alpha"`
	KeywordMatch     *string  `json:"keyword_match"`
	HeadingWeight    *float64 `json:"heading_weight"`
	viewArgs
	ParentPathPartIDs []string `json:"parent_path_part_ids"`
	PathPrefix        *string  `json:"path_prefix"`
	ContentTypes      []string `json:"content_types"`
	ModifiedAfter     *string  `json:"modified_after"`
	ModifiedBefore    *string  `json:"modified_before"`
	// Metadata filters by document metadata (metadata.ParseFilter).
	Metadata json.RawMessage `json:"metadata"`
}

// Explain says how a hit was found.
type Explain struct {
	KeywordRank      *int     `json:"keyword_rank"`      // 1-based; null: not in the keyword ranking
	KeywordScore     *float64 `json:"keyword_score"`     // BM25
	VectorRank       *int     `json:"vector_rank"`       // 1-based; null: not in the vector ranking
	VectorSimilarity *float64 `json:"vector_similarity"` // cosine
}

type hybridHit struct {
	Hit
	Branch string `json:"branch,omitempty"`
	// OCRConfidence is the mean confidence (0-100) of a hit read by OCR
	// from a scan or a picture, for an agent to weigh its words; omitted
	// for text the file held.
	OCRConfidence float64 `json:"ocr_confidence,omitempty"`
	Explain       Explain `json:"explain"`
}

type hybridOut struct {
	Query  string  `json:"query"`
	Fusion string  `json:"fusion"`
	Alpha  float64 `json:"alpha"`
	// KeywordMatch is how the keyword ranking compared words.
	KeywordMatch string           `json:"keyword_match"`
	Model        string           `json:"model"`
	Results      []hybridHit      `json:"results"`
	Watermarks   map[string]int64 `json:"watermarks"` // per project: the commit sequence this answer read
}

func (t *Tools) hybridSearch(ctx context.Context, p auth.Principal, a hybridArgs) (any, error) {
	q, topK, err := checkSearchArgs(searchArgs{Query: a.Query, ParentPathPartIDs: a.ParentPathPartIDs})
	if err != nil {
		return nil, err
	}
	if topK, err = intArg("top_k", a.TopK, 10, 1, 50); err != nil {
		return nil, err
	}
	f := DefaultFusion
	if a.Fusion != nil {
		if *a.Fusion != "relative" && *a.Fusion != "ranked" {
			return nil, userErrorf("fusion must be \"relative\" or \"ranked\"")
		}
		f.Method = *a.Fusion
	}
	if a.Alpha != nil {
		if math.IsNaN(*a.Alpha) || *a.Alpha < 0 || *a.Alpha > 1 {
			return nil, userErrorf("alpha must be from 0 (keyword only) to 1 (vector only)")
		}
		f.Alpha = *a.Alpha
	}
	match := store.MatchStemmed
	if a.KeywordMatch != nil {
		switch *a.KeywordMatch {
		case "stemmed":
		case "exact":
			match = store.MatchExact
		default:
			return nil, userErrorf("keyword_match must be \"stemmed\" or \"exact\"")
		}
	}
	if a.HeadingWeight != nil {
		w, err := intArg("heading_weight", a.HeadingWeight, store.HeadingWeight, 0, 5)
		if err != nil {
			return nil, err
		}
		if match.Exact {
			return nil, userErrorf("heading_weight applies to keyword_match \"stemmed\" only")
		}
		match.HeadingWeight = w
	}
	if t.queries == nil {
		if a.Alpha != nil && f.Alpha > 0 {
			return nil, userErrorf("this server has no embedding provider: only alpha 0 (keyword) is available")
		}
		f.Alpha = 0
	}
	meta, err := parseMetaFilter(a)
	if err != nil {
		return nil, err
	}
	if (a.ProjectReference == nil || *a.ProjectReference == "") && (a.BranchID != nil || a.ReleaseID != nil || a.ReleaseVersion != nil) {
		return nil, userErrorf("branch_id, release_id and release_version need project_reference")
	}
	projects, err := t.projectsNamed(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	docMeta, err := t.parseMetadataFilter(ctx, a.Metadata, projects)
	if err != nil {
		return nil, err
	}
	docMetaWhere, err := t.metadataWhere(ctx, docMeta)
	if err != nil {
		return nil, err
	}
	qv := &queryVectors{text: q}
	out := hybridOut{Query: q, Fusion: f.Method, Alpha: f.Alpha, KeywordMatch: match.String(), Model: "none", Results: []hybridHit{}, Watermarks: map[string]int64{}}
	if t.queries != nil {
		out.Model = t.queries.Model()
	}
	resolved := map[string]bool{}
	var fused []fusedHit
	for _, project := range projects {
		v, err := t.resolveView(ctx, project, a.viewArgs)
		if err != nil {
			return nil, err
		}
		out.Watermarks[project] = v.at
		where, scoped, err := t.scope(ctx, project, a.ParentPathPartIDs, resolved, v.at)
		if err != nil {
			return nil, err
		}
		if !scoped {
			continue
		}
		metaWhere, any, err := t.metaScope(ctx, project, v.branch, meta)
		if err != nil {
			return nil, err
		}
		if !any {
			continue
		}
		where = andWhere(andWhere(where, metaWhere), docMetaWhere)
		var keywordSide, vectorSide func(context.Context) ([]store.Chunk, error)
		if f.Alpha < 1 {
			keywordSide = func(ctx context.Context) ([]store.Chunk, error) {
				return t.keyword.SearchKeywordMatching(ctx, project, q, match, 2*topK, where, v.branch, v.at)
			}
		}
		if f.Alpha > 0 {
			vectorSide = func(ctx context.Context) ([]store.Chunk, error) {
				return t.searchVector(ctx, project, qv, store.VectorQuery{Branch: v.branch, At: v.at, Limit: 2 * topK, Where: where, VectorWhere: docMetaWhere})
			}
		}
		keyword, vector, err := searchBoth(ctx, keywordSide, vectorSide)
		if err != nil {
			return nil, err
		}
		fused = append(fused, fuse(inProject(project, keyword), inProject(project, vector), f)...)
	}
	if err := unresolved(a.ParentPathPartIDs, resolved); err != nil {
		return nil, err
	}
	slices.SortStableFunc(fused, func(x, y fusedHit) int {
		if c := compareDesc(x.Score, y.Score); c != 0 {
			return c
		}
		return strings.Compare(x.Chunk.ID, y.Chunk.ID)
	})
	fused = fused[:min(len(fused), topK)]
	levels := relevanceLevels(q, fused, f.Alpha < 1)
	for i, h := range fused {
		hh := hybridHit{Hit: hit(h.Chunk.Project, h.Chunk), Branch: h.Chunk.Branch, OCRConfidence: h.Chunk.OCRConfidence}
		hh.Score = round4(h.Score)
		hh.Relevance = levels[i]
		if h.KeywordRank > 0 {
			hh.Explain.KeywordRank, hh.Explain.KeywordScore = ptr(h.KeywordRank), ptr(round4(h.KeywordScore))
		}
		if h.VectorRank > 0 {
			hh.Explain.VectorRank, hh.Explain.VectorSimilarity = ptr(h.VectorRank), ptr(round4(h.VectorScore))
		}
		out.Results = append(out.Results, hh)
	}
	hits := make([]Hit, len(out.Results))
	branches := make([]string, len(out.Results))
	for i, h := range out.Results {
		hits[i], branches[i] = h.Hit, h.Branch
	}
	if err := t.fillMetadata(ctx, hits); err != nil {
		return nil, err
	}
	for i := range hits {
		out.Results[i].Hit = hits[i]
	}
	return hybridResult{out: out, links: resourceLinks(hits, branches)}, nil
}

// hybridResult is hybrid_search's answer: its JSON (the structured
// content, and a text block) and a resource link per document. When no hit
// is a strong match, a first text block says so before the JSON: an agent
// reading the text meets it first; clients parsing the answer read the
// structured content.
type hybridResult struct {
	out   hybridOut
	links []mcp.Content
}

func (r hybridResult) toolResult() (*mcp.CallToolResult, error) {
	res, err := structured(r.out)
	if err != nil {
		return nil, err
	}
	if len(r.out.Results) > 0 && r.out.Results[0].Relevance == relevanceLow {
		res.Content = append([]mcp.Content{mcp.NewTextContent(noStrongMatch + "\n")}, res.Content...)
	}
	res.Content = append(res.Content, r.links...)
	return res, nil
}

// metaFilter is hybrid_search's metadata filter.
type metaFilter struct {
	pathPrefix     string
	contentTypes   []string
	after, before  time.Time
	needsDocuments bool // content type or time: resolved through the documents
}

func parseMetaFilter(a hybridArgs) (metaFilter, error) {
	var m metaFilter
	if a.PathPrefix != nil {
		m.pathPrefix = strings.TrimPrefix(*a.PathPrefix, "/")
		if len(m.pathPrefix) > 1024 || strings.ContainsAny(m.pathPrefix, "*?\x00") {
			return m, userErrorf("path_prefix must be a project-relative path prefix of at most 1024 bytes without wildcards")
		}
	}
	if len(a.ContentTypes) > 20 {
		return m, userErrorf("content_types takes at most 20 formats")
	}
	for _, ct := range a.ContentTypes {
		if ct == "" || len(ct) > 64 {
			return m, userErrorf("content_types are formats such as \"markdown\", \"pdf\", \"docx\", \"html\", \"code\", \"text\"")
		}
		m.contentTypes = append(m.contentTypes, strings.ToLower(ct))
	}
	parse := func(name string, v *string) (time.Time, error) {
		if v == nil || *v == "" {
			return time.Time{}, nil
		}
		tm, err := time.Parse(time.RFC3339, *v)
		if err != nil {
			return tm, userErrorf("%s must be an RFC 3339 time such as 2026-01-31T00:00:00Z", name)
		}
		return tm, nil
	}
	var err error
	if m.after, err = parse("modified_after", a.ModifiedAfter); err != nil {
		return m, err
	}
	if m.before, err = parse("modified_before", a.ModifiedBefore); err != nil {
		return m, err
	}
	m.needsDocuments = len(m.contentTypes) > 0 || !m.after.IsZero() || !m.before.IsZero()
	return m, nil
}

// metaScope turns the metadata filter into a chunk filter for one project;
// ok=false means no file matches. Content type and modification time are
// the current document's (its format and when its version was ingested).
func (t *Tools) metaScope(ctx context.Context, project, branch string, m metaFilter) (where *store.Where, ok bool, err error) {
	if m.pathPrefix != "" {
		where = store.PathPrefixFilter(m.pathPrefix)
	}
	if !m.needsDocuments {
		return where, true, nil
	}
	docs, err := t.documentsIn(ctx, project, nil, nil, 10000)
	if err != nil {
		return nil, false, err
	}
	var fileIDs []string
	for _, d := range docs {
		if d.Branch != "" && d.Branch != branch {
			continue
		}
		if len(m.contentTypes) > 0 && !slices.Contains(m.contentTypes, strings.ToLower(d.Format)) {
			continue
		}
		modified, _ := time.Parse(time.RFC3339Nano, d.IngestedAt)
		if (!m.after.IsZero() && modified.Before(m.after)) || (!m.before.IsZero() && !modified.Before(m.before)) {
			continue
		}
		fileIDs = append(fileIDs, d.FileID)
	}
	if len(fileIDs) == 0 {
		return nil, false, nil
	}
	return andWhere(where, store.FileIDsFilter(fileIDs)), true, nil
}

func andWhere(a, b *store.Where) *store.Where {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return store.And(a, b)
}
