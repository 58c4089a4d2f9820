package tools

import (
	"context"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// ChunkOut is Veryfront's chunk object, field for field.
type ChunkOut struct {
	ID             string        `json:"id"`
	FilePath       string        `json:"file_path"`
	FileID         string        `json:"file_id"`
	FileVersionID  string        `json:"file_version_id"`
	Index          int           `json:"index"`
	Content        string        `json:"content"`
	StartOffset    int           `json:"start_offset"`
	EndOffset      int           `json:"end_offset"`
	TokenCount     int           `json:"token_count"`
	SourceChecksum string        `json:"source_checksum"`
	CreatedAt      string        `json:"created_at"`
	Embedding      *EmbeddingOut `json:"embedding"`
}

// EmbeddingOut is a chunk's embedding metadata.
type EmbeddingOut struct {
	ID     string `json:"id"`
	Model  string `json:"model"`
	Status string `json:"status"`
}

// PageInfo is Veryfront's page_info.
type PageInfo struct {
	Self  *string        `json:"self"`
	First map[string]any `json:"first"`
	Next  *string        `json:"next"`
	Prev  *string        `json:"prev"`
}

func chunkOut(c store.Chunk, withEmbedding bool) ChunkOut {
	out := ChunkOut{
		ID: c.ID, FilePath: c.FilePath, FileID: c.FileID, FileVersionID: c.FileVersionID, Index: c.Index,
		Content: c.Content, StartOffset: c.StartOffset, EndOffset: c.EndOffset, TokenCount: c.TokenCount,
		SourceChecksum: c.SourceChecksum, CreatedAt: c.CreatedAt,
	}
	if withEmbedding {
		status := c.EmbeddingStatus
		if status == "" {
			status = pipeline.EmbeddingMissing
		}
		out.Embedding = &EmbeddingOut{ID: c.ID, Model: c.EmbeddingModel, Status: status}
	}
	return out
}

type listFileChunksArgs struct {
	ProjectReference  string   `json:"project_reference"`
	FilePath          string   `json:"file_path"`
	BranchID          *string  `json:"branch_id"`
	ReleaseID         *string  `json:"release_id"`
	ReleaseVersion    *string  `json:"release_version"`
	Limit             *float64 `json:"limit"`
	Cursor            *string  `json:"cursor"`
	IncludeEmbeddings bool     `json:"include_embeddings"`
}

type listFileChunksOut struct {
	Data     []ChunkOut `json:"data"`
	PageInfo PageInfo   `json:"page_info"`
}

func (t *Tools) listFileChunks(ctx context.Context, p auth.Principal, a listFileChunksArgs) (any, error) {
	project, err := t.resolveProject(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	if err := noReleases(a.ReleaseID, a.ReleaseVersion); err != nil {
		return nil, err
	}
	path := strings.TrimPrefix(a.FilePath, "/")
	if path == "" || len(path) > 1024 {
		return nil, userErrorf("file_path must be a project-relative path of 1 to 1024 bytes")
	}
	limit, err := intArg("limit", a.Limit, 100, 1, 100)
	if err != nil {
		return nil, err
	}
	branch, err := t.resolveBranch(ctx, project, a.BranchID)
	if err != nil {
		return nil, err
	}
	doc, err := t.currentDocument(ctx, project, branch, path)
	if err != nil {
		return nil, err
	}
	offset := 0
	if a.Cursor != nil && *a.Cursor != "" {
		pos, err := t.cursor.Decode(*a.Cursor)
		if err != nil {
			return nil, userError{err.Error()}
		}
		if pos.Tool != "list_file_chunks" || pos.Project != project || !strings.HasSuffix(pos.Scope, "|"+path) {
			return nil, userErrorf("this cursor belongs to another listing; start again without a cursor")
		}
		if !strings.HasPrefix(pos.Scope, doc.FileVersionID+"|") {
			return nil, userErrorf("the file changed since this cursor was issued (new version %s); start again without a cursor", doc.FileVersionID)
		}
		offset = pos.Offset
		if a.Limit == nil {
			limit = pos.Limit
		}
	}
	rows, err := t.read.ListChunks(ctx, project, doc.FileVersionID, offset, limit+1)
	if err != nil {
		return nil, err
	}
	more := len(rows) > limit
	rows = rows[:min(len(rows), limit)]
	out := listFileChunksOut{Data: make([]ChunkOut, 0, len(rows))}
	for _, c := range rows {
		out.Data = append(out.Data, chunkOut(c, a.IncludeEmbeddings))
	}
	at := func(off int) *string {
		s := t.cursor.Encode(cursor.Position{Tool: "list_file_chunks", Project: project, Scope: doc.FileVersionID + "|" + path, Offset: off, Limit: limit})
		return &s
	}
	out.PageInfo = PageInfo{Self: at(offset), First: map[string]any{"cursor": *at(0)}}
	if more {
		out.PageInfo.Next = at(offset + limit)
	}
	if offset > 0 {
		out.PageInfo.Prev = at(max(offset-limit, 0))
	}
	return out, nil
}

type getFileChunkArgs struct {
	ProjectReference string `json:"project_reference"`
	ChunkID          string `json:"chunk_id"`
	IncludeEmbedding bool   `json:"include_embedding"`
}

func (t *Tools) getFileChunk(ctx context.Context, p auth.Principal, a getFileChunkArgs) (any, error) {
	project, err := t.resolveProject(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	if !ids.Valid(a.ChunkID) {
		return nil, userErrorf("chunk_id must be a UUID, got %q", clip(a.ChunkID))
	}
	c, err := t.read.GetChunk(ctx, project, a.ChunkID)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, userErrorf("chunk not found: %s", a.ChunkID)
	}
	return map[string]any{"chunk": chunkOut(*c, a.IncludeEmbedding)}, nil
}

// currentDocument finds the live version of path on branch, falling back to
// main for files the branch has not changed.
func (t *Tools) currentDocument(ctx context.Context, project, branch, path string) (*store.Document, error) {
	doc, err := t.read.FindDocument(ctx, project, branch, path)
	if err != nil {
		return nil, err
	}
	if doc == nil && branch != "" {
		if doc, err = t.read.FindDocument(ctx, project, "", path); err != nil {
			return nil, err
		}
	}
	switch {
	case doc == nil || doc.Deleted:
		return nil, userErrorf("file not found: %q", clip(path))
	case doc.Status != pipeline.StatusIndexed:
		return nil, userErrorf("file %q was not indexed (%s): %s", clip(path), doc.Status, doc.Error)
	}
	return doc, nil
}

// resolveBranch maps a branch_id to a branch name: null or absent is main.
func (t *Tools) resolveBranch(ctx context.Context, project string, branchID *string) (string, error) {
	if branchID == nil || *branchID == "" {
		return "", nil
	}
	if !ids.Valid(*branchID) {
		return "", userErrorf("branch_id must be a UUID or null, got %q", clip(*branchID))
	}
	docs, err := t.read.Documents(ctx, project, 10000)
	if err != nil {
		return "", err
	}
	for _, d := range docs {
		if d.Branch != "" && ids.Branch(project, d.Branch) == *branchID {
			return d.Branch, nil
		}
	}
	return "", userErrorf("branch not found: %s", *branchID)
}

func noReleases(id, version *string) error {
	if (id != nil && *id != "") || (version != nil && *version != "") {
		return userErrorf("releases are not available yet in this Strata version: omit release_id and release_version to read the latest state")
	}
	return nil
}

// intArg validates an optional whole-number argument.
func intArg(name string, v *float64, def, lo, hi int) (int, error) {
	if v == nil {
		return def, nil
	}
	f := *v
	if f != float64(int(f)) || int(f) < lo || int(f) > hi {
		return 0, userErrorf("%s must be a whole number from %d to %d, got %v", name, lo, hi, f)
	}
	return int(f), nil
}
