// Package resources serves every indexed file as an MCP resource, so clients
// that attach documents (rather than call tools) can: the file path of
// project acme's main branch docs/guide.md is strata://acme/docs/guide.md,
// resources/list pages through every file the key may read, and
// resources/read returns the file's extracted text.
//
// mcp-go lists only resources registered up front, one by one; a project's
// files are many, change all the time and depend on the caller's key. So the
// listing is answered from the index in the list hooks: the before hook
// takes Strata's cursor out of the request (mcp-go would reject it) and
// reads the page, the after hook puts the page into mcp-go's (empty) answer.
// Reads go through one resource template, strata://{project}/{+path}.
package resources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/objkey"
)

// Scheme is the URI scheme of Strata's resources.
const Scheme = "strata"

// Template names every resource: the project, then the file's path.
const Template = Scheme + "://{project}/{+path}"

// DefaultPageSize is how many resources one resources/list answer holds.
const DefaultPageSize = 100

// Reader is what resources read from the index.
type Reader interface {
	Projects(ctx context.Context) ([]string, error)
	ResourceDocuments(ctx context.Context, project, after string, limit int) ([]store.Document, error)
	FileText(ctx context.Context, project, path string) (*store.Document, string, error)
}

// Resources answers resources/list and resources/read.
type Resources struct {
	read     Reader
	cursor   *cursor.Signer
	pageSize int
	log      *slog.Logger
}

// New returns the resources of read; cursors are signed by signer.
func New(read Reader, signer *cursor.Signer, log *slog.Logger) *Resources {
	return &Resources{read: read, cursor: signer, pageSize: DefaultPageSize, log: log}
}

// SetPageSize sets how many resources one list answer holds.
func (r *Resources) SetPageSize(n int) *Resources { r.pageSize = max(1, n); return r }

// Options are the server options resources need: the capability and the
// list hooks. Pass them to server.NewMCPServer, then call Register.
func (r *Resources) Options() []server.ServerOption {
	hooks := &server.Hooks{}
	hooks.AddBeforeListResources(r.beforeList)
	hooks.AddAfterListResources(r.afterList)
	return []server.ServerOption{server.WithResourceCapabilities(false, false), server.WithHooks(hooks)}
}

// Register adds the resource template that reads files.
func (r *Resources) Register(s *server.MCPServer) {
	s.AddResourceTemplate(mcp.NewResourceTemplate(Template, "Strata file",
		mcp.WithTemplateDescription("The extracted text of an indexed file: strata://<project>/<path> (the main branch)."),
		mcp.WithTemplateMIMEType("text/plain")), r.readFile)
}

// URI is the resource URI of path in project. A member's path (a file
// inside another, "mail/a.eml//notes.txt") keeps its "//":
// strata://acme/mail/a.eml//notes.txt.
func URI(project, path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return Scheme + "://" + project + "/" + strings.Join(parts, "/")
}

// parseURI splits a resource URI into its project and path.
func parseURI(uri string) (project, path string, err error) {
	rest, ok := strings.CutPrefix(uri, Scheme+"://")
	project, escaped, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || project == "" || escaped == "" {
		return "", "", fmt.Errorf("resource %q: want %s://<project>/<path>", uri, Scheme)
	}
	if path, err = url.PathUnescape(escaped); err != nil {
		return "", "", fmt.Errorf("resource %q: %w", uri, err)
	}
	// The path is a file's or a member's (objkey.ParseDocument), never cleaned.
	if _, err := objkey.ParseDocument(project + "/" + path); err != nil {
		return "", "", fmt.Errorf("resource %q: not a file's path (%s://<project>/<path>, or <container path>//<member path> for a file inside another): %w",
			uri, Scheme, err)
	}
	return project, path, nil
}

// page is the listing the before hook read, carried to the after hook in the
// request's _meta (the one place the two hooks share).
type page struct {
	resources []mcp.Resource
	next      string
}

const pageKey = "strata.internal/resources-page"

// beforeList reads the page the request's cursor names. mcp-go then lists
// its registered resources (none) from no cursor.
func (r *Resources) beforeList(ctx context.Context, _ any, req *mcp.ListResourcesRequest) {
	pg, err := r.list(ctx, string(req.Params.Cursor))
	if err != nil {
		// Hooks cannot fail a request; a cursor mcp-go cannot decode makes
		// it answer invalid params, which is what a bad cursor is.
		r.log.Warn("resources/list", "err", err)
		req.Params.Cursor = "!invalid cursor: " + mcp.Cursor(err.Error())
		return
	}
	req.Params.Cursor = ""
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	if req.Params.Meta.AdditionalFields == nil {
		req.Params.Meta.AdditionalFields = map[string]any{}
	}
	req.Params.Meta.AdditionalFields[pageKey] = pg
}

// afterList puts the page read before into the answer.
func (r *Resources) afterList(_ context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
	if req.Params.Meta == nil || res == nil {
		return
	}
	if pg, ok := req.Params.Meta.AdditionalFields[pageKey].(page); ok {
		res.Resources = append(pg.resources, res.Resources...)
		res.NextCursor = mcp.Cursor(pg.next)
	}
}

// list reads one page: the files of the caller's projects in (project,
// path) order, from the position cursor names.
func (r *Resources) list(ctx context.Context, c string) (page, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return page{}, errors.New("no API key in the request")
	}
	project, after := "", ""
	if c != "" {
		pos, err := r.cursor.Decode(c)
		if err != nil || pos.Tool != "resources/list" {
			return page{}, cursor.ErrInvalid
		}
		project, after = pos.Project, pos.Scope
	}
	all, err := r.read.Projects(ctx)
	if err != nil {
		return page{}, fmt.Errorf("list projects: %w", err)
	}
	projects := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return !p.CanRead(s) || s < project })
	slices.Sort(projects)
	out := page{resources: []mcp.Resource{}}
	for _, proj := range projects {
		if proj != project {
			after = "" // a later project starts at its first file
		}
		want := r.pageSize - len(out.resources)
		docs, err := r.read.ResourceDocuments(ctx, proj, after, want)
		if err != nil {
			return page{}, err
		}
		for _, d := range docs {
			res := mcp.NewResource(URI(proj, d.FilePath), d.FilePath, mcp.WithMIMEType("text/plain"),
				mcp.WithResourceDescription(fmt.Sprintf("%s in project %s: extracted text, %d chunks", d.FilePath, proj, d.ChunkCount)))
			if d.Title != "" {
				res.Title = d.Title
			}
			out.resources = append(out.resources, res)
		}
		if len(docs) == want {
			last := docs[len(docs)-1].FilePath
			out.next = r.cursor.Encode(cursor.Position{Tool: "resources/list", Project: proj, Scope: last, Limit: r.pageSize})
			return out, nil
		}
	}
	return out, nil
}

// readFile answers resources/read for one file.
func (r *Resources) readFile(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	project, path, err := parseURI(req.Params.URI)
	if err != nil {
		return nil, err
	}
	notFound := fmt.Errorf("resource not found: %s", req.Params.URI)
	p, ok := auth.FromContext(ctx)
	if !ok || !p.CanRead(project) {
		return nil, notFound // like a project that does not exist
	}
	doc, text, err := r.read.FileText(ctx, project, path)
	switch {
	case err != nil:
		return nil, err
	case doc == nil:
		return nil, notFound
	case doc.Status != "indexed":
		return nil, fmt.Errorf("%s was not indexed (%s): %s", req.Params.URI, doc.Status, doc.Error)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}, nil
}
