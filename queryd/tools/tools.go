// Package tools serves Strata's MCP tools. Input schemas are the reference
// systems' own (embedded from schemas/), so agents that know those tools call
// ours unchanged; every tool is read-only.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
)

// Tools holds what the handlers need.
type Tools struct {
	// Each toolset's handlers read through their own interface
	// (reader.go), so a tool can use only its toolset's reads; all are the
	// one Reader New takes.
	base        Base
	view        ViewReader
	search      SearchReader
	chunks      ChunksReader
	knowledge   KnowledgeReader
	localRAG    LocalRAGReader
	docs        DocumentIndex // nil: listings read Weaviate
	cursor      *cursor.Signer
	log         *slog.Logger
	tokenBudget int         // read / read_around inline sizes (SetTokenBudget)
	places      chunkPlaces // where returned chunks lie, for read_around (chunk_places.go)
	images      ImageReader // view_chunk_image's source (SetImageReader); nil: not available
	// vectors and queries serve the vector tools (SetEmbeddings); nil: not served.
	vectors  VectorReader
	queries  QueryEmbedder
	provider string        // the embedding provider's name (local, openai)
	previous QueryEmbedder // the model before queries' during a model change (SetPreviousEmbeddings)
	coverage sync.Map      // project -> coverage: whether queries' model covers it
	// Strata's own tools (SetStrata); nil: the tools that need them are not served.
	keyword KeywordSearcher
	meta    MetadataIndex  // nil: no metadata filter, hits carry no metadata
	lister  DocumentLister // nil: list_documents is not served
	changes ChangeReader
	states  ObjectStates
	dead    DeadLetters
	stages  StageHealth // nil: status names no stage conditions
	// toolsetOf maps each registered tool to its toolset (Register).
	toolsetOf map[string]string
	// skipArgumentChecks leaves bad arguments to the handlers' own checks
	// (SkipArgumentChecks, for tests of those).
	skipArgumentChecks bool
}

// SkipArgumentChecks turns off the input schema checks (arguments.go) of
// the tools registered after it, so tests can reach the handlers' own.
func (t *Tools) SkipArgumentChecks() *Tools {
	t.skipArgumentChecks = true
	return t
}

// ToolsetOf names the toolset of a registered tool ("" for another name).
func (t *Tools) ToolsetOf(tool string) string { return t.toolsetOf[tool] }

// New returns the tool set.
func New(read Reader, signer *cursor.Signer, log *slog.Logger) *Tools {
	t := &Tools{base: read, view: read, search: read, chunks: read, knowledge: read, localRAG: read,
		cursor: signer, log: log, tokenBudget: DefaultTokenBudget}
	t.docs, _ = read.(DocumentIndex)
	t.meta, _ = read.(MetadataIndex)
	t.lister, _ = read.(DocumentLister)
	return t
}

// failedDocuments lists project's failed and unsupported documents.
func (t *Tools) failedDocuments(ctx context.Context, project string, limit int) ([]store.Document, error) {
	if t.docs != nil {
		if docs, ok := t.docs.FailedDocuments(ctx, project, limit); ok {
			return docs, nil
		}
	}
	return t.base.AllDocuments(ctx, project, store.FailureFilter(), limit)
}

// userError is a problem with the call itself; its text goes back to the agent.
type userError struct{ msg string }

func (e userError) Error() string { return e.msg }

func userErrorf(format string, args ...any) error { return userError{fmt.Sprintf(format, args...)} }

var readOnly = mcp.ToolAnnotation{
	ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false),
}

func ptr[T any](v T) *T { return &v }

// handler adapts a typed tool function: arguments are decoded into A, the
// result is returned as structured content with its JSON as text, and user
// errors become tool errors the agent can read.
func handler[A any](t *Tools, name string, fn func(ctx context.Context, p auth.Principal, args A) (any, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, ok := auth.FromContext(ctx)
		if !ok {
			return mcp.NewToolResultError("not authenticated"), nil
		}
		var args A
		raw, err := argumentsJSON(ctx, req.GetRawArguments()) // the JSON checked encoded (arguments.go)
		if err == nil {
			err = json.Unmarshal(raw, &args)
		}
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("invalid arguments for %s: %v", name, err)), nil
		}
		out, err := fn(ctx, p, args)
		if err != nil {
			var ue userError
			if errors.As(err, &ue) {
				return mcp.NewToolResultError(ue.msg), nil
			}
			t.log.Error("tool failed", "tool", name, "key", p.KeyName, "err", err)
			return mcp.NewToolResultError(fmt.Sprintf("%s failed: internal error; try again later", name)), nil
		}
		if r, ok := out.(toolResult); ok {
			return r.toolResult()
		}
		return structured(out)
	}
}

