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
	"strings"

	"github.com/strata-kb/strata/queryd/store"
)

const (
	maxScopePrefixes    = 100
	maxScopePrefixBytes = 1100 // an S3 key is at most 1024 bytes, plus "/" and a branch
)

// scopeError is the original's message for a malformed scope (tool-input.ts SCOPE_ERROR).
const scopeError = "scope must be a non-empty string or a non-empty array of non-empty strings"

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
	return t.base.AllDocuments(ctx, project, where, limit)
}

func rootOf(project, branch string) string {
	if branch == "" {
		return "/" + project
	}
	return "/" + project + "@" + branch
}
