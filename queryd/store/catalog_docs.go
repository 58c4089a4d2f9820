package store

import (
	"context"

	"slices"
	"sort"
	"strings"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
)

// The catalog's document indexes, kept up to date as versions become
// visible or are replaced (projectCatalog.show): listings, name search and
// failures cost what their answer costs, not what the project holds.

// docIndex holds a project's live documents (visible, not deleted).
type docIndex struct {
	sorted  []string            // pathKey of every live document, sorted
	byKey   map[string]string   // pathKey -> file id
	grams   map[string][]string // trigram of a main document's lower-cased name -> file ids
	folders map[string]int      // folder on main -> live documents directly in it
	failed  map[string]bool     // file ids of failed and unsupported documents
}

func newDocIndex() docIndex {
	return docIndex{byKey: map[string]string{}, grams: map[string][]string{}, folders: map[string]int{}, failed: map[string]bool{}}
}

// pathKey sorts by path, then branch ("" = main first).
func pathKey(v Version) string { return v.FilePath + "\x00" + v.Branch }

func (d *docIndex) add(v Version) {
	k := pathKey(v)
	if _, ok := d.byKey[k]; !ok {
		i, _ := slices.BinarySearch(d.sorted, k)
		d.sorted = slices.Insert(d.sorted, i, k)
	}
	d.byKey[k] = v.FileID
	if v.Status == pipeline.StatusFailed || v.Status == pipeline.StatusUnsupported || v.AccessError != "" {
		d.failed[v.FileID] = true
	}
	if v.Branch == "" {
		d.folders[folderOfPath(v.FilePath)]++
		for _, g := range trigrams(baseOf(v.FilePath)) {
			d.grams[g] = append(d.grams[g], v.FileID)
		}
	}
}

func (d *docIndex) remove(v Version) {
	k := pathKey(v)
	if i, ok := slices.BinarySearch(d.sorted, k); ok {
		d.sorted = slices.Delete(d.sorted, i, i+1)
	}
	delete(d.byKey, k)
	delete(d.failed, v.FileID)
	if v.Branch == "" {
		f := folderOfPath(v.FilePath)
		if d.folders[f]--; d.folders[f] <= 0 {
			delete(d.folders, f)
		}
		for _, g := range trigrams(baseOf(v.FilePath)) {
			d.grams[g] = slices.DeleteFunc(d.grams[g], func(id string) bool { return id == v.FileID })
			if len(d.grams[g]) == 0 {
				delete(d.grams, g)
			}
		}
	}
}