// toolResult is a tool's answer that builds its own result (more than its JSON).
type toolResult interface {
	toolResult() (*mcp.CallToolResult, error)
}

// structured is a tool result whose structured content is out and whose
// text is out's JSON. The JSON is encoded once and handed to mcp-go as
// RawStructuredContent, which it writes as it is: encoding out a second
// time by reflection was most of a large answer's cost
// (BenchmarkListFileChunksLarge). StructuredContent stays set for callers
// in this process.
func structured(out any) (*mcp.CallToolResult, error) {
	text, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	res := mcp.NewToolResultStructured(out, string(text))
	res.RawStructuredContent = text
	return res, nil
}

// Toolsets group the tools by the system whose surface they serve.
const (
	ToolsetKnowledge = "knowledge" // Knowledge Stack
	ToolsetChunks    = "chunks"    // Veryfront
	ToolsetLocalRAG  = "localrag"  // mcp-local-rag
	ToolsetStrata    = "strata"    // Strata's own
)

// AllToolsets is the default: every toolset.
var AllToolsets = []string{ToolsetKnowledge, ToolsetChunks, ToolsetLocalRAG, ToolsetStrata}

// Register adds the tools of the given toolsets (all when none is named) to
// s: every tool of the list (tool.go) whose toolset is named and that
// this server can serve (a tool's needs: the vector tools need an
// embedding provider, SetEmbeddings; Strata's own the sources SetStrata
// gives).
func (t *Tools) Register(s *server.MCPServer, toolsets ...string) {
	if len(toolsets) == 0 {
		toolsets = AllToolsets
	}
	on := map[string]bool{}
	for _, ts := range toolsets {
		on[ts] = true
	}
	for _, d := range all {
		if !on[d.Toolset] || (d.needs != nil && !d.needs(t)) {
			continue
		}
		h := d.handle(t)
		tool := mcp.NewToolWithRawSchema(d.Name, d.Description, json.RawMessage(d.Input))
		if !t.skipArgumentChecks {
			h = compileArguments(d.Name, tool.RawInputSchema).checked(h)
		}
		if d.Output != "" {
			tool.RawOutputSchema = json.RawMessage(d.Output)
		}
		tool.Annotations = readOnly
		s.AddTool(tool, h)
		if t.toolsetOf == nil {
			t.toolsetOf = map[string]string{}
		}
		t.toolsetOf[d.Name] = d.Toolset
	}
}

// projectsNamed is the project ref names when it names one, else every
// project p may read that has an index (a tool's optional project_reference).
func (t *Tools) projectsNamed(ctx context.Context, p auth.Principal, ref *string) ([]string, error) {
	if ref == nil || *ref == "" {
		return t.projectsOf(ctx, p)
	}
	project, err := t.resolveProject(ctx, p, *ref)
	if err != nil {
		return nil, err
	}
	return []string{project}, nil
}

// projectsOf lists the projects p may read that have an index.
func (t *Tools) projectsOf(ctx context.Context, p auth.Principal) ([]string, error) {
	all, err := t.base.Projects(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(s string) bool { return !p.CanRead(s) }), nil
}

// resolveProject maps a project_reference (name or project id) to a project
// the caller may read. A project the key may not read is reported exactly
// like one that does not exist.
func (t *Tools) resolveProject(ctx context.Context, p auth.Principal, ref string) (string, error) {
	notFound := userErrorf("project not found: %q", clip(ref))
	if ref == "" {
		return "", userErrorf("project_reference is required")
	}
	if ids.Valid(ref) {
		projects, err := t.projectsOf(ctx, p)
		if err != nil {
			return "", err
		}
		for _, name := range projects {
			if ids.Project(name) == ref {
				return name, nil
			}
		}
		return "", notFound
	}
	if !p.CanRead(ref) {
		return "", notFound
	}
	ok, err := t.base.HasProject(ctx, ref)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", notFound
	}
	return ref, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
