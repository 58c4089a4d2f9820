package tools

// mcp-local-rag's list_files: every file under the scope, with its state (localrag.go says how Strata maps the original).

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/pipeline"
)

// listFilesDescription is the original's, word for word (tool-definitions.ts), so agents
// that know mcp-local-rag recognise the tool; the comments in this file say
// how Strata fills each field.
const listFilesDescription = "List supported files (PDF, DOCX, TXT, MD) under the configured base directories and whether each is ingested. Returns { baseDirs, files, sources }; sources lists ingested items reported apart from the file scan, chiefly ingest_data content (web pages, clipboard, etc.)."

//go:embed schemas/list_files.input.json
var listFilesInput string

var listFilesTool = define(ToolsetLocalRAG, "list_files", listFilesDescription, listFilesInput, (*Tools).listFiles)

// MaxListFiles bounds one list_files answer; past it the answer says truncated.
const MaxListFiles = 200

// listFilesArgs is the original's ListFilesInput. scope is one absolute path
// prefix or a list of them (unioned) over Strata's paths, e.g. "/acme" (acme's
// main branch), "/acme/docs" (docs/ and below on main) or
// "/acme@preview-42/docs"; "/" is everything the key may read. As in the
// original, "/acme/docs" does not match "/acme/docsv2", trailing slashes are
// ignored, and a relative prefix matches nothing (with a warning).
type listFilesArgs struct {
	Scope json.RawMessage `json:"scope"`
}

// listFilesOut is the original's ListFilesResult plus Strata's extras.
type listFilesOut struct {
	// BaseDir is baseDirs[0] (the original's legacy single-root field); "" when
	// the key reads no project.
	BaseDir string `json:"baseDir"`
	// BaseDirs: "/<project>" for every project the key may read, and
	// "/<project>@<branch>" for each branch that has files in this answer.
	BaseDirs []string    `json:"baseDirs"`
	Files    []fileEntry `json:"files"`
	// Sources is always empty: the original lists ingest_data content and
	// index entries whose file vanished from disk there. Strata has no
	// ingest_data, and the index is fed by the bucket itself, so a file that
	// is gone from the bucket is gone from the index.
	Sources []sourceEntry `json:"sources"`

	// Strata: true when more files matched than this answer holds (at most
	// MaxListFiles); narrow it with scope.
	Truncated bool `json:"truncated"`
	// Strata: what the original sends as extra "Warning: ..." text blocks.
	Warnings []string `json:"warnings,omitempty"`
}

// fileEntry is the original's FileEntry: {filePath, baseDir, ingested: true,
// chunkCount, timestamp} or {filePath, baseDir, ingested: false}, plus
// Strata's extras, which every entry has.
type fileEntry struct {
	FilePath string `json:"filePath"` // "/<project>[@<branch>]/<path>"
	BaseDir  string `json:"baseDir"`
	// Ingested is true when the file's latest version is indexed (status
	// "indexed"). Failed and unsupported files are listed with false, like a
	// file on disk that the original has not ingested; status and error say why.
	Ingested   bool   `json:"ingested"`
	ChunkCount *int   `json:"chunkCount,omitempty"` // ingested files only
	Timestamp  string `json:"timestamp,omitempty"`  // ingested files only: when this version was ingested

	// Strata extras.
	Project   string `json:"project"`          // the project, as project_reference takes it
	Branch    string `json:"branch,omitempty"` // preview branch; absent on main
	Path      string `json:"path"`             // project-relative path, as file_path takes it
	Status    string `json:"status"`           // indexed, failed or unsupported
	Error     string `json:"error,omitempty"`  // why a file failed or is unsupported
	Format    string `json:"format,omitempty"` // detected format (the detected type when unsupported)
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"` // when Strata last recorded this file's state
}

// sourceEntry is the original's SourceEntry ({source|filePath, chunkCount,
// timestamp}); Strata never produces one (see listFilesOut.Sources).
type sourceEntry struct {
	Source     string `json:"source,omitempty"`
	FilePath   string `json:"filePath,omitempty"`
	ChunkCount int    `json:"chunkCount"`
	Timestamp  string `json:"timestamp"`
}

