package tools

// The Knowledge Stack tool get_info: what one node is, with its metadata.

import (
	"context"
	_ "embed"
	"slices"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/metadata"
)

const getInfoDescription = "Get metadata and a breadcrumb trail for any node in the knowledge base. This is the \"where am I?\" tool: " +
	"node type, name, full path, breadcrumb (e.g. acme > docs > guide.md > Install), parent path_part_id and statistics."

//go:embed schemas/get_info.input.json
var getInfoInput string

var getInfoTool = define(ToolsetKnowledge, "get_info", getInfoDescription, getInfoInput, (*Tools).getInfo)

type getInfoArgs struct {
	PathPartID string `json:"path_part_id"`
}

// infoOut is get_info's answer: what every node has, then its type's fields.
type infoOut struct {
	PathPartID       string  `json:"path_part_id"`
	Type             string  `json:"type"` // FOLDER, DOCUMENT, SECTION or CHUNK
	Name             string  `json:"name"`
	Path             string  `json:"path"` // a folder's or document's; a section's or chunk's document's
	Project          string  `json:"project"`
	Breadcrumb       string  `json:"breadcrumb"`
	BreadcrumbParts  []Crumb `json:"breadcrumb_parts"`
	ParentPathPartID *string `json:"parent_path_part_id"` // null for a project root

	// DOCUMENT.
	Status        string `json:"status,omitempty"`
	Error         string `json:"error,omitempty"`
	Format        string `json:"format,omitempty"`
	Title         string `json:"title,omitempty"`
	FileVersionID string `json:"file_version_id,omitempty"`
	SectionCount  *int   `json:"section_count,omitempty"`
	Pages         int    `json:"pages,omitempty"`
	// Metadata is the document's metadata (package metadata); MetadataWarnings
	// what its merge dropped (keys beyond the limits, invalid keys).
	Metadata         metadata.Metadata `json:"metadata,omitempty"`
	MetadataWarnings []string          `json:"metadata_warnings,omitempty"`
	// Access, Groups and AccessError say who reads the document, shown to
	// admins only (a member would learn other groups' names): see docAccess.
	Access      string   `json:"access,omitempty"`
	Groups      []string `json:"groups,omitempty"`
	AccessError string   `json:"access_error,omitempty"`
	UpdatedAt   string   `json:"updated_at,omitempty"`
	// DOCUMENT and SECTION; CHUNK (its own).
	TokenCount *int `json:"token_count,omitempty"`
	ChunkCount *int `json:"chunk_count,omitempty"`
	// SECTION and CHUNK.
	DocumentID  string   `json:"document_id,omitempty"`
	HeadingPath []string `json:"heading_path,omitempty"`
	PageStart   int      `json:"page_start,omitempty"`
	PageEnd     int      `json:"page_end,omitempty"`
	// SECTION.
	Ordinal *int `json:"ordinal,omitempty"`
	Level   *int `json:"level,omitempty"`
	// CHUNK.
	Index        *int   `json:"index,omitempty"`
	StartOffset  *int   `json:"start_offset,omitempty"`
	EndOffset    *int   `json:"end_offset,omitempty"`
	Kind         string `json:"kind,omitempty"`
	SectionID    string `json:"section_id,omitempty"`
	SectionTitle string `json:"section_title,omitempty"`
	HasImage     bool   `json:"has_image,omitempty"`
}

func (t *Tools) getInfo(ctx context.Context, p auth.Principal, a getInfoArgs) (any, error) {
	id, err := idArg("path_part_id", a.PathPartID)
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	c.statistics = true
	n, err := c.mustResolve(ctx, "path_part_id", id, typeDocument, typeFolder, typeChunk, typeSection)
	if err != nil {
		return nil, err
	}
	crumbs := n.crumbs()
	out := infoOut{
		PathPartID: n.id(), Type: n.typ, Name: n.name(), Path: n.fsPath(), Project: n.project,
		Breadcrumb: breadcrumb(crumbs), BreadcrumbParts: crumbs, ParentPathPartID: n.parent(),
	}
	switch n.typ {
	case typeDocument:
		d := n.doc
		out.Status, out.Error, out.Format, out.Title = d.Status, d.Error, d.Format, d.Title
		out.FileVersionID, out.Pages, out.UpdatedAt = d.FileVersionID, d.Pages, d.UpdatedAt
		out.Metadata, out.MetadataWarnings = nonNilMetadata(d.Metadata), d.MetadataWarnings
		out.ChunkCount, out.SectionCount, out.TokenCount = ptr(d.ChunkCount), ptr(d.SectionCount), ptr(d.TokenCount)
		if p.Admin() {
			out.Access, out.Groups, out.AccessError = docAccess(d.Readers, d.AccessError)
		}
	case typeSection:
		s := n.section
		out.DocumentID, out.HeadingPath, out.PageStart, out.PageEnd = s.FileID, nonNilStrings(s.HeadingPath), s.PageStart, s.PageEnd
		out.FileVersionID, out.Ordinal, out.Level = s.FileVersionID, ptr(s.Ordinal), ptr(s.Level)
		out.TokenCount, out.ChunkCount = ptr(s.TokenCount), ptr(s.ChunkCount)
	case typeChunk:
		ch := n.chunk
		out.DocumentID, out.HeadingPath, out.PageStart, out.PageEnd = ch.FileID, nonNilStrings(ch.HeadingPath), ch.PageStart, ch.PageEnd
		out.FileVersionID, out.Index, out.StartOffset, out.EndOffset = ch.FileVersionID, ptr(ch.Index), ptr(ch.StartOffset), ptr(ch.EndOffset)
		out.TokenCount, out.Kind, out.SectionID, out.HasImage = ptr(ch.TokenCount), chunkView(*ch).Kind, ch.SectionID, ch.ImageRef != ""
		if n.section != nil {
			out.SectionTitle = sectionName(n.section)
		}
	}
	return out, nil
}

// Who reads a document, as get_info shows it to an admin.
const (
	accessProject = "project" // no groups: every key of the project
	accessGroups  = "groups"  // keys sharing one of its groups
	accessAdmins  = "admins"  // its groups could not be read (fail closed)
)

// docAccess turns a document's readers list into get_info's access, groups
// and access error.
func docAccess(readers []string, accessError string) (string, []string, string) {
	switch {
	case slices.Contains(readers, access.Everyone):
		return accessProject, nil, ""
	case accessError != "" || len(readers) == 0 || slices.Contains(readers, access.Nobody):
		return accessAdmins, nil, accessError
	}
	return accessGroups, readers, ""
}
