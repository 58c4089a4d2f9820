package tools

// Resolving a path_part_id of the Knowledge Stack tools to a node: a folder,
// document, section or chunk of a project the key may read, as of the
// project's watermark.

import (
	"context"
	"slices"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
)

// kbCall is one call's view of the knowledge base: the projects the key may
// read, with their watermarks and folders looked up once.
type kbCall struct {
	t *Tools
	// statistics: document nodes need their statistics (get_info), so
	// they are read from Weaviate rather than the catalog.
	statistics bool
	projects   []string
	marks      map[string]int64
	folders    map[string]map[string]string // project -> folder path_part_id -> folder path
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
	at, err := c.t.base.Watermark(ctx, project)
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
		list, ok = c.t.docs.CatalogFolders(ctx, project, maxFolders)
	}
	if !ok {
		var err error
		if list, err = c.t.knowledge.Folders(ctx, project, maxFolders); err != nil {
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
				d, err := c.document(ctx, project, id, at)
				if err != nil {
					return nil, err
				}
				if d == nil || d.Deleted || d.Status == "deleted" || d.Branch != "" {
					continue
				}
				n.doc, n.fileID, n.path = d, d.FileID, d.FilePath
			case typeSection:
				s, err := c.t.knowledge.GetSection(ctx, project, id, at)
				if err != nil {
					return nil, err
				}
				if s == nil || s.Branch != "" {
					continue
				}
				n.section, n.fileID, n.path = s, s.FileID, s.FilePath
			case typeChunk:
				ch, err := c.t.knowledge.GetChunkDetail(ctx, project, id, at)
				if err != nil {
					return nil, err
				}
				if ch == nil || ch.Branch != "" {
					continue
				}
				n.chunk, n.fileID, n.path = ch, ch.FileID, ch.FilePath
				// A chunk node needs its section's name and statistics only:
				// the chunk carries them (one round trip fewer), older chunks do not.
				if n.section = ch.Section; n.section == nil && ch.SectionID != "" {
					if n.section, err = c.t.knowledge.GetSection(ctx, project, ch.SectionID, at); err != nil {
						return nil, err
					}
				}
			}
			return n, nil
		}
	}
	return nil, nil
}

// document reads a document node: from the catalog as of at when the
// caller needs no statistics (one Weaviate round trip fewer), else its
// Document object.
func (c *kbCall) document(ctx context.Context, project, fileID string, at int64) (*store.DocumentDetail, error) {
	if c.t.docs != nil && !c.statistics {
		doc, found, ok := c.t.docs.DocumentAt(ctx, project, fileID, at)
		switch {
		case ok && found:
			return &store.DocumentDetail{Document: doc}, nil
		case ok:
			return nil, nil
		}
	}
	return c.t.knowledge.DocumentByID(ctx, project, fileID)
}

// currentInCatalog reports whether the catalog says fileVersionID is the
// current main-branch version of its document as of at, as GetChunkDetail
// and GetSection check, and the document is not deleted (by flag or by
// status, as resolve's document case reads it); false too when the catalog
// cannot say.
func (t *Tools) currentInCatalog(ctx context.Context, project, fileID, fileVersionID string, at int64) bool {
	if t.docs == nil {
		return false
	}
	doc, found, covered := t.docs.DocumentAt(ctx, project, fileID, at)
	return covered && found && !doc.Deleted && doc.Status != "deleted" && doc.Branch == "" && doc.FileVersionID == fileVersionID
}

// resolveChunk resolves a chunk_id argument; another node type is refused
// with advice on what the tool takes instead.
func (t *Tools) resolveChunk(ctx context.Context, p auth.Principal, id, advice string) (*node, error) {
	c, err := t.kb(ctx, p)
	if err != nil {
		return nil, err
	}
	return c.resolveChunk(ctx, id, advice)
}

// resolveChunk is Tools.resolveChunk for this call's projects.
func (c *kbCall) resolveChunk(ctx context.Context, id, advice string) (*node, error) {
	n, err := c.mustResolve(ctx, "chunk_id", id, typeChunk, typeSection, typeDocument, typeFolder)
	if err != nil {
		return nil, err
	}
	if n.typ != typeChunk {
		return nil, wrongType("chunk_id", n, advice)
	}
	return n, nil
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
