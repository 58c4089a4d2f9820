package tools

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
)

// MaxQueryBytes bounds search text.
const MaxQueryBytes = 4096

type searchArgs struct {
	Query             string   `json:"query"`
	TopK              *float64 `json:"top_k"`
	ParentPathPartIDs []string `json:"parent_path_part_ids"`
}

// Hit is one search result: Knowledge Stack's hit (content, score, chunk
// type, location path) with the ids to read further.
type Hit struct {
	PathPartID   string   `json:"path_part_id"`
	ChunkID      string   `json:"chunk_id"`
	Project      string   `json:"project"`
	DocumentID   string   `json:"document_id"`
	DocumentPath string   `json:"document_path"`
	SectionID    string   `json:"section_id"`
	ChunkType    string   `json:"chunk_type"`
	Content      string   `json:"content"`
	Score        float64  `json:"score"`
	Location     string   `json:"location"`
	HeadingPath  []string `json:"heading_path"`
	Index        int      `json:"index"`
	StartOffset  int      `json:"start_offset"`
	EndOffset    int      `json:"end_offset"`
	// PageStart and PageEnd are the pages the hit spans in a paged format
	// (PDF; DOCX where pages are known), omitted otherwise.
	PageStart int `json:"page_start,omitempty"`
	PageEnd   int `json:"page_end,omitempty"`
	// Citation is one string an agent can quote: the path, and the pages or headings.
	Citation string `json:"citation"`
	// Metadata is the document's metadata (package metadata).
	Metadata metadata.Metadata `json:"metadata"`
	// Relevance is how sure the match is: high, medium or low (relevance.go).
	Relevance string `json:"relevance,omitempty"`

	fileVersionID string // whose metadata the hit shows (fillMetadata)
}

type searchOut struct {
	Query   string `json:"query"`
	Results []Hit  `json:"results"`
}

// checkSearchArgs validates Knowledge Stack's search arguments.
func checkSearchArgs(a searchArgs) (query string, topK int, err error) {
	q := strings.TrimSpace(a.Query)
	if q == "" || len(q) > MaxQueryBytes || !utf8.ValidString(q) {
		return "", 0, userErrorf("query must be 1 to %d bytes of UTF-8 text", MaxQueryBytes)
	}
	topK, err = intArg("top_k", a.TopK, 5, 1, 20)
	if err != nil {
		return "", 0, err
	}
	if len(a.ParentPathPartIDs) > 50 {
		return "", 0, userErrorf("parent_path_part_ids takes at most 50 ids, got %d", len(a.ParentPathPartIDs))
	}
	for _, id := range a.ParentPathPartIDs {
		if !ids.Valid(id) {
			return "", 0, userErrorf("parent_path_part_ids must be UUIDs, got %q", clip(id))
		}
	}
	return q, topK, nil
}

// unresolved reports the first parent id no project recognised.
func unresolved(parents []string, resolved map[string]bool) error {
	for _, id := range parents {
		if !resolved[id] {
			return userErrorf("path_part_id not found: %s", id)
		}
	}
	return nil
}

// sortHits orders hits best first, ties by chunk id (stable across calls).
func sortHits(hits []Hit) {
	slices.SortStableFunc(hits, func(x, y Hit) int {
		if c := compareDesc(x.Score, y.Score); c != 0 {
			return c
		}
		return strings.Compare(x.ChunkID, y.ChunkID)
	})
}

