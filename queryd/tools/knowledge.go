package tools

// Knowledge Stack's agent tools (docs.knowledgestack.ai/agent/tools; TOOLS.md
// section 3): list_contents, find, get_info, read, read_around and
// view_chunk_image, with the page's names, arguments, defaults and ranges
// (schemas/<tool>.input.json). They navigate main (branch "") of the projects
// the key may read, as of each project's watermark.
//
// Every node has a path_part_id (shared/ids), and every tool takes them:
//
//	FOLDER    a project root (ids.Project) or a folder (ids.Folder(project, "", path))
//	DOCUMENT  a file on main: its file_id (ids.File); current state, any status
//	SECTION   a section of the document's visible version (ids.Section)
//	CHUNK     a chunk of the document's visible version (ids.Chunk)
//
// Sections and chunks of a replaced or deleted version are never shown, and
// a node of a project the key may not read answers exactly like a missing one.

import (
	"fmt"
	"strings"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

const (
	// DefaultTokenBudget is how many tokens read returns inline (Knowledge
	// Stack's default); SetTokenBudget changes it.
	DefaultTokenBudget = 2000
	// MaxImageBytes bounds one view_chunk_image answer.
	MaxImageBytes = 8 << 20

	maxPageEnd       = 10000 // offset+limit stays within Weaviate's result window
	maxFindScan      = 9999  // documents of one project find looks through (+1 to see more: Weaviate answers at most 10,000)
	maxFolders       = 10000 // distinct folders of one project
	maxSections      = 2000  // sections of one version a table of contents is built from
	maxInlineChunks  = 200   // chunks one inline answer holds
	maxFindNameBytes = 512
)

// Node types, as find's kind argument names them.
const (
	typeFolder   = "FOLDER"
	typeDocument = "DOCUMENT"
	typeSection  = "SECTION"
	typeChunk    = "CHUNK"
)

// read's modes.
const (
	modeInline    = "inline"    // everything, in one answer
	modeTOC       = "toc"       // a document's table of contents, with per-section statistics
	modePaginated = "paginated" // chunks, limit at a time from offset
)

// SetTokenBudget sets how many tokens read and read_around return whole
// (DefaultTokenBudget when tokens <= 0). It returns t.
func (t *Tools) SetTokenBudget(tokens int) *Tools {
	if tokens <= 0 {
		tokens = DefaultTokenBudget
	}
	t.tokenBudget = tokens
	return t
}

// SetImageReader sets where view_chunk_image reads pictures; without one it
// answers that images are not available. It returns t.
func (t *Tools) SetImageReader(r ImageReader) *Tools {
	t.images = r
	return t
}

// Crumb is one step of a breadcrumb.
type Crumb struct {
	PathPartID string `json:"path_part_id"`
	Name       string `json:"name"`
	Type       string `json:"type"`
}

// PathPart is a folder or document as listings show it.
type PathPart struct {
	PathPartID       string  `json:"path_part_id"`
	Type             string  `json:"type"` // FOLDER or DOCUMENT
	Name             string  `json:"name"`
	Path             string  `json:"path"` // "/<project>/<path>"
	ParentPathPartID *string `json:"parent_path_part_id"`
	Project          string  `json:"project"`
	// Documents only.
	Status     string `json:"status,omitempty"` // indexed, failed or unsupported
	Error      string `json:"error,omitempty"`  // why a document failed or is unsupported
	Format     string `json:"format,omitempty"`
	Title      string `json:"title,omitempty"`
	ChunkCount *int   `json:"chunk_count,omitempty"`
	UpdatedAt  string `json:"updated_at,omitempty"`
}

// Page describes one page of a listing.
type Page struct {
	Total      int  `json:"total"`
	Offset     int  `json:"offset"`
	Limit      int  `json:"limit"`
	NextOffset *int `json:"next_offset"` // null on the last page
}

func pageOf(total, offset, limit, got int) Page {
	p := Page{Total: total, Offset: offset, Limit: limit}
	if got > 0 && offset+got < total {
		next := offset + got
		p.NextOffset = &next
	}
	return p
}

// ChunkView is a chunk as read and read_around show it.
type ChunkView struct {
	PathPartID  string   `json:"path_part_id"`
	Index       int      `json:"index"`
	Kind        string   `json:"kind"` // text, code, table or image
	Content     string   `json:"content"`
	SectionID   string   `json:"section_id,omitempty"`
	HeadingPath []string `json:"heading_path"`
	TokenCount  int      `json:"token_count"`
	StartOffset int      `json:"start_offset"`
	EndOffset   int      `json:"end_offset"`
	PageStart   int      `json:"page_start,omitempty"`
	PageEnd     int      `json:"page_end,omitempty"`
	HasImage    bool     `json:"has_image,omitempty"` // view_chunk_image shows the picture
	IsAnchor    bool     `json:"is_anchor,omitempty"` // read_around's anchor chunk
}

func chunkView(c store.ChunkDetail) ChunkView {
	kind := c.Kind
	if kind == "" {
		kind = "text"
	}
	return ChunkView{
		PathPartID: c.ID, Index: c.Index, Kind: kind, Content: c.Content, SectionID: c.SectionID,
		HeadingPath: nonNilStrings(c.HeadingPath), TokenCount: c.TokenCount, StartOffset: c.StartOffset,
		EndOffset: c.EndOffset, PageStart: c.PageStart, PageEnd: c.PageEnd, HasImage: c.ImageRef != "",
	}
}

func chunkViews(cs []store.ChunkDetail) []ChunkView {
	out := make([]ChunkView, 0, len(cs))
	for _, c := range cs {
		out = append(out, chunkView(c))
	}
	return out
}

// node is a resolved path_part_id.
type node struct {
	typ     string
	project string
	at      int64                 // the project's watermark
	folder  string                // FOLDER: its path ("" = the project root)
	path    string                // DOCUMENT, SECTION, CHUNK: the document's path
	fileID  string                // DOCUMENT, SECTION, CHUNK
	doc     *store.DocumentDetail // DOCUMENT
	section *store.Section        // SECTION; CHUNK: its section when it has one
	chunk   *store.ChunkDetail    // CHUNK
}

func (n *node) id() string {
	switch n.typ {
	case typeFolder:
		return folderID(n.project, n.folder)
	case typeDocument:
		return n.fileID
	case typeSection:
		return n.section.ID
	}
	return n.chunk.ID
}

func (n *node) name() string {
	switch n.typ {
	case typeFolder:
		if n.folder == "" {
			return n.project
		}
		return baseName(n.folder)
	case typeDocument:
		return baseName(n.path)
	case typeSection:
		return sectionName(n.section)
	}
	return chunkName(n.chunk)
}

// fsPath is the node's place in the file system: a folder's or document's
// absolute path; a section's or chunk's document's.
func (n *node) fsPath() string {
	if n.typ == typeFolder {
		return absPath(n.project, n.folder)
	}
	return absPath(n.project, n.path)
}

func (n *node) crumbs() []Crumb {
	if n.typ == typeFolder {
		return folderCrumbs(n.project, n.folder)
	}
	out := append(folderCrumbs(n.project, folderOf(n.path)), Crumb{PathPartID: n.fileID, Name: baseName(n.path), Type: typeDocument})
	if n.section != nil {
		out = append(out, Crumb{PathPartID: n.section.ID, Name: sectionName(n.section), Type: typeSection})
	}
	if n.typ == typeChunk {
		out = append(out, Crumb{PathPartID: n.chunk.ID, Name: chunkName(n.chunk), Type: typeChunk})
	}
	return out
}

func (n *node) parent() *string {
	var id string
	switch n.typ {
	case typeFolder:
		if n.folder == "" {
			return nil
		}
		id = folderID(n.project, folderOf(n.folder))
	case typeDocument:
		id = folderID(n.project, folderOf(n.path))
	case typeSection:
		id = n.fileID
	default:
		id = n.fileID
		if n.section != nil {
			id = n.section.ID
		}
	}
	return &id
}

func breadcrumb(cs []Crumb) string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return strings.Join(names, " > ")
}

