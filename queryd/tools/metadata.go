package tools

// Document metadata in the tools (package metadata): the filter
// hybrid_search and list_documents take, and what a hit says about where
// it is (metadata, pages, a citation, a resource link).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/queryd/resources"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/metafilter"
)

// parseMetadataFilter reads a tool's metadata argument and checks it
// against the keys the caller may see in projects.
func (t *Tools) parseMetadataFilter(ctx context.Context, raw json.RawMessage, projects []string) (metadata.Filter, error) {
	f, err := metadata.ParseFilter(raw)
	if err != nil {
		return nil, userErrorf("%v", err)
	}
	if len(f) == 0 {
		return nil, nil
	}
	if t.meta == nil {
		return nil, userErrorf("this server keeps no document metadata: the metadata filter is not available")
	}
	known := map[string]metadata.Kinds{}
	for _, project := range projects {
		keys, err := t.meta.MetadataKeys(ctx, project)
		if err != nil {
			return nil, err
		}
		for k, ks := range keys {
			known[k] |= ks
		}
	}
	if err := f.Check(known); err != nil {
		return nil, userErrorf("%v", err)
	}
	return f, nil
}

// metadataWhere is f as a chunk filter (nil for no filter).
func (t *Tools) metadataWhere(ctx context.Context, f metadata.Filter) (*store.Where, error) {
	if len(f) == 0 {
		return nil, nil
	}
	w, err := t.meta.MetadataWhere(ctx, f)
	if errors.Is(err, metafilter.ErrNoRanges) {
		return nil, userErrorf("metadata filter: %v", err)
	}
	return w, err
}

// citation is one string an agent can quote for a hit: its path, and its
// pages for a paged format, else the headings it lies under.
func citation(c store.Chunk) string {
	unit := pageUnit(c.FilePath)
	var where string
	switch {
	case c.PageStart > 0 && c.PageEnd > c.PageStart:
		where = fmt.Sprintf("%s, %ss %d-%d", c.FilePath, unit, c.PageStart, c.PageEnd)
	case c.PageStart > 0:
		where = fmt.Sprintf("%s, %s %d", c.FilePath, unit, c.PageStart)
	case len(c.HeadingPath) > 0:
		return fmt.Sprintf("%s, section %q", c.FilePath, strings.Join(c.HeadingPath, " > "))
	default:
		return c.FilePath
	}
	// The section on the page is what a person looks for there: a slide's
	// title and notes, "(hidden)", a document's footer or footnotes.
	if len(c.HeadingPath) > 0 {
		where += fmt.Sprintf(", section %q", strings.Join(c.HeadingPath, " > "))
	}
	return where
}

// pageUnit is what a format's pages are, by the file's name: a deck's are
// slides, a workbook's sheets, an e-book's chapters (the readers number
// them as pages).
func pageUnit(filePath string) string {
	switch strings.ToLower(path.Ext(filePath)) {
	case ".pptx", ".odp":
		return "slide"
	case ".xlsx", ".ods":
		return "sheet"
	case ".epub":
		return "chapter"
	}
	return "page"
}

// fillMetadata sets each hit's metadata to its file version's.
func (t *Tools) fillMetadata(ctx context.Context, hits []Hit) error {
	if t.meta == nil || len(hits) == 0 {
		return nil
	}
	byProject := map[string][]store.Chunk{}
	for _, h := range hits {
		byProject[h.Project] = append(byProject[h.Project], store.Chunk{FileID: h.DocumentID, FileVersionID: h.fileVersionID})
	}
	for project, list := range byProject {
		m, err := t.meta.HitMetadata(ctx, project, list)
		if err != nil {
			return err
		}
		for i := range hits {
			if hits[i].Project == project {
				hits[i].Metadata = nonNilMetadata(m[hits[i].fileVersionID])
			}
		}
	}
	return nil
}

// resourceLinks are the resource_link blocks of the documents of hits
// that have a strata:// resource (files of the main branch), once each.
func resourceLinks(hits []Hit, branches []string) []mcp.Content {
	var out []mcp.Content
	seen := map[string]bool{}
	for i, h := range hits {
		if branches[i] != "" {
			continue
		}
		uri := resources.URI(h.Project, h.DocumentPath)
		if seen[uri] {
			continue
		}
		seen[uri] = true
		out = append(out, mcp.NewResourceLink(uri, baseName(h.DocumentPath), "The extracted text of "+h.DocumentPath+" in project "+h.Project, "text/plain"))
	}
	return out
}

// nonNilMetadata is m, or an empty map: a hit always shows its metadata object.
func nonNilMetadata(m metadata.Metadata) metadata.Metadata {
	if m == nil {
		return metadata.Metadata{}
	}
	return m
}
