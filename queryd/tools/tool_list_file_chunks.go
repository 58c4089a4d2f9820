package tools

// list_file_chunks (Veryfront): the chunks of one file in order, a page at a time.

import (
	"context"
	_ "embed"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
)

const listFileChunksDescription = "List the indexed chunks of one file in order, with offsets, token counts and checksums. Paginated with opaque cursors."

//go:embed schemas/list_file_chunks.input.json
var listFileChunksInput string

//go:embed schemas/list_file_chunks.output.json
var listFileChunksOutput string

var listFileChunksTool = define(ToolsetChunks, "list_file_chunks", listFileChunksDescription, listFileChunksInput, (*Tools).listFileChunks).withOutput(listFileChunksOutput)

type listFileChunksArgs struct {
	ProjectReference string `json:"project_reference"`
	FilePath         string `json:"file_path"`
	viewArgs
	cursorArgs
	IncludeEmbeddings bool `json:"include_embeddings"`
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
	path, err := documentPath("file_path", project, a.FilePath) // a file's or a member's (paths.go)
	if err != nil {
		return nil, err
	}
	limit, err := intArg("limit", a.Limit, 100, 1, 100)
	if err != nil {
		return nil, err
	}
	view, err := t.resolveView(ctx, project, a.viewArgs)
	if err != nil {
		return nil, err
	}
	doc, err := t.versionAt(ctx, project, view, path)
	if err != nil {
		return nil, err
	}
	offset := 0
	pos, err := t.position(a.cursorArgs, "list_file_chunks", project, func(pos cursor.Position) bool {
		return strings.HasSuffix(pos.Scope, "|"+path)
	})
	if err != nil {
		return nil, err
	}
	if pos != nil {
		if !strings.HasPrefix(pos.Scope, doc.FileVersionID+"|") {
			return nil, userErrorf("the file changed since this cursor was issued (new version %s); start again without a cursor", doc.FileVersionID)
		}
		offset = pos.Offset
		if a.Limit == nil {
			limit = pos.Limit
		}
	}
	rows, err := t.chunks.ListChunks(ctx, project, doc.FileVersionID, offset, limit+1)
	if err != nil {
		return nil, err
	}
	more := len(rows) > limit
	rows = rows[:min(len(rows), limit)]
	out := listFileChunksOut{Data: make([]ChunkOut, 0, len(rows))}
	emb := map[string]*EmbeddingOut{}
	if a.IncludeEmbeddings {
		if emb, err = t.embeddingsOf(ctx, project, rows); err != nil {
			return nil, err
		}
	}
	for _, c := range rows {
		out.Data = append(out.Data, chunkOut(c, emb[c.ID]))
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
