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
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
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

// Descriptions: the page's words, then what Strata adds.
const (
	listContentsDescription = "List the contents of a folder. Pass null to list root-level folders. " +
		"The root folders are the projects your key can read; a folder lists its subfolders, then its documents " +
		"(with their status: a failed document says why). Paginated with limit/offset. On a document, section or chunk, use read instead."
	findDescription = "Search across your entire knowledge base by name. Use this when you know the name (or part of the name) " +
		"of what you are looking for. Matches a case-insensitive substring of folder and document names; kind FOLDER or DOCUMENT narrows it."
	getInfoDescription = "Get metadata and a breadcrumb trail for any node in the knowledge base. This is the \"where am I?\" tool: " +
		"node type, name, full path, breadcrumb (e.g. acme > docs > guide.md > Install), parent path_part_id and statistics."
	readDescription = "Read any node in the knowledge base. The tool automatically adapts its response based on the content size: " +
		"a document or section within the token budget comes back inline (all chunks); a larger document as a table of contents " +
		"with per-section statistics (read a section by its path_part_id); a larger section as chunks paginated with limit/offset; " +
		"a chunk as itself. The answer's mode says which: inline, toc or paginated."
	readAroundDescription = "Expand the reading window around a search result. After finding a relevant chunk via search, use this " +
		"to see the surrounding context. Returns the anchor chunk, window chunks before and after it, the anchor's position in the " +
		"list, and whether the full section was returned (the whole section comes back when it fits the token budget)."
	viewChunkImageDescription = "Fetch the original image for a chunk that has a visual asset (image or table screenshot). " +
		"Returns the image with a text description (the chunk's text, page and document)."
)

// ImageReader reads the picture of an image chunk: ref is its image_ref
// "<bucket>/<key>". A picture over maxBytes is refused with
// store.ErrImageTooLarge rather than read.
// store.Images reads them from MinIO.
type ImageReader interface {
	ReadImage(ctx context.Context, ref string, maxBytes int64) ([]byte, error)
}

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
	if folder == "" {
		return out
	}
	parts := strings.Split(folder, "/")
	for i, part := range parts {
		out = append(out, Crumb{PathPartID: ids.Folder(project, "", strings.Join(parts[:i+1], "/")), Name: part, Type: typeFolder})
	}
	return out
}

func folderOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

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

// kbCall is one call's view of the knowledge base: the projects the key may
// read, with their watermarks and folders looked up once.
type kbCall struct {
	t        *Tools
	projects []string
	marks    map[string]int64
	folders  map[string]map[string]string // project -> folder path_part_id -> folder path
}

func (t *Tools) kb(ctx context.Context, p auth.Principal) (*kbCall, error) {
	projects, err := t.projectsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	slices.Sort(projects)
	return &kbCall{t: t, projects: projects, marks: map[string]int64{}, folders: map[string]map[string]string{}}, nil
}

func (c *kbCall) watermark(ctx context.Context, project string) (int64, error) {
	if at, ok := c.marks[project]; ok {
		return at, nil
	}
	at, err := c.t.read.Watermark(ctx, project)
	if err != nil {
		return 0, err
	}
	c.marks[project] = at
	return at, nil
}

// folderIDs maps the path_part_id of every folder of a project's main
// branch (those holding documents and their ancestors) to its path.
func (c *kbCall) folderIDs(ctx context.Context, project string) (map[string]string, error) {
	if m, ok := c.folders[project]; ok {
		return m, nil
	}
	list, ok := []string(nil), false
	if c.t.docs != nil {
		list, ok = c.t.docs.CatalogFolders(project, maxFolders)
	}
	if !ok {
		var err error
		if list, err = c.t.read.Folders(ctx, project, maxFolders); err != nil {
			return nil, err
		}
	}
	m := map[string]string{}
	for _, f := range list {
		for f != "" {
			id := ids.Folder(project, "", f)
			if _, seen := m[id]; seen {
				break
			}
			m[id] = f
			f = folderOf(f)
		}
	}
	c.folders[project] = m
	return m, nil
}

