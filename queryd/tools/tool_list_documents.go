package tools

// list_documents: Strata's own listing of a project's documents with their
// metadata, filtered by path prefix and by metadata (the same filter as
// hybrid_search's), answered from the catalog of commits.

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/shared/metadata"
)

//go:embed schemas/list_documents.input.json
var listDocumentsInput string

var listDocumentsTool = define(ToolsetStrata, "list_documents", listDocumentsDescription, listDocumentsInput, (*Tools).listDocuments).
	when("the store lists documents by metadata (always in queryd; it answers from the catalog of commits, with `-nats-url`)", func(t *Tools) bool { return t.lister != nil && t.meta != nil })

const listDocumentsDescription = "List a project's documents with their metadata (S3 tags and x-amz-meta-*, front matter, HTML meta, DOCX and PDF properties), " +
	"sorted by path, filtered by path_prefix and by a metadata filter such as {\"department\": \"legal\", \"year\": {\"gte\": 2024}}. Paginated with next_cursor."

type listDocumentsArgs struct {
	ProjectReference string          `json:"project_reference"`
	BranchID         *string         `json:"branch_id"`
	PathPrefix       *string         `json:"path_prefix"`
	Metadata         json.RawMessage `json:"metadata"`
	cursorArgs
}

type listedDocument struct {
	PathPartID   string            `json:"path_part_id"`
	DocumentPath string            `json:"document_path"`
	Title        string            `json:"title"`
	Format       string            `json:"format"`
	Status       string            `json:"status"`
	ChunkCount   int               `json:"chunk_count"`
	UpdatedAt    string            `json:"updated_at"`
	Metadata     metadata.Metadata `json:"metadata"`
	// MetadataWarnings say what the document's metadata merge dropped.
	MetadataWarnings []string `json:"metadata_warnings,omitempty"`
}

type listDocumentsOut struct {
	Project    string           `json:"project"`
	Documents  []listedDocument `json:"documents"`
	NextCursor *string          `json:"next_cursor"`
	Watermark  int64            `json:"watermark"`
}

func (t *Tools) listDocuments(ctx context.Context, p auth.Principal, a listDocumentsArgs) (any, error) {
	project, err := t.resolveProject(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	limit, err := intArg("limit", a.Limit, 50, 1, 100)
	if err != nil {
		return nil, err
	}
	branch, err := t.resolveBranch(ctx, project, a.BranchID)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if a.PathPrefix != nil {
		prefix = strings.TrimPrefix(*a.PathPrefix, "/")
		if len(prefix) > 1024 || strings.ContainsAny(prefix, "*?\x00") {
			return nil, userErrorf("path_prefix must be a project-relative path prefix of at most 1024 bytes without wildcards")
		}
	}
	f, err := t.parseMetadataFilter(ctx, a.Metadata, []string{project})
	if err != nil {
		return nil, err
	}
	// The cursor is pinned to the listing's arguments (a digest: a filter may be long).
	sum := sha256.Sum256([]byte(branch + "\x00" + prefix + "\x00" + string(a.Metadata)))
	scope := hex.EncodeToString(sum[:12])
	after := ""
	pos, err := t.position(a.cursorArgs, "list_documents", project, func(pos cursor.Position) bool {
		return pos.Scope == scope && pos.After != ""
	})
	if err != nil {
		return nil, err
	}
	if pos != nil {
		after = pos.After
	}
	at, err := t.base.Watermark(ctx, project)
	if err != nil {
		return nil, err
	}
	if t.lister == nil {
		return nil, userErrorf("list_documents is not available on this server")
	}
	docs, more, ok := t.lister.ListDocuments(ctx, project, branch, prefix, f, after, limit)
	if !ok {
		return nil, userErrorf("the document catalog is loading; try again in a moment")
	}
	out := listDocumentsOut{Project: project, Documents: []listedDocument{}, Watermark: at}
	for _, d := range docs {
		out.Documents = append(out.Documents, listedDocument{PathPartID: d.FileID, DocumentPath: d.FilePath, Title: d.Title,
			Format: d.Format, Status: d.Status, ChunkCount: d.ChunkCount, UpdatedAt: d.UpdatedAt,
			Metadata: nonNilMetadata(d.Metadata), MetadataWarnings: d.MetadataWarnings})
	}
	if more && len(docs) > 0 {
		c := t.cursor.Encode(cursor.Position{Tool: "list_documents", Project: project, Scope: scope, After: docs[len(docs)-1].FilePath, Offset: 0, Limit: limit})
		out.NextCursor = &c
	}
	return out, nil
}