func folderID(project, folder string) string {
	if folder == "" {
		return ids.Project(project)
	}
	return ids.Folder(project, "", folder)
}

func folderCrumbs(project, folder string) []Crumb {
	out := []Crumb{{PathPartID: ids.Project(project), Name: project, Type: typeFolder}}
	for _, f := range folderChain(folder) {
		out = append(out, Crumb{PathPartID: ids.Folder(project, "", f), Name: baseName(f), Type: typeFolder})
	}
	return out
}

func absPath(project, rel string) string {
	if rel == "" {
		return "/" + project
	}
	return "/" + project + "/" + rel
}

func sectionName(s *store.Section) string {
	switch {
	case s.Title != "":
		return s.Title
	case len(s.HeadingPath) > 0:
		return s.HeadingPath[len(s.HeadingPath)-1]
	}
	return fmt.Sprintf("section %d", s.Ordinal)
}

func chunkName(c *store.ChunkDetail) string { return fmt.Sprintf("chunk %d", c.Index) }

func folderPart(project, folder string) PathPart {
	n := node{typ: typeFolder, project: project, folder: folder}
	return PathPart{PathPartID: n.id(), Type: typeFolder, Name: n.name(), Path: n.fsPath(), ParentPathPartID: n.parent(), Project: project}
}

func documentPart(project string, d store.Document) PathPart {
	parent := folderID(project, folderOf(d.FilePath))
	p := PathPart{
		PathPartID: d.FileID, Type: typeDocument, Name: baseName(d.FilePath), Path: absPath(project, d.FilePath),
		ParentPathPartID: &parent, Project: project, Status: d.Status, Error: d.Error, Format: d.Format, Title: d.Title,
		UpdatedAt: d.UpdatedAt,
	}
	if d.Status == pipeline.StatusIndexed {
		n := d.ChunkCount
		p.ChunkCount = &n
	}
	return p
}

// idArg checks a required path_part_id-like argument.
func idArg(name, v string) (string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return "", userErrorf("%s is required", name)
	}
	if !ids.Valid(v) {
		return "", userErrorf("%s must be a UUID, got %q", name, clip(v))
	}
	return v, nil
}

// pageArgs are the knowledge tools' paging arguments (the answer's Page
// says where the page is).
type pageArgs struct {
	Limit  *float64 `json:"limit"`
	Offset *float64 `json:"offset"`
}

// bounds checks limit (1-100, default 20) and offset (>= 0, default 0).
func (a pageArgs) bounds() (int, int, error) {
	l, err := intArg("limit", a.Limit, 20, 1, 100)
	if err != nil {
		return 0, 0, err
	}
	o, err := intArg("offset", a.Offset, 0, 0, maxPageEnd)
	if err != nil {
		return 0, 0, err
	}
	if o+l > maxPageEnd {
		return 0, 0, userErrorf("offset + limit must be at most %d, got %d", maxPageEnd, o+l)
	}
	return l, o, nil
}
