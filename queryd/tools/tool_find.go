package tools

// The Knowledge Stack tool find: finding folders and documents by name.

import (
	"context"
	_ "embed"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/store"
)

const findDescription = "Search across your entire knowledge base by name. Use this when you know the name (or part of the name) " +
	"of what you are looking for. Matches a case-insensitive substring of folder and document names; kind FOLDER or DOCUMENT narrows it."

//go:embed schemas/find.input.json
var findInput string

var findTool = define(ToolsetKnowledge, "find", findDescription, findInput, (*Tools).find)

type findArgs struct {
	Name string  `json:"name"`
	Kind *string `json:"kind"`
	pageArgs
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
	limit, offset, err := a.bounds()
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
				docs, ok = t.docs.DocumentsNamed(ctx, project, name, maxFindScan+1)
			}
			if !ok {
				if docs, err = t.base.AllDocuments(ctx, project, store.DocumentScope("", ""), maxFindScan+1); err != nil {
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
