package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/objkey"
)

//go:embed schemas/read_chunk_neighbors.input.json
var readChunkNeighborsInput string

var readChunkNeighborsTool = defineRaw(ToolsetLocalRAG, "read_chunk_neighbors", readChunkNeighborsDescription, readChunkNeighborsInput, (*Tools).readChunkNeighbors)

// readChunkNeighborsDescription is mcp-local-rag's own (src/server/tool-definitions.ts).
const readChunkNeighborsDescription = "Read the chunks immediately before and after a query_documents result, in the same document, for more surrounding context. Pass chunkIndex from the result plus exactly one of filePath (ingest_file) or source (ingest_data). Returns the target chunk (isTarget: true) and its neighbors, ascending by chunkIndex; an out-of-range chunkIndex returns []. Defaults: before=2, after=2 (max 50 each)."

type neighborsArgs struct {
	FilePath   *string  `json:"filePath"`
	Source     *string  `json:"source"`
	ChunkIndex *float64 `json:"chunkIndex"`
	Before     *float64 `json:"before"`
	After      *float64 `json:"after"`
}

// neighborItem is mcp-local-rag's ReadChunkNeighborsResultItem.
type neighborItem struct {
	FilePath   string  `json:"filePath"`
	ChunkIndex int     `json:"chunkIndex"`
	Text       string  `json:"text"`
	IsTarget   bool    `json:"isTarget"`
	FileTitle  *string `json:"fileTitle"`
}

// readChunkNeighbors answers like the original: the text is the JSON array
// of items; the structured content wraps it as {"chunks": [...]}, because MCP
// structured content must be an object.
func (t *Tools) readChunkNeighbors(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return mcp.NewToolResultError("not authenticated"), nil
	}
	var a neighborsArgs
	raw, _ := json.Marshal(req.GetRawArguments())
	if err := json.Unmarshal(raw, &a); err != nil {
		return mcp.NewToolResultError("invalid arguments for read_chunk_neighbors: " + err.Error()), nil
	}
	items, err := t.neighbors(ctx, p, a)
	if err != nil {
		if ue, ok := err.(userError); ok {
			return mcp.NewToolResultError(ue.msg), nil
		}
		t.log.Error("tool failed", "tool", "read_chunk_neighbors", "key", p.KeyName, "err", err)
		return mcp.NewToolResultError("read_chunk_neighbors failed: internal error; try again later"), nil
	}
	text, _ := json.MarshalIndent(items, "", "  ")
	return mcp.NewToolResultStructured(map[string]any{"chunks": items}, string(text)), nil
}

func (t *Tools) neighbors(ctx context.Context, p auth.Principal, a neighborsArgs) ([]neighborItem, error) {
	hasPath := a.FilePath != nil && strings.TrimSpace(*a.FilePath) != ""
	hasSource := a.Source != nil && strings.TrimSpace(*a.Source) != ""
	switch {
	case hasPath == hasSource:
		return nil, userErrorf("provide exactly one of filePath or source")
	case hasSource:
		return nil, userErrorf("source names ingest_data documents, which Strata does not have: pass filePath (as list_files shows it, /<project>/<path>)")
	}
	if a.ChunkIndex == nil {
		return nil, userErrorf("chunkIndex is required")
	}
	idx, err := intArg("chunkIndex", a.ChunkIndex, 0, 0, 1<<30)
	if err != nil {
		return nil, err
	}
	before, err := intArg("before", a.Before, 2, 0, 50)
	if err != nil {
		return nil, err
	}
	after, err := intArg("after", a.After, 2, 0, 50)
	if err != nil {
		return nil, err
	}
	project, branch, path, err := splitFilePath(*a.FilePath)
	if err != nil {
		return nil, err
	}
	project, err = t.resolveProject(ctx, p, project)
	if err != nil {
		return nil, err
	}
	at, err := t.base.Watermark(ctx, project)
	if err != nil {
		return nil, err
	}
	ver, err := t.versionAt(ctx, project, view{branch: branch, at: at}, path)
	if err != nil {
		return nil, err
	}
	lo, hi := max(0, idx-before), idx+after
	rows, err := t.localRAG.ListChunks(ctx, project, ver.FileVersionID, lo, hi-lo+1)
	if err != nil {
		return nil, err
	}
	items := []neighborItem{}
	if idx >= lo+len(rows) { // out of range: the original answers []
		return items, nil
	}
	var title *string
	if ver.Title != "" {
		title = &ver.Title
	}
	for _, c := range rows {
		items = append(items, neighborItem{FilePath: *a.FilePath, ChunkIndex: c.Index, Text: c.Content, IsTarget: c.Index == idx, FileTitle: title})
	}
	return items, nil
}

// splitFilePath reads list_files' path form "/<project>[@<branch>]/<path>",
// where path may be a member's ("/acme/mail/a.eml//notes.txt",
// objkey.ParseDocument).
func splitFilePath(fp string) (project, branch, path string, err error) {
	k, perr := objkey.ParseDocument(strings.TrimPrefix(strings.TrimSpace(fp), "/"))
	if perr != nil || !strings.HasPrefix(strings.TrimSpace(fp), "/") {
		return "", "", "", userErrorf("filePath must look like /<project>/<path>, or /<project>/<container path>//<member path> for a file "+
			"inside another (as list_files returns it), got %q", clip(fp))
	}
	return k.Project, k.Branch, k.Path, nil
}
