package tools

// mcp-local-rag's read-only overview tools, list_files and status, as
// shinpr/mcp-local-rag v0.17.4 defines them (src/server/tool-definitions.ts:
// names, descriptions and input schemas, embedded verbatim from
// schemas/list_files.input.json and schemas/status.input.json;
// src/server/types.ts ListFilesResult/FileEntry/SourceEntry and
// src/vectordb/index.ts getStatus: the output field names).
//
// mcp-local-rag indexes files under local base directories and addresses them
// by absolute path. Strata's "file system" is the bucket: the object key
// "<project>[@<branch>]/<path>" is shown as the absolute path
// "/<project>[@<branch>]/<path>", so each project the key may read is a base
// directory "/<project>" (and each branch with files "/<project>@<branch>"),
// and the original's scope prefixes keep their exact meaning over these paths.

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/pipeline"
)

// MaxListFiles bounds one list_files answer; past it the answer says truncated.
const MaxListFiles = 200

const (
	maxScopePrefixes    = 100
	maxScopePrefixBytes = 1100 // an S3 key is at most 1024 bytes, plus "/" and a branch
)

// Both texts are the original's, word for word (tool-definitions.ts), so
// agents that know mcp-local-rag recognise the tools; the comments in this
// file say how Strata fills each field.
const (
	listFilesDescription = "List supported files (PDF, DOCX, TXT, MD) under the configured base directories and whether each is ingested. Returns { baseDirs, files, sources }; sources lists ingested items reported apart from the file scan, chiefly ingest_data content (web pages, clipboard, etc.)."
	statusDescription    = "Get index status: { documentCount, chunkCount, memoryUsage (MB), uptime (s), ftsIndexEnabled, searchMode }."
)

// scopeError is the original's message for a malformed scope (tool-input.ts SCOPE_ERROR).
const scopeError = "scope must be a non-empty string or a non-empty array of non-empty strings"

var started = time.Now()

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

// scopePrefix is one normalised scope prefix (the original's normalizeScopePrefix).
type scopePrefix struct{ exact, descendant string }

func (s scopePrefix) matches(path string) bool {
	return path == s.exact || strings.HasPrefix(path, s.descendant)
}

// parseScope is the original's parseListFilesInput: absent means no scope; a
// string or a non-empty list of non-empty strings, each trimmed.
func parseScope(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if strings.TrimSpace(one) == "" {
			return nil, userError{scopeError}
		}
		return checkScope([]string{strings.TrimSpace(one)})
	}
	var list []any
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return nil, userError{scopeError}
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, userError{scopeError}
		}
		out = append(out, strings.TrimSpace(s))
	}
	return checkScope(out)
}

func checkScope(prefixes []string) ([]string, error) {
	if len(prefixes) > maxScopePrefixes {
		return nil, userErrorf("scope takes at most %d prefixes, got %d", maxScopePrefixes, len(prefixes))
	}
	for _, p := range prefixes {
		if len(p) > maxScopePrefixBytes {
			return nil, userErrorf("a scope prefix is at most %d bytes, got %d", maxScopePrefixBytes, len(p))
		}
	}
	return prefixes, nil
}

// normalizeScope strips trailing slashes ("/" stays "/") and keeps the
// absolute prefixes; relative ones match nothing and are returned apart.
func normalizeScope(prefixes []string) (abs []scopePrefix, relative []string) {
	for _, p := range prefixes {
		if !strings.HasPrefix(p, "/") {
			relative = append(relative, p)
			continue
		}
		exact := strings.TrimRight(p, "/")
		if exact == "" {
			exact = "/"
		}
		descendant := exact
		if !strings.HasSuffix(descendant, "/") {
			descendant += "/"
		}
		abs = append(abs, scopePrefix{exact: exact, descendant: descendant})
	}
	return abs, relative
}

// projectScope turns the scope into a store filter for one project: nil
// where with visit=true means the whole project, visit=false that no prefix
// reaches into it. The filter may match more than the scope (Like wildcards);
// listFiles checks each file's path again.
func projectScope(project string, scope []scopePrefix) (where *store.Where, visit bool) {
	if scope == nil {
		return nil, true
	}
	var ors []*store.Where
	for _, s := range scope {
		if s.exact == "/" {
			return nil, true
		}
		head, rel, _ := strings.Cut(strings.TrimPrefix(s.exact, "/"), "/")
		name, branch, _ := strings.Cut(head, "@")
		if name != project {
			continue
		}
		ors = append(ors, store.DocumentScope(branch, rel))
	}
	if len(ors) == 0 {
		return nil, false
	}
	return store.Or(ors...), true
}