// searchProjects runs one of Knowledge Stack's searches over every project
// the caller may read, scoped by parent_path_part_ids, as of each project's
// watermark, and keeps the best top_k hits.
func (t *Tools) searchProjects(ctx context.Context, p auth.Principal, a searchArgs, keyword bool,
	search func(ctx context.Context, project, q string, topK int, where *store.Where, at int64) ([]store.Chunk, error)) (any, error) {
	q, topK, err := checkSearchArgs(a)
	if err != nil {
		return nil, err
	}
	projects, err := t.projectsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	out := searchOut{Query: q, Results: []Hit{}}
	resolved := map[string]bool{}
	for _, project := range projects {
		at, err := t.base.Watermark(ctx, project)
		if err != nil {
			return nil, err
		}
		where, scoped, err := t.scope(ctx, project, a.ParentPathPartIDs, resolved, at)
		if err != nil {
			return nil, err
		}
		if !scoped {
			continue
		}
		rows, err := search(ctx, project, q, topK, where, at)
		if err != nil {
			return nil, err
		}
		t.places.remember(project, rows...)
		for _, c := range rows {
			out.Results = append(out.Results, hit(project, c))
		}
	}
	if err := unresolved(a.ParentPathPartIDs, resolved); err != nil {
		return nil, err
	}
	sortHits(out.Results)
	out.Results = out.Results[:min(len(out.Results), topK)]
	ranked := make([]store.Chunk, len(out.Results))
	for i, h := range out.Results {
		ranked[i] = store.Chunk{Project: h.Project, FilePath: h.DocumentPath, Content: h.Content, HeadingPath: h.HeadingPath, Score: h.Score}
	}
	for i, level := range chunkRelevanceLevels(q, ranked, keyword) {
		out.Results[i].Relevance = level
	}
	return out, t.fillMetadata(ctx, out.Results)
}

// scope turns parent path_part_ids into a filter for one project. It reports
// scoped=false when none of the ids is in this project (skip it), and marks
// the ids it recognised in resolved.
func (t *Tools) scope(ctx context.Context, project string, parents []string, resolved map[string]bool, at int64) (*store.Where, bool, error) {
	if len(parents) == 0 {
		return nil, true, nil
	}
	var ors []*store.Where
	var docs []store.Document
	loaded := false
	for _, id := range parents {
		if id == ids.Project(project) {
			resolved[id] = true
			return nil, true, nil // the whole project
		}
		if !loaded {
			var err error
			if docs, err = t.search.Documents(ctx, project, 10000); err != nil {
				return nil, false, err
			}
			loaded = true
		}
		if w := matchTree(project, docs, id); w != nil {
			resolved[id] = true
			ors = append(ors, w)
			continue
		}
		c, err := t.search.GetChunk(ctx, project, id, at)
		if err != nil {
			return nil, false, err
		}
		if c != nil {
			resolved[id] = true
			ors = append(ors, store.ChunkFilter(id))
			continue
		}
		// Sections: accept the id if any chunk carries it.
		hits, err := t.search.SectionExists(ctx, project, id)
		if err != nil {
			return nil, false, err
		}
		if hits {
			resolved[id] = true
			ors = append(ors, store.SectionFilter(id))
		}
	}
	if len(ors) == 0 {
		return nil, false, nil
	}
	return store.Or(ors...), true, nil
}

// matchTree finds id among the project's documents and folders.
func matchTree(project string, docs []store.Document, id string) *store.Where {
	for _, d := range docs {
		if d.FileID == id {
			return store.FileFilter(id)
		}
		// The folders holding the document, from its path (objkey.Split: a
		// member's folder is its container's path).
		for folder := folderOf(d.FilePath); folder != ""; folder = folderOf(folder) {
			if ids.Folder(project, d.Branch, folder) == id {
				return store.FolderFilter(d.Branch, folder)
			}
		}
	}
	return nil
}

func hit(project string, c store.Chunk) Hit {
	loc := append([]string{project}, pathNames(c.FilePath)...)
	loc = append(loc, c.HeadingPath...)
	return Hit{
		PathPartID: c.ID, ChunkID: c.ID, Project: project, DocumentID: c.FileID, DocumentPath: c.FilePath,
		SectionID: c.SectionID, ChunkType: "TEXT", Content: c.Content, Score: c.Score,
		Location: strings.Join(loc, " > "), HeadingPath: nonNilStrings(c.HeadingPath), Index: c.Index,
		StartOffset: c.StartOffset, EndOffset: c.EndOffset, PageStart: c.PageStart, PageEnd: c.PageEnd,
		Citation: citation(c), Metadata: metadata.Metadata{}, fileVersionID: c.FileVersionID,
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