// trigrams are the distinct three-byte windows of a lower-cased name; a
// name shorter than three bytes is its own gram.
func trigrams(name string) []string {
	s := strings.ToLower(name)
	if len(s) < 3 {
		return []string{s}
	}
	var out []string
	for i := 0; i+3 <= len(s); i++ {
		out = append(out, s[i:i+3])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// baseOf is a document's name and folderOfPath its folder ("" at the
// project root), by objkey.Split: a member's ("mail/a.eml//notes.txt") is
// in its container's path ("mail/a.eml"), so a container with members on
// main is a folder as well as a document (tools/paths.go).
func baseOf(p string) string { _, name := objkey.Split(p); return name }

func folderOfPath(p string) string { folder, _ := objkey.Split(p); return folder }

// documentOfVersion is a live document as the catalog knows it.
func documentOfVersion(v Version) Document {
	return Document{FileID: v.FileID, FilePath: v.FilePath, Name: baseOf(v.FilePath), Folder: folderOfPath(v.FilePath),
		Branch: v.Branch, FileVersionID: v.FileVersionID, Title: v.Title, Status: v.Status, Error: v.Error, AccessError: v.AccessError,
		ChunkCount: v.ChunkCount, DocumentInfo: DocumentInfo{Format: v.Format, UpdatedAt: v.CommittedAt, IngestedAt: v.IngestedAt},
		Metadata: v.Metadata, MetadataWarnings: v.MetadataWarnings}
}

// current is fileID's visible version; the caller holds c.mu.
func (pc *projectCatalog) current(fileID string) Version {
	list := pc.files[fileID]
	return list[len(list)-1]
}

// DocumentsNamed lists the live documents on main whose file name contains
// needle (case-insensitive), sorted by path, at most limit; ok is false
// when the catalog cannot answer (the caller reads Weaviate).
func (s *Store) DocumentsNamed(ctx context.Context, project, needle string, limit int) (docs []Document, ok bool) {
	ok = s.catalog.readProject(project, func(pc *projectCatalog) {
		low := strings.ToLower(needle)
		var candidates []string
		if len(low) < 3 {
			for _, k := range pc.docs.sorted {
				candidates = append(candidates, pc.docs.byKey[k])
			}
		} else {
			// The shortest posting list of the needle's trigrams bounds the work.
			for _, g := range trigrams(low) {
				if list := pc.docs.grams[g]; candidates == nil || len(list) < len(candidates) {
					candidates = list
				}
			}
		}
		for _, id := range candidates {
			v := pc.current(id)
			if v.Branch == "" && strings.Contains(strings.ToLower(baseOf(v.FilePath)), low) && pc.readable(ctx, v) {
				docs = append(docs, documentOfVersion(v))
			}
		}
		slices.SortFunc(docs, func(a, b Document) int { return strings.Compare(a.FilePath, b.FilePath) })
		docs = docs[:min(limit, len(docs))]
	})
	return docs, ok
}

// PathScope selects a branch's documents at Path or under it ("" = all).
type PathScope struct{ Branch, Path string }

// DocumentsUnder lists the live documents within any of scopes (nil = the
// whole project), sorted by path then branch, at most limit.
func (s *Store) DocumentsUnder(ctx context.Context, project string, scopes []PathScope, limit int) (docs []Document, ok bool) {
	ok = s.catalog.readProject(project, func(pc *projectCatalog) {
		if scopes == nil {
			for _, k := range pc.docs.sorted {
				if len(docs) == limit {
					break
				}
				if v := pc.current(pc.docs.byKey[k]); pc.readable(ctx, v) {
					docs = append(docs, documentOfVersion(v))
				}
			}
			return
		}
		seen := map[string]bool{}
		for _, sc := range scopes {
			n := 0
			for i := sort.SearchStrings(pc.docs.sorted, sc.Path); i < len(pc.docs.sorted) && n < limit; i++ {
				k := pc.docs.sorted[i]
				path, branch, _ := strings.Cut(k, "\x00")
				if sc.Path != "" && path != sc.Path && !strings.HasPrefix(path, sc.Path+"/") {
					if !strings.HasPrefix(path, sc.Path) {
						break // past every path that starts with the scope
					}
					continue
				}
				if branch != sc.Branch || seen[k] {
					continue
				}
				seen[k] = true
				if v := pc.current(pc.docs.byKey[k]); pc.readable(ctx, v) {
					docs = append(docs, documentOfVersion(v))
					n++
				}
			}
		}
		slices.SortFunc(docs, func(a, b Document) int {
			return strings.Compare(pathKey(Version{FilePath: a.FilePath, Branch: a.Branch}), pathKey(Version{FilePath: b.FilePath, Branch: b.Branch}))
		})
		docs = docs[:min(limit, len(docs))]
	})
	return docs, ok
}

// FailedDocuments lists the live failed and unsupported documents, sorted
// by path, at most limit.
func (s *Store) FailedDocuments(ctx context.Context, project string, limit int) (docs []Document, ok bool) {
	ok = s.catalog.readProject(project, func(pc *projectCatalog) {
		for id := range pc.docs.failed {
			if v := pc.current(id); pc.readable(ctx, v) {
				docs = append(docs, documentOfVersion(v))
			}
		}
		slices.SortFunc(docs, func(a, b Document) int { return strings.Compare(a.FilePath, b.FilePath) })
		docs = docs[:min(limit, len(docs))]
	})
	return docs, ok
}

// CatalogFolders lists the folders of main that hold live documents the
// caller in ctx may read, sorted.
func (s *Store) CatalogFolders(ctx context.Context, project string, limit int) (folders []string, ok bool) {
	ok = s.catalog.readProject(project, func(pc *projectCatalog) {
		if !access.GrantFrom(ctx).Admin {
			folders = readableFolders(ctx, pc)
			return
		}
		for f := range pc.docs.folders {
			if f != "" {
				folders = append(folders, f)
			}
		}
		slices.Sort(folders)
		folders = folders[:min(limit, len(folders))]
	})
	return folders, ok
}

// readableFolders lists the folders of main's live documents that the
// caller in ctx may read (unsorted); the caller holds the read lock.
func readableFolders(ctx context.Context, pc *projectCatalog) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range pc.docs.byKey {
		v := pc.current(id)
		if f := folderOfPath(v.FilePath); v.Branch == "" && f != "" && !seen[f] && pc.readable(ctx, v) {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// readProject runs read on project's catalog under the read lock; ok is
// false when the catalog cannot answer yet (not Ready). A project the
// catalog does not know has nothing to read: read is not called.
func (c *Catalog) readProject(project string, read func(pc *projectCatalog)) (ok bool) {
	if !c.Ready() {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if pc := c.byKey[project]; pc != nil {
		read(pc)
	}
	return true
}

// neverCommitted reports whether the catalog knows that no version of
// fileID was ever committed to project (false when it cannot tell), or
// that the caller in ctx may not read it: a hidden file is answered as
// fast as a missing one. Files are only ever added to the catalog, so what
// it says holds for every sequence up to the watermarks readers were given.
func (c *Catalog) neverCommitted(ctx context.Context, project, fileID string) bool {
	if c == nil {
		return false
	}
	never := true // stays so for a project nothing was committed to
	ok := c.readProject(project, func(pc *projectCatalog) {
		list := pc.files[fileID]
		never = len(list) == 0 || !pc.readable(ctx, list[len(list)-1])
	})
	return ok && never
}

// DocumentAt is fileID's document as of sequence at, from the catalog:
// found is false when no version of it is visible then (never committed, or
// deleted); ok is false when the catalog cannot answer (the caller reads
// Weaviate). The catalog's versions carry what listings show, not a
// document's statistics (sections, tokens, pages, language).
func (s *Store) DocumentAt(ctx context.Context, project, fileID string, at int64) (doc Document, found, ok bool) {
	c := s.catalog
	if !c.Ready() || !c.covers(project, at) {
		return Document{}, false, false
	}
	v := c.visibleAt(ctx, project, fileID, at)
	if v == nil || v.Deleted {
		return Document{}, false, true
	}
	return documentOfVersion(*v), true, true
}