// childFolders lists the folders directly in folder, sorted.
func (c *kbCall) childFolders(ctx context.Context, project, folder string) ([]string, error) {
	m, err := c.folderIDs(ctx, project)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range m {
		if folderOf(f) == folder {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out, nil
}

// resolve finds id among the nodes the key may read, trying the node types
// in the order given (cheapest for the caller's likely answer first). It
// returns nil when there is no such node.
func (c *kbCall) resolve(ctx context.Context, id string, order ...string) (*node, error) {
	for _, project := range c.projects {
		if id == ids.Project(project) || id == ids.Folder(project, "", "") {
			return &node{typ: typeFolder, project: project}, nil
		}
	}
	for _, typ := range order {
		for _, project := range c.projects {
			at, err := c.watermark(ctx, project)
			if err != nil {
				return nil, err
			}
			n := &node{typ: typ, project: project, at: at}
			switch typ {
			case typeFolder:
				m, err := c.folderIDs(ctx, project)
				if err != nil {
					return nil, err
				}
				f, ok := m[id]
				if !ok {
					continue
				}
				n.folder = f
			case typeDocument:
				d, err := c.t.read.DocumentByID(ctx, project, id)
				if err != nil {
					return nil, err
				}
				if d == nil || d.Deleted || d.Status == "deleted" || d.Branch != "" {
					continue
				}
				n.doc, n.fileID, n.path = d, d.FileID, d.FilePath
			case typeSection:
				s, err := c.t.read.GetSection(ctx, project, id, at)
				if err != nil {
					return nil, err
				}
				if s == nil || s.Branch != "" {
					continue
				}
				n.section, n.fileID, n.path = s, s.FileID, s.FilePath
			case typeChunk:
				ch, err := c.t.read.GetChunkDetail(ctx, project, id, at)
				if err != nil {
					return nil, err
				}
				if ch == nil || ch.Branch != "" {
					continue
				}
				n.chunk, n.fileID, n.path = ch, ch.FileID, ch.FilePath
				if ch.SectionID != "" {
					if n.section, err = c.t.read.GetSection(ctx, project, ch.SectionID, at); err != nil {
						return nil, err
					}
				}
			}
			return n, nil
		}
	}
	return nil, nil
}

// mustResolve is resolve with "not found" for a missing id.
func (c *kbCall) mustResolve(ctx context.Context, arg, id string, order ...string) (*node, error) {
	n, err := c.resolve(ctx, id, order...)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, notFound(arg, id)
	}
	return n, nil
}

// notFound is the one answer for an id that does not exist and for one the key may not read.
func notFound(arg, id string) error { return userErrorf("%s not found: %s", arg, id) }

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

// pageArgs checks limit (1-100, default 20) and offset (>= 0, default 0).
func pageArgs(limit, offset *float64) (int, int, error) {
	l, err := intArg("limit", limit, 20, 1, 100)
	if err != nil {
		return 0, 0, err
	}
	o, err := intArg("offset", offset, 0, 0, maxPageEnd)
	if err != nil {
		return 0, 0, err
	}
	if o+l > maxPageEnd {
		return 0, 0, userErrorf("offset + limit must be at most %d, got %d", maxPageEnd, o+l)
	}
	return l, o, nil
}

func wrongType(arg string, n *node, advice string) error {
	return userErrorf("%s %s is a %s (%s), not %s", arg, n.id(), strings.ToLower(n.typ), clip(n.fsPath()+crumbTail(n)), advice)
}

// crumbTail names a section or chunk after its document's path.
func crumbTail(n *node) string {
	if n.typ == typeSection || n.typ == typeChunk {
		return " > " + n.name()
	}
	return ""
}

// ---- list_contents ----

type listContentsArgs struct {
	PathPartID *string  `json:"path_part_id"`
	Limit      *float64 `json:"limit"`
	Offset     *float64 `json:"offset"`
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
	limit, offset, err := pageArgs(a.Limit, a.Offset)
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
	docs, docTotal, err := t.read.FolderDocuments(ctx, n.project, n.folder, max(0, offset-len(folders)), limit-len(out.Items))
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

// ---- find ----

type findArgs struct {
	Name   string   `json:"name"`
	Kind   *string  `json:"kind"`
	Limit  *float64 `json:"limit"`
	Offset *float64 `json:"offset"`
}

type findOut struct {
	Name    string     `json:"name"`
	Kind    *string    `json:"kind"`
	Results []PathPart `json:"results"` // by path; a folder before what it holds
	Page
	// Truncated: a project has more documents than find looks through
	// (9,999); narrow the name or browse with list_contents.
	Truncated bool `json:"truncated"`
}

func (t *Tools) find(ctx context.Context, p auth.Principal, a findArgs) (any, error) {
	name := strings.TrimSpace(a.Name)
	if name == "" || len(name) > maxFindNameBytes || !utf8.ValidString(name) {
		return nil, userErrorf("name must be 1 to %d bytes of UTF-8 text", maxFindNameBytes)
	}
	var kind *string
	if a.Kind != nil && *a.Kind != "" {
		k := strings.ToUpper(strings.TrimSpace(*a.Kind))
		if k != typeFolder && k != typeDocument {
			return nil, userErrorf("kind must be \"FOLDER\", \"DOCUMENT\" or null, got %q", clip(*a.Kind))
		}
		kind = &k
	}
	limit, offset, err := pageArgs(a.Limit, a.Offset)
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	needle := strings.ToLower(name)
	match := func(s string) bool { return strings.Contains(strings.ToLower(s), needle) }
	out := findOut{Name: name, Kind: kind, Results: []PathPart{}}
	var all []PathPart
	for _, project := range c.projects {
		if kind == nil || *kind == typeFolder {
			if match(project) {
				all = append(all, folderPart(project, ""))
			}
			folders, err := c.folderIDs(ctx, project)
			if err != nil {
				return nil, err
			}
			for _, f := range folders {
				if match(baseName(f)) {
					all = append(all, folderPart(project, f))
				}
			}
		}
		if kind == nil || *kind == typeDocument {
			docs, ok := []store.Document(nil), false
			if t.docs != nil {
				docs, ok = t.docs.DocumentsNamed(project, name, maxFindScan+1)
			}
			if !ok {
				if docs, err = t.read.AllDocuments(ctx, project, store.DocumentScope("", ""), maxFindScan+1); err != nil {
					return nil, err
				}
			}
			if len(docs) > maxFindScan {
				out.Truncated = true
				docs = docs[:maxFindScan]
			}
			for _, d := range docs {
				if d.Branch != "" || d.Deleted || d.Status == "deleted" || !match(baseName(d.FilePath)) {
					continue
				}
				all = append(all, documentPart(project, d))
			}
		}
	}
	slices.SortFunc(all, func(x, y PathPart) int {
		if c := strings.Compare(x.Path, y.Path); c != 0 {
			return c
		}
		return strings.Compare(y.Type, x.Type) // FOLDER before DOCUMENT
	})
	out.Results = append(out.Results, all[min(offset, len(all)):min(offset+limit, len(all))]...)
	out.Page = pageOf(len(all), offset, limit, len(out.Results))
	return out, nil
}

// ---- get_info ----

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
	UpdatedAt     string `json:"updated_at,omitempty"`
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
		out.ChunkCount, out.SectionCount, out.TokenCount = ptr(d.ChunkCount), ptr(d.SectionCount), ptr(d.TokenCount)
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

// ---- read ----

type readArgs struct {
	PathPartID string   `json:"path_part_id"`
	Limit      *float64 `json:"limit"`
	Offset     *float64 `json:"offset"`
}

// TOCEntry is one section in a table of contents.
type TOCEntry struct {
	PathPartID  string   `json:"path_part_id"`
	Ordinal     int      `json:"ordinal"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	Level       int      `json:"level"`
	TokenCount  int      `json:"token_count"`
	ChunkCount  int      `json:"chunk_count"`
	PageStart   int      `json:"page_start,omitempty"`
	PageEnd     int      `json:"page_end,omitempty"`
	// FitsBudget: read(path_part_id) returns this section inline.
	FitsBudget bool `json:"fits_budget"`
}

// readOut is read's answer. Mode says its shape: inline and paginated carry
// chunks, toc carries sections; the page fields describe whichever it holds.
type readOut struct {
	Mode   string `json:"mode"` // inline, toc or paginated
	Reason string `json:"reason"`
	// within_budget, over_budget, missing_statistics, too_many_chunks or chunk
	Hint        string      `json:"hint"`
	PathPartID  string      `json:"path_part_id"`
	Type        string      `json:"type"`
	Name        string      `json:"name"`
	Path        string      `json:"path"`
	Breadcrumb  string      `json:"breadcrumb"`
	TokenCount  *int        `json:"token_count"` // the node's tokens; null when the statistics are missing
	TokenBudget int         `json:"token_budget"`
	Chunks      []ChunkView `json:"chunks,omitempty"`
	Sections    []TOCEntry  `json:"sections,omitempty"`
	Page
	// Truncated: the table of contents stops at 2,000 sections.
	Truncated bool `json:"truncated,omitempty"`
}

func (t *Tools) readNode(ctx context.Context, p auth.Principal, a readArgs) (any, error) {
	id, err := idArg("path_part_id", a.PathPartID)
	if err != nil {
		return nil, err
	}
	limit, offset, err := pageArgs(a.Limit, a.Offset)
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	n, err := c.mustResolve(ctx, "path_part_id", id, typeDocument, typeSection, typeChunk, typeFolder)
	if err != nil {
		return nil, err
	}
	out := &readOut{
		PathPartID: n.id(), Type: n.typ, Name: n.name(), Path: n.fsPath(), Breadcrumb: breadcrumb(n.crumbs()),
		TokenBudget: t.tokenBudget,
	}
	switch n.typ {
	case typeFolder:
		return nil, wrongType("path_part_id", n, "something to read: use list_contents with this path_part_id to browse it")
	case typeChunk:
		out.Mode, out.Reason, out.TokenCount = modeInline, "chunk", ptr(n.chunk.TokenCount)
		out.Chunks = []ChunkView{chunkView(*n.chunk)}
		out.Hint = "One chunk. read_around with its path_part_id as chunk_id shows its neighbours."
		out.Page = pageOf(1, 0, 1, 1)
		return out, nil
	case typeSection:
		return out, t.readSection(ctx, n, out, limit, offset)
	}
	return out, t.readDocument(ctx, n, out, limit, offset)
}

func (t *Tools) readDocument(ctx context.Context, n *node, out *readOut, limit, offset int) error {
	ver, err := t.read.VersionAt(ctx, n.project, "", n.path, n.at)
	if err != nil {
		return err
	}
	if ver == nil || ver.Deleted {
		return notFound("path_part_id", n.fileID)
	}
	if ver.Status != pipeline.StatusIndexed {
		msg := ver.Error
		if msg == "" {
			msg = "no reason recorded"
		}
		return userErrorf("document %s was not indexed (%s): %s; it has no content to read", n.fsPath(), ver.Status, msg)
	}
	secs, err := t.read.Sections(ctx, n.project, ver.FileVersionID, n.at, 0, maxSections+1)
	if err != nil {
		return err
	}
	complete := len(secs) <= maxSections
	secs = secs[:min(len(secs), maxSections)]
	tokens, missing := 0, len(secs) == 0
	for _, s := range secs {
		if s.TokenCount <= 0 {
			missing = true
		}
		tokens += s.TokenCount
	}
	q := store.ChunkQuery{FileVersionID: ver.FileVersionID, To: -1, At: n.at}
	budget := out.TokenBudget
	switch {
	case missing:
		out.Reason = "missing_statistics"
		out.Hint = "Section statistics are missing for this document, so its chunks are paginated: page with offset."
		return t.paginate(ctx, n, out, q, limit, offset)
	case complete && tokens <= budget:
		out.TokenCount = ptr(tokens)
		return t.inline(ctx, n, out, q, limit, offset)
	}
	if complete {
		out.TokenCount = ptr(tokens)
	}
	out.Mode, out.Reason = modeTOC, "over_budget"
	out.Hint = fmt.Sprintf("The document is over the %d-token budget, so this is its table of contents: read a section by its path_part_id (fits_budget sections come back whole).", budget)
	out.Truncated = !complete
	for _, s := range secs[min(offset, len(secs)):min(offset+limit, len(secs))] {
		out.Sections = append(out.Sections, TOCEntry{
			PathPartID: s.ID, Ordinal: s.Ordinal, Title: sectionName(&s), HeadingPath: nonNilStrings(s.HeadingPath),
			Level: s.Level, TokenCount: s.TokenCount, ChunkCount: s.ChunkCount, PageStart: s.PageStart, PageEnd: s.PageEnd,
			FitsBudget: s.TokenCount > 0 && s.TokenCount <= budget,
		})
	}
	out.Page = pageOf(len(secs), offset, limit, len(out.Sections))
	return nil
}

func (t *Tools) readSection(ctx context.Context, n *node, out *readOut, limit, offset int) error {
	s := n.section
	q := store.ChunkQuery{FileVersionID: s.FileVersionID, SectionID: s.ID, To: -1, At: n.at}
	switch {
	case s.TokenCount <= 0:
		out.Reason = "missing_statistics"
		out.Hint = "Statistics are missing for this section, so its chunks are paginated: page with offset."
		return t.paginate(ctx, n, out, q, limit, offset)
	case s.TokenCount <= out.TokenBudget:
		out.TokenCount = ptr(s.TokenCount)
		return t.inline(ctx, n, out, q, limit, offset)
	}
	out.TokenCount = ptr(s.TokenCount)
	out.Reason = "over_budget"
	out.Hint = fmt.Sprintf("The section is over the %d-token budget, so its chunks are paginated: page with offset.", out.TokenBudget)
	return t.paginate(ctx, n, out, q, limit, offset)
}

// inline returns every chunk q selects; past maxInlineChunks it pages instead.
func (t *Tools) inline(ctx context.Context, n *node, out *readOut, q store.ChunkQuery, limit, offset int) error {
	q.Limit = maxInlineChunks + 1
	rows, err := t.read.ChunkDetails(ctx, n.project, q)
	if err != nil {
		return err
	}
	if len(rows) > maxInlineChunks {
		out.Reason = "too_many_chunks"
		out.Hint = "Within the token budget but in too many chunks for one answer, so its chunks are paginated: page with offset."
		return t.paginate(ctx, n, out, q, limit, offset)
	}
	out.Mode, out.Reason = modeInline, "within_budget"
	out.Hint = fmt.Sprintf("Within the %d-token budget: all of it, inline.", out.TokenBudget)
	out.Chunks = chunkViews(rows)
	out.Page = pageOf(len(rows), 0, len(rows), len(rows))
	return nil
}

func (t *Tools) paginate(ctx context.Context, n *node, out *readOut, q store.ChunkQuery, limit, offset int) error {
	total, err := t.read.CountChunks(ctx, n.project, q)
	if err != nil {
		return err
	}
	q.Offset, q.Limit = offset, limit
	rows, err := t.read.ChunkDetails(ctx, n.project, q)
	if err != nil {
		return err
	}
	out.Mode = modePaginated
	out.Chunks = chunkViews(rows)
	out.Page = pageOf(total, offset, limit, len(rows))
	return nil
}

// ---- read_around ----

type readAroundArgs struct {
	ChunkID string   `json:"chunk_id"`
	Window  *float64 `json:"window"`
}

// SectionRef names a section and its statistics.
type SectionRef struct {
	PathPartID  string   `json:"path_part_id"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	TokenCount  int      `json:"token_count"`
	ChunkCount  int      `json:"chunk_count"`
}

type readAroundOut struct {
	AnchorChunkID  string `json:"anchor_chunk_id"`
	AnchorIndex    int    `json:"anchor_index"`    // the anchor's index in its document
	AnchorPosition int    `json:"anchor_position"` // the anchor's position in chunks (0-based)
	Window         int    `json:"window"`
	// WholeSection: chunks hold every chunk of the anchor's section.
	WholeSection bool        `json:"whole_section"`
	DocumentID   string      `json:"document_id"`
	DocumentPath string      `json:"document_path"`
	Breadcrumb   string      `json:"breadcrumb"`
	Section      *SectionRef `json:"section"`
	TokenBudget  int         `json:"token_budget"`
	Chunks       []ChunkView `json:"chunks"` // by index
}

func (t *Tools) readAround(ctx context.Context, p auth.Principal, a readAroundArgs) (any, error) {
	id, err := idArg("chunk_id", a.ChunkID)
	if err != nil {
		return nil, err
	}
	window, err := intArg("window", a.Window, 1, 1, 10)
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	n, err := c.mustResolve(ctx, "chunk_id", id, typeChunk, typeSection, typeDocument, typeFolder)
	if err != nil {
		return nil, err
	}
	if n.typ != typeChunk {
		return nil, wrongType("chunk_id", n, "a chunk: use read with it as path_part_id")
	}
	anchor, sec, budget := n.chunk, n.section, t.tokenBudget
	lo, hi := max(0, anchor.Index-window), anchor.Index+window
	q := store.ChunkQuery{FileVersionID: anchor.FileVersionID, From: lo, To: hi, Limit: hi - lo + 1, At: n.at}
	// The whole section too when it fits the budget, in the same query: a
	// section's chunks are consecutive and hold the anchor, so window and
	// section together are one run of chunks.
	if sec != nil && sec.TokenCount > 0 && sec.TokenCount <= budget && sec.ChunkCount <= maxInlineChunks {
		size := sec.ChunkCount
		if size <= 0 { // statistics missing: room for the most a section may inline
			size = maxInlineChunks
		}
		q.AlsoSectionID, q.Limit = sec.ID, q.Limit+size
	}
	rows, err := t.read.ChunkDetails(ctx, n.project, q)
	if err != nil {
		return nil, err
	}
	out := readAroundOut{
		AnchorChunkID: anchor.ID, AnchorIndex: anchor.Index, AnchorPosition: -1, Window: window,
		DocumentID: anchor.FileID, DocumentPath: absPath(n.project, anchor.FilePath), Breadcrumb: breadcrumb(n.crumbs()),
		TokenBudget: budget, Chunks: make([]ChunkView, 0, len(rows)),
	}
	inSection := 0
	for i, r := range rows {
		v := chunkView(r)
		if r.ID == anchor.ID {
			v.IsAnchor, out.AnchorPosition = true, i
		}
		if anchor.SectionID != "" && r.SectionID == anchor.SectionID {
			inSection++
		}
		out.Chunks = append(out.Chunks, v)
	}
	if out.AnchorPosition < 0 { // not expected: the anchor is in its own version's range
		return nil, fmt.Errorf("read_around: anchor %s missing from its range %d-%d", anchor.ID, lo, hi)
	}
	if sec != nil {
		out.Section = &SectionRef{PathPartID: sec.ID, Title: sectionName(sec), HeadingPath: nonNilStrings(sec.HeadingPath),
			TokenCount: sec.TokenCount, ChunkCount: sec.ChunkCount}
		size := sec.ChunkCount
		if size <= 0 { // statistics missing: count
			if size, err = t.read.CountChunks(ctx, n.project, store.ChunkQuery{FileVersionID: anchor.FileVersionID, SectionID: sec.ID, To: -1, At: n.at}); err != nil {
				return nil, err
			}
		}
		out.WholeSection = size > 0 && inSection >= size
	}
	return out, nil
}

// ---- view_chunk_image ----

type viewChunkImageArgs struct {
	ChunkID string `json:"chunk_id"`
}

// chunkImageOut is view_chunk_image's structured answer; the picture itself
// is the image content beside it.
type chunkImageOut struct {
	ChunkID      string   `json:"chunk_id"`
	MIMEType     string   `json:"mime_type"`
	Bytes        int      `json:"bytes"`
	Kind         string   `json:"kind"`
	Description  string   `json:"description"` // the chunk's text (caption, alt text or extracted text)
	DocumentID   string   `json:"document_id"`
	DocumentPath string   `json:"document_path"`
	SectionID    string   `json:"section_id,omitempty"`
	HeadingPath  []string `json:"heading_path"`
	PageStart    int      `json:"page_start,omitempty"`
	PageEnd      int      `json:"page_end,omitempty"`
}

type chunkImage struct {
	meta chunkImageOut
	data []byte
	text string
}

// viewChunkImageHandler is handler's conventions (principal, arguments, user
// errors) with the picture added to a successful answer as image content.
func (t *Tools) viewChunkImageHandler() server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var img *chunkImage
		h := handler(t, "view_chunk_image", func(ctx context.Context, p auth.Principal, a viewChunkImageArgs) (any, error) {
			out, err := t.viewChunkImage(ctx, p, a)
			if err != nil {
				return nil, err
			}
			img = out
			return out.meta, nil
		})
		res, err := h(ctx, req)
		if err != nil || res == nil || res.IsError || img == nil {
			return res, err
		}
		res.Content = []mcp.Content{
			mcp.NewTextContent(img.text),
			mcp.NewImageContent(base64.StdEncoding.EncodeToString(img.data), img.meta.MIMEType),
		}
		return res, nil
	}
}

