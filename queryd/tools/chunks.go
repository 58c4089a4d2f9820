package tools

import (
	"context"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// ChunkOut is Veryfront's chunk object, field for field.
type ChunkOut struct {
	chunkFields
	SourceChecksum string        `json:"source_checksum"`
	CreatedAt      string        `json:"created_at"`
	Embedding      *EmbeddingOut `json:"embedding"`
}

// chunkFields are the fields every chunk object of Veryfront's has, in
// their order: list_file_chunks's and get_file_chunk's, and search_files'
// (which has no source_checksum or created_at).
type chunkFields struct {
	ID            string `json:"id"`
	FilePath      string `json:"file_path"`
	FileID        string `json:"file_id"`
	FileVersionID string `json:"file_version_id"`
	Index         int    `json:"index"`
	Content       string `json:"content"`
	StartOffset   int    `json:"start_offset"`
	EndOffset     int    `json:"end_offset"`
	TokenCount    int    `json:"token_count"`
}

func chunkFieldsOf(c store.Chunk) chunkFields {
	return chunkFields{ID: c.ID, FilePath: c.FilePath, FileID: c.FileID, FileVersionID: c.FileVersionID, Index: c.Index,
		Content: c.Content, StartOffset: c.StartOffset, EndOffset: c.EndOffset, TokenCount: c.TokenCount}
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

// chunkOut is c in Veryfront's form; embedding (nil unless asked for) is
// its embedding metadata from embeddingsOf.
func chunkOut(c store.Chunk, embedding *EmbeddingOut) ChunkOut {
	return ChunkOut{chunkFields: chunkFieldsOf(c), SourceChecksum: c.SourceChecksum, CreatedAt: c.CreatedAt, Embedding: embedding}
}

// currentChunk finds a chunk of a current file version in a project the
// caller may read; anything else is "not found".
func (t *Tools) currentChunk(ctx context.Context, p auth.Principal, projectRef, chunkID string) (*store.Chunk, error) {
	project, err := t.resolveProject(ctx, p, projectRef)
	if err != nil {
		return nil, err
	}
	if !ids.Valid(chunkID) {
		return nil, userErrorf("chunk_id must be a UUID, got %q", clip(chunkID))
	}
	at, err := t.base.Watermark(ctx, project)
	if err != nil {
		return nil, err
	}
	c, err := t.chunks.GetChunk(ctx, project, chunkID, at)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, userErrorf("chunk not found: %s", chunkID)
	}
	return c, nil
}

// viewArgs are the arguments that choose what a tool reads of a project:
// a branch (its files over main's) or a release; else main as it is now.
type viewArgs struct {
	BranchID       *string `json:"branch_id"`
	ReleaseID      *string `json:"release_id"`
	ReleaseVersion *string `json:"release_version"`
}

// cursorArgs are the arguments of a listing read a page at a time: the
// page's size and the cursor that the previous page's answer gave.
type cursorArgs struct {
	Limit  *float64 `json:"limit"`
	Cursor *string  `json:"cursor"`
}

// position decodes the cursor argument of a call to tool, nil without
// one. A cursor issued by another tool, for another project, or whose
// position pinned refuses (another file, filter or search), belongs to
// another listing.
func (t *Tools) position(a cursorArgs, tool, project string, pinned func(cursor.Position) bool) (*cursor.Position, error) {
	if a.Cursor == nil || *a.Cursor == "" {
		return nil, nil
	}
	pos, err := t.cursor.Decode(*a.Cursor)
	if err != nil {
		return nil, userError{err.Error()}
	}
	if pos.Tool != tool || pos.Project != project || !pinned(pos) {
		return nil, foreignCursor(tool)
	}
	return &pos, nil
}

// foreignCursor is the answer to a cursor of another listing (or search).
func foreignCursor(tool string) error {
	what := "listing"
	if tool == "search_files" {
		what = "search"
	}
	return userErrorf("this cursor belongs to another %s; start again without a cursor", what)
}

// view is what a read sees: a branch ("" = main) as of a commit sequence.
type view struct {
	branch string
	at     int64
}

// resolveView turns branch_id / release_id / release_version into a view:
// the latest commit by default, a release's pinned sequence (and branch) when one is named.
func (t *Tools) resolveView(ctx context.Context, project string, a viewArgs) (view, error) {
	branchID, releaseID, releaseVersion := a.BranchID, a.ReleaseID, a.ReleaseVersion
	branch, err := t.resolveBranch(ctx, project, branchID)
	if err != nil {
		return view{}, err
	}
	var rel *store.Release
	switch {
	case releaseID != nil && *releaseID != "":
		if !ids.Valid(*releaseID) {
			return view{}, userErrorf("release_id must be a UUID, got %q", clip(*releaseID))
		}
		if rel, err = t.view.ReleaseByID(ctx, project, *releaseID); err != nil {
			return view{}, err
		}
		if rel == nil {
			return view{}, userErrorf("release not found: %s", *releaseID)
		}
		if releaseVersion != nil && *releaseVersion != "" && *releaseVersion != rel.Version {
			return view{}, userErrorf("release_id %s is version %q, not %q", *releaseID, rel.Version, *releaseVersion)
		}
	case releaseVersion != nil && *releaseVersion != "":
		if len(*releaseVersion) > 64 {
			return view{}, userErrorf("release_version is at most 64 characters")
		}
		if rel, err = t.view.ReleaseByVersion(ctx, project, branch, *releaseVersion); err != nil {
			return view{}, err
		}
		if rel == nil {
			return view{}, userErrorf("release not found: version %q", clip(*releaseVersion))
		}
	}
	if rel != nil {
		if branchID != nil && *branchID != "" && rel.Branch != branch {
			return view{}, userErrorf("release %s belongs to another branch than branch_id", rel.Version)
		}
		return view{branch: rel.Branch, at: rel.Sequence}, nil
	}
	at, err := t.base.Watermark(ctx, project)
	if err != nil {
		return view{}, err
	}
	return view{branch: branch, at: at}, nil
}

// versionAt finds the visible version of path in a view: the branch's own
// version (a change or a delete on the branch hides main's copy), else main's.
func (t *Tools) versionAt(ctx context.Context, project string, v view, path string) (*store.Version, error) {
	ver, err := t.base.VersionAt(ctx, project, v.branch, path, v.at)
	if err != nil {
		return nil, err
	}
	if ver == nil && v.branch != "" {
		if ver, err = t.base.VersionAt(ctx, project, "", path, v.at); err != nil {
			return nil, err
		}
	}
	switch {
	case ver == nil || ver.Deleted:
		return nil, userErrorf("file not found: %q", clip(path))
	case ver.Status != pipeline.StatusIndexed:
		return nil, userErrorf("file %q was not indexed (%s): %s", clip(path), ver.Status, ver.Error)
	}
	return ver, nil
}

// resolveBranch maps a branch_id to a branch name: null or absent is main.
func (t *Tools) resolveBranch(ctx context.Context, project string, branchID *string) (string, error) {
	if branchID == nil || *branchID == "" {
		return "", nil
	}
	if !ids.Valid(*branchID) {
		return "", userErrorf("branch_id must be a UUID or null, got %q", clip(*branchID))
	}
	branches, err := t.view.Branches(ctx, project)
	if err != nil {
		return "", err
	}
	for _, b := range branches {
		if ids.Branch(project, b) == *branchID {
			return b, nil
		}
	}
	return "", userErrorf("branch not found: %s", *branchID)
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