// documentsIn lists project's live documents within scope (nil = all),
// from the document index when there is one, else with where.
func (t *Tools) documentsIn(ctx context.Context, project string, scope []scopePrefix, where *store.Where, limit int) ([]store.Document, error) {
	if t.docs != nil {
		var scopes []store.PathScope
		for _, s := range scope {
			if s.exact == "/" {
				scopes = nil
				break
			}
			head, rel, _ := strings.Cut(strings.TrimPrefix(s.exact, "/"), "/")
			if name, branch, _ := strings.Cut(head, "@"); name == project {
				scopes = append(scopes, store.PathScope{Branch: branch, Path: rel})
			}
		}
		if docs, ok := t.docs.DocumentsUnder(ctx, project, scopes, limit); ok {
			return docs, nil
		}
	}
	return t.read.AllDocuments(ctx, project, where, limit)
}

func rootOf(project, branch string) string {
	if branch == "" {
		return "/" + project
	}
	return "/" + project + "@" + branch
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
// continues where the listing was cut.
func folderScopeHint(files []fileEntry) string {
	if len(files) == 0 {
		return "/"
	}
	last := files[len(files)-1].FilePath
	return last[:max(1, strings.LastIndexByte(last, '/'))]
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

// statusOut is the original's getStatus result plus Strata's extras.
type statusOut struct {
	// DocumentCount: indexed files (latest version indexed, any branch) in
	// the projects the key may read; the original counts files that have
	// chunks. Failed and unsupported files are counted apart (below).
	DocumentCount int `json:"documentCount"`
	// ChunkCount: chunks in those projects' indexes.
	ChunkCount int `json:"chunkCount"`
	// MemoryUsage: this queryd process's live heap in MB (the original:
	// Node's heapUsed in MB). Weaviate's memory is not included.
	MemoryUsage float64 `json:"memoryUsage"`
	// Uptime: seconds since this queryd process started.
	Uptime float64 `json:"uptime"`
	// FtsIndexEnabled: chunk content has a BM25 full-text index in Weaviate.
	FtsIndexEnabled bool `json:"ftsIndexEnabled"`
	// SearchMode: "hybrid" (keyword and vector, query_documents) with an
	// embedding provider; without one Strata searches by keyword (BM25)
	// only, and says "keyword".
	SearchMode string `json:"searchMode"`

	// Strata extras.
	FailedCount      int             `json:"failedCount"`      // files that could not be read; list_files shows why
	UnsupportedCount int             `json:"unsupportedCount"` // files of a type Strata does not index
	Projects         []projectStatus `json:"projects"`         // the same counts per project the key may read
	Configuration    statusConfig    `json:"configuration"`
	// Stages are the worker replicas that report something holding them
	// back beyond lag (a full disk, their memory budget); admins only,
	// omitted when nothing does.
	Stages []stageStatus `json:"stages,omitempty"`
}

// stageStatus is one worker replica held back, in words.
type stageStatus struct {
	Stage      string   `json:"stage"`
	Instance   string   `json:"instance"`
	Conditions []string `json:"conditions"`
}

type projectStatus struct {
	Project            string `json:"project"`
	DocumentCount      int    `json:"documentCount"`
	ChunkCount         int    `json:"chunkCount"`
	FailedCount        int    `json:"failedCount"`
	UnsupportedCount   int    `json:"unsupportedCount"`
	EmbeddedChunkCount int    `json:"embeddedChunkCount"` // chunks with a vector of the configured model
	// SearchModel is the model vector searches of this project use: the
	// configured one, or the previous one while a model change is embedded.
	SearchModel string `json:"searchModel,omitempty"`
	// Watermark is the project's last published commit sequence: reads see everything committed up to it.
	Watermark int64 `json:"watermark"`
	// Failures are the project's failed and unsupported files with why (at most MaxStatusFailures).
	Failures []failure `json:"failures"`
}

// MaxStatusFailures bounds the failures status lists per project; list_files lists them all.
const MaxStatusFailures = 20

// failure is a file that could not be indexed.
type failure struct {
	Path      string `json:"path"`
	Branch    string `json:"branch,omitempty"`
	Status    string `json:"status"`
	Error     string `json:"error"`
	UpdatedAt string `json:"updatedAt"`
}

// statusConfig is Strata's answer to the original's "configuration
// information".
type statusConfig struct {
	// Embedding is the provider queryd embeds queries with (local, openai,
	// or none: vector search is not served).
	Embedding string `json:"embedding"`
	// Model is the embedding model; searches read only its vectors.
	Model string `json:"model,omitempty"`
	// Dimensions is the model's vector length (search_files' dimension).
	Dimensions int `json:"dimensions,omitempty"`
	// Embeddings is the state of the chunks' vectors: "missing" (none
	// embedded), "partial" or "ready" (all embedded).
	Embeddings string `json:"embeddings"`
	// Search is the search served: "hybrid" (search_keyword, search_knowledge,
	// search_files and query_documents) or "keyword" (search_keyword only).
	Search       string `json:"search"`
	MaxListFiles int    `json:"maxListFiles"`
}

func (t *Tools) status(ctx context.Context, p auth.Principal, _ struct{}) (any, error) {
	projects, err := t.projectsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	slices.Sort(projects)
	out := statusOut{
		MemoryUsage: heapMB(), Uptime: time.Since(started).Seconds(), FtsIndexEnabled: true, SearchMode: "keyword",
		Projects:      []projectStatus{},
		Configuration: statusConfig{Embedding: "none", Search: "keyword", MaxListFiles: MaxListFiles},
	}
	if t.queries != nil {
		out.SearchMode, out.Configuration.Search = "hybrid", "hybrid"
		out.Configuration.Embedding, out.Configuration.Model, out.Configuration.Dimensions = t.provider, t.queries.Model(), t.queries.Dimensions()
	}
	embedded := 0
	for _, project := range projects {
		st, err := t.read.Stats(ctx, project)
		if err != nil {
			return nil, err
		}
		wm, err := t.read.Watermark(ctx, project)
		if err != nil {
			return nil, err
		}
		failed, err := t.failedDocuments(ctx, project, MaxStatusFailures)
		if err != nil {
			return nil, err
		}
		failures := []failure{}
		for _, d := range failed {
			if d.AccessError != "" {
				failures = append(failures, failure{Path: d.FilePath, Branch: d.Branch, Status: d.Status, Error: accessFailure(d.AccessError), UpdatedAt: d.UpdatedAt})
			}
			if d.Status != pipeline.StatusFailed && d.Status != pipeline.StatusUnsupported {
				continue
			}
			failures = append(failures, failure{Path: d.FilePath, Branch: d.Branch, Status: d.Status, Error: d.Error, UpdatedAt: d.UpdatedAt})
		}
		embeddedHere := 0
		if t.vectors != nil {
			if embeddedHere, err = t.vectors.EmbeddedChunkCount(ctx, project, t.queries.Model()); err != nil {
				return nil, err
			}
		}
		ps := projectStatus{
			Project: project, DocumentCount: st.Indexed, ChunkCount: st.Chunks, FailedCount: st.Failed,
			UnsupportedCount: st.Unsupported, EmbeddedChunkCount: embeddedHere, Watermark: wm, Failures: failures,
		}
		if t.vectors != nil {
			m, err := t.modelFor(ctx, project)
			if err != nil {
				return nil, err
			}
			ps.SearchModel = m.Model()
		}
		out.Projects = append(out.Projects, ps)
		out.DocumentCount += st.Indexed
		out.ChunkCount += st.Chunks
		out.FailedCount += st.Failed
		out.UnsupportedCount += st.Unsupported
		embedded += embeddedHere
	}
	if t.stages != nil && p.Admin() {
		reports, err := t.stages.Stages(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range reports {
			if c := r.Conditions(); len(c) > 0 {
				out.Stages = append(out.Stages, stageStatus{Stage: r.Stage, Instance: r.Instance, Conditions: c})
			}
		}
	}
	switch {
	case embedded == 0:
		out.Configuration.Embeddings = pipeline.EmbeddingMissing
	case embedded < out.ChunkCount:
		out.Configuration.Embeddings = "partial"
	default:
		out.Configuration.Embeddings = pipeline.EmbeddingReady
	}
	return out, nil
}

// heapMB is the live heap in MB, like Node's process.memoryUsage().heapUsed.
func heapMB() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64()) / 1024 / 1024
}