func (t *Tools) viewChunkImage(ctx context.Context, p auth.Principal, a viewChunkImageArgs) (*chunkImage, error) {
	id, err := idArg("chunk_id", a.ChunkID)
	if err != nil {
		return nil, err
	}
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	n, err := c.mustResolve(ctx, "chunk_id", id, typeChunk, typeSection, typeDocument, typeFolder)
	if err != nil {
		return nil, err
	}
	if n.typ != typeChunk {
		return nil, wrongType("chunk_id", n, "a chunk: view_chunk_image takes the id of a chunk with has_image true")
	}
	ch := n.chunk
	if ch.ImageRef == "" {
		return nil, userErrorf("chunk %s is a %s chunk without an image: use read to read its text", ch.ID, chunkView(*ch).Kind)
	}
	images := t.images
	if images == nil {
		return nil, userErrorf("images are not available on this server; read the chunk's text with read")
	}
	_, key, err := store.ParseImageRef(ch.ImageRef)
	if err != nil || !strings.HasPrefix(key, n.project+"/") {
		return nil, fmt.Errorf("chunk %s of %s has image_ref %q outside its project", ch.ID, n.project, ch.ImageRef)
	}
	data, err := images.ReadImage(ctx, ch.ImageRef, MaxImageBytes)
	if errors.Is(err, store.ErrImageTooLarge) || len(data) > MaxImageBytes {
		return nil, userErrorf("the image of chunk %s is larger than %d MiB; read its text with read", ch.ID, MaxImageBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", ch.ImageRef, err)
	}
	mime := strings.ToLower(strings.TrimSpace(ch.ImageMIME))
	if !strings.HasPrefix(mime, "image/") {
		mime = http.DetectContentType(data)
	}
	if !strings.HasPrefix(mime, "image/") {
		return nil, userErrorf("the stored asset of chunk %s is not an image (%s)", ch.ID, mime)
	}
	out := &chunkImage{data: data, meta: chunkImageOut{
		ChunkID: ch.ID, MIMEType: mime, Bytes: len(data), Kind: chunkView(*ch).Kind, Description: ch.Content,
		DocumentID: ch.FileID, DocumentPath: absPath(n.project, ch.FilePath), SectionID: ch.SectionID,
		HeadingPath: nonNilStrings(ch.HeadingPath), PageStart: ch.PageStart, PageEnd: ch.PageEnd,
	}}
	var b strings.Builder
	fmt.Fprintf(&b, "Image of chunk %d (%s)", ch.Index, out.meta.Kind)
	switch {
	case ch.PageStart > 0 && ch.PageEnd > ch.PageStart:
		fmt.Fprintf(&b, " on pages %d-%d", ch.PageStart, ch.PageEnd)
	case ch.PageStart > 0:
		fmt.Fprintf(&b, " on page %d", ch.PageStart)
	}
	fmt.Fprintf(&b, " of %s", out.meta.DocumentPath)
	if len(ch.HeadingPath) > 0 {
		fmt.Fprintf(&b, " (section %s)", strings.Join(ch.HeadingPath, " > "))
	}
	fmt.Fprintf(&b, "; %s, %d bytes.", mime, len(data))
	if ch.Content != "" {
		b.WriteString("\n\n" + ch.Content)
	}
	out.text = b.String()
	return out, nil
}
