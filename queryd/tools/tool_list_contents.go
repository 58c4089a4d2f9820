package tools

// The Knowledge Stack tool list_contents: browsing folders.

import (
	"context"
	_ "embed"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
)

const listContentsDescription = "List the contents of a folder. Pass null to list root-level folders. " +
	"The root folders are the projects your key can read; a folder lists its subfolders, then its documents " +
	"(with their status: a failed document says why). Paginated with limit/offset. On a document, section or chunk, use read instead."

//go:embed schemas/list_contents.input.json
var listContentsInput string

var listContentsTool = define(ToolsetKnowledge, "list_contents", listContentsDescription, listContentsInput, (*Tools).listContents)

type listContentsArgs struct {
	PathPartID *string `json:"path_part_id"`
	pageArgs
}

type listContentsOut struct {
	PathPartID *string    `json:"path_part_id"` // the folder listed; null for the root
	Name       string     `json:"name"`
	Path       string     `json:"path"`
	Breadcrumb string     `json:"breadcrumb"`
	Items      []PathPart `json:"items"` // folders first, then documents, each by name
	Page
}

func (t *Tools) listContents(ctx context.Context, p auth.Principal, a listContentsArgs) (any, error) {
	limit, offset, err := a.bounds()
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	out := listContentsOut{Items: []PathPart{}}
	if a.PathPartID == nil || strings.TrimSpace(*a.PathPartID) == "" {
		out.Path = "/"
		for _, project := range c.projects[min(offset, len(c.projects)):min(offset+limit, len(c.projects))] {
			out.Items = append(out.Items, folderPart(project, ""))
		}
		out.Page = pageOf(len(c.projects), offset, limit, len(out.Items))
		return out, nil
	}
	id, err := idArg("path_part_id", *a.PathPartID)
	if err != nil {
		return nil, err
	}
	n, err := c.mustResolve(ctx, "path_part_id", id, typeFolder, typeDocument, typeSection, typeChunk)
	if err != nil {
		return nil, err
	}
	if n.typ != typeFolder {
		return nil, wrongType("path_part_id", n, "a folder: use read with this path_part_id to read it")
	}
	folders, err := c.childFolders(ctx, n.project, n.folder)
	if err != nil {
		return nil, err
	}
	for i := offset; i < len(folders) && len(out.Items) < limit; i++ {
		out.Items = append(out.Items, folderPart(n.project, folders[i]))
	}
	docs, docTotal, err := t.knowledge.FolderDocuments(ctx, n.project, n.folder, max(0, offset-len(folders)), limit-len(out.Items))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		out.Items = append(out.Items, documentPart(n.project, d))
	}
	pid := n.id()
	out.PathPartID, out.Name, out.Path = &pid, n.name(), n.fsPath()
	out.Breadcrumb = breadcrumb(n.crumbs())
	out.Page = pageOf(len(folders)+docTotal, offset, limit, len(out.Items))
	return out, nil
}