func (t *Tools) listFiles(ctx context.Context, p auth.Principal, a listFilesArgs) (any, error) {
	prefixes, err := parseScope(a.Scope)
	if err != nil {
		return nil, err
	}
	var scope []scopePrefix
	out := listFilesOut{BaseDirs: []string{}, Files: []fileEntry{}, Sources: []sourceEntry{}}
	if prefixes != nil {
		var relative []string
		scope, relative = normalizeScope(prefixes)
		if scope == nil {
			scope = []scopePrefix{} // only relative prefixes: nothing matches
		}
		for _, r := range relative {
			out.Warnings = append(out.Warnings, "Warning: scope prefix \""+clip(r)+"\" is not absolute; it matches nothing.")
		}
	}
	projects, err := t.projectsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	slices.Sort(projects)
	branchRoots := map[string]bool{}
	for _, project := range projects {
		out.BaseDirs = append(out.BaseDirs, rootOf(project, ""))
		where, visit := projectScope(project, scope)
		if !visit {
			continue
		}
		room := MaxListFiles - len(out.Files)
		if room == 0 && out.Truncated {
			continue // already cut: list the base directory only
		}
		// One more than there is room for tells whether more exist.
		docs, err := t.documentsIn(ctx, project, scope, where, room+1)
		if err != nil {
			return nil, err
		}
		var entries []fileEntry
		for _, d := range docs {
			if d.Deleted || d.Status == "deleted" {
				continue
			}
			e := fileEntryOf(project, d)
			if scope != nil && !slices.ContainsFunc(scope, func(s scopePrefix) bool { return s.matches(e.FilePath) }) {
				continue
			}
			entries = append(entries, e)
		}
		if len(docs) > room {
			out.Truncated = true // the store may hold more (even if the exact scope check dropped some here)
		}
		if len(entries) > room {
			entries = entries[:room]
		}
		for _, e := range entries {
			if e.Branch != "" {
				branchRoots[e.BaseDir] = true
			}
		}
		out.Files = append(out.Files, entries...)
	}
	for root := range branchRoots {
		out.BaseDirs = append(out.BaseDirs, root)
	}
	slices.Sort(out.BaseDirs)
	slices.SortStableFunc(out.Files, func(x, y fileEntry) int { return strings.Compare(x.FilePath, y.FilePath) })
	if len(out.BaseDirs) > 0 {
		out.BaseDir = out.BaseDirs[0]
	}
	if out.Truncated {
		// The original schema has no cursor: the way to the rest is a narrower scope.
		out.Warnings = append(out.Warnings, fmt.Sprintf("Warning: only the first %d files (by path) are listed. "+
			"List the rest folder by folder: call list_files again with scope set to a folder, e.g. \"%s\", "+
			"or browse folders with list_contents.", MaxListFiles, folderScopeHint(out.Files)))
	}
	return out, nil
}

// folderScopeHint is the folder of the last listed file: a scope that
// continues where the listing was cut (a member's is its container's
// path, objkey.Split, which as a scope lists the container and its members).
func folderScopeHint(files []fileEntry) string {
	if len(files) == 0 {
		return "/"
	}
	if folder := folderOf(files[len(files)-1].FilePath); folder != "" {
		return folder
	}
	return "/"
}

func fileEntryOf(project string, d store.Document) fileEntry {
	root := rootOf(project, d.Branch)
	e := fileEntry{
		FilePath: root + "/" + d.FilePath, BaseDir: root, Ingested: d.Status == pipeline.StatusIndexed,
		Project: project, Branch: d.Branch, Path: d.FilePath, Status: d.Status, Error: d.Error, Format: d.Format,
		Title: d.Title, UpdatedAt: d.UpdatedAt,
	}
	if e.Ingested {
		n := d.ChunkCount
		e.ChunkCount = &n
		e.Timestamp = d.IngestedAt
		if e.Timestamp == "" {
			e.Timestamp = d.UpdatedAt
		}
	}
	return e
}
