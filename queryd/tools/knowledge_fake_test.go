package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// kbIndex is an in-memory index for the Knowledge Stack reads: documents
// (current state, tombstones and branch files included), and the sections
// and chunks of every version, replaced ones included. A file's visible
// version is its document's (none when deleted), like the store's as of the
// watermark.
type kbIndex struct {
	docs     map[string][]store.DocumentDetail // project -> documents
	sections map[string][]store.Section        // project -> sections
	chunks   map[string][]store.ChunkDetail    // project -> chunks
}

func (x *kbIndex) visible(project, fileID, fileVersionID string) bool {
	for _, d := range x.docs[project] {
		if d.FileID == fileID {
			return !d.Deleted && d.FileVersionID == fileVersionID
		}
	}
	return false
}

func (x *kbIndex) documentByID(project, fileID string) *store.DocumentDetail {
	for _, d := range x.docs[project] {
		if d.FileID == fileID {
			return &d
		}
	}
	return nil
}

func (x *kbIndex) live(project string) []store.Document {
	var out []store.Document
	for _, d := range x.docs[project] {
		if !d.Deleted && d.Branch == "" {
			out = append(out, d.Document)
		}
	}
	slices.SortFunc(out, func(a, b store.Document) int { return strings.Compare(a.FilePath, b.FilePath) })
	return out
}

func (x *kbIndex) folders(project string, limit int) []string {
	var out []string
	for _, d := range x.live(project) {
		if f := folderOf(d.FilePath); f != "" {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(limit, len(out))]
}

func (x *kbIndex) folderDocuments(project, folder string, offset, limit int) ([]store.Document, int) {
	var in []store.Document
	for _, d := range x.live(project) {
		if folderOf(d.FilePath) == folder {
			in = append(in, d)
		}
	}
	if limit <= 0 {
		return nil, len(in)
	}
	return in[min(offset, len(in)):min(offset+limit, len(in))], len(in)
}

func (x *kbIndex) sectionsOf(project, fv string, offset, limit int) []store.Section {
	var out []store.Section
	for _, s := range x.sections[project] {
		if s.FileVersionID == fv {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b store.Section) int { return a.Ordinal - b.Ordinal })
	return out[min(offset, len(out)):min(offset+limit, len(out))]
}

func (x *kbIndex) getSection(project, id string) *store.Section {
	for _, s := range x.sections[project] {
		if s.ID == id && x.visible(project, s.FileID, s.FileVersionID) {
			return &s
		}
	}
	return nil
}

func (x *kbIndex) getChunk(project, id string) *store.ChunkDetail {
	for _, c := range x.chunks[project] {
		if c.ID == id && x.visible(project, c.FileID, c.FileVersionID) {
			return &c
		}
	}
	return nil
}

func (x *kbIndex) selectChunks(project string, q store.ChunkQuery) []store.ChunkDetail {
	var out []store.ChunkDetail
	for _, c := range x.chunks[project] {
		inRange := c.Index >= q.From && (q.To < 0 || c.Index <= q.To)
		if (q.FileVersionID == "" && q.SectionID == "") || (q.FileVersionID != "" && c.FileVersionID != q.FileVersionID) ||
			(q.SectionID != "" && c.SectionID != q.SectionID) ||
			!(inRange || (q.AlsoSectionID != "" && c.SectionID == q.AlsoSectionID)) {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b store.ChunkDetail) int { return a.Index - b.Index })
	return out
}

func (x *kbIndex) chunkDetails(project string, q store.ChunkQuery) []store.ChunkDetail {
	if q.Limit <= 0 {
		return nil
	}
	all := x.selectChunks(project, q)
	return all[min(q.Offset, len(all)):min(q.Offset+min(q.Limit, store.MaxChunkQuery), len(all))]
}

// kb views the fakeReader's data (tools_test.go index()) as a kbIndex:
// chunks are text, and each section_id the chunks carry is a section.
func (f *fakeReader) kb() *kbIndex {
	x := &kbIndex{docs: map[string][]store.DocumentDetail{}, sections: map[string][]store.Section{}, chunks: map[string][]store.ChunkDetail{}}
	for p, docs := range f.docs {
		for _, d := range docs {
			x.docs[p] = append(x.docs[p], store.DocumentDetail{Document: d})
		}
	}
	for p, cs := range f.chunks {
		bySection := map[string]int{}
		for _, c := range cs {
			x.chunks[p] = append(x.chunks[p], store.ChunkDetail{Chunk: c, Kind: "text"})
			if c.SectionID == "" {
				continue
			}
			i, ok := bySection[c.SectionID]
			if !ok {
				i = len(x.sections[p])
				bySection[c.SectionID] = i
				x.sections[p] = append(x.sections[p], store.Section{ID: c.SectionID, FileID: c.FileID, FileVersionID: c.FileVersionID,
					FilePath: c.FilePath, Branch: c.Branch, Ordinal: i, HeadingPath: c.HeadingPath})
			}
			x.sections[p][i].TokenCount += c.TokenCount
			x.sections[p][i].ChunkCount++
		}
	}
	return x
}

func (f *fakeReader) DocumentByID(_ context.Context, p, id string) (*store.DocumentDetail, error) {
	return f.kb().documentByID(p, id), nil
}
func (f *fakeReader) Folders(_ context.Context, p string, limit int) ([]string, error) {
	return f.kb().folders(p, limit), nil
}
func (f *fakeReader) FolderDocuments(_ context.Context, p, folder string, offset, limit int) ([]store.Document, int, error) {
	docs, n := f.kb().folderDocuments(p, folder, offset, limit)
	return docs, n, nil
}
func (f *fakeReader) Sections(_ context.Context, p, fv string, _ int64, offset, limit int) ([]store.Section, error) {
	return f.kb().sectionsOf(p, fv, offset, limit), nil
}
func (f *fakeReader) GetSection(_ context.Context, p, id string, _ int64) (*store.Section, error) {
	return f.kb().getSection(p, id), nil
}
func (f *fakeReader) GetChunkDetail(_ context.Context, p, id string, _ int64) (*store.ChunkDetail, error) {
	return f.kb().getChunk(p, id), nil
}
func (f *fakeReader) ChunkDetails(_ context.Context, p string, q store.ChunkQuery) ([]store.ChunkDetail, error) {
	return f.kb().chunkDetails(p, q), nil
}
func (f *fakeReader) CountChunks(_ context.Context, p string, q store.ChunkQuery) (int, error) {
	return len(f.kb().selectChunks(p, q)), nil
}

// kbReader is a fakeReader over a richer kbIndex: the older methods read
// the same documents and chunks, the Knowledge Stack ones the kbIndex.
type kbReader struct {
	*fakeReader
	x *kbIndex
}

func newKBReader(x *kbIndex) *kbReader {
	f := &fakeReader{docs: map[string][]store.Document{}, chunks: map[string][]store.Chunk{}}
	for p, docs := range x.docs {
		for _, d := range docs {
			f.docs[p] = append(f.docs[p], d.Document)
		}
	}
	for p, cs := range x.chunks {
		for _, c := range cs {
			f.chunks[p] = append(f.chunks[p], c.Chunk)
		}
	}
	return &kbReader{fakeReader: f, x: x}
}

// weaviateWindow is Weaviate's default QUERY_MAXIMUM_RESULTS: a query with
// offset+limit past it fails, so the fake refuses it too.
const weaviateWindow = 10000

func windowErr(offset, limit int) error {
	if offset+limit > weaviateWindow {
		return fmt.Errorf("query maximum results exceeded: offset %d + limit %d", offset, limit)
	}
	return nil
}

func (r *kbReader) AllDocuments(ctx context.Context, p string, where *store.Where, limit int) ([]store.Document, error) {
	if err := windowErr(0, limit); err != nil {
		return nil, err
	}
	return r.fakeReader.AllDocuments(ctx, p, where, limit)
}

func (r *kbReader) DocumentByID(_ context.Context, p, id string) (*store.DocumentDetail, error) {
	return r.x.documentByID(p, id), nil
}
func (r *kbReader) Folders(_ context.Context, p string, limit int) ([]string, error) {
	return r.x.folders(p, limit), nil
}
func (r *kbReader) FolderDocuments(_ context.Context, p, folder string, offset, limit int) ([]store.Document, int, error) {
	if err := windowErr(offset, limit); err != nil {
		return nil, 0, err
	}
	docs, n := r.x.folderDocuments(p, folder, offset, limit)
	return docs, n, nil
}
func (r *kbReader) Sections(_ context.Context, p, fv string, _ int64, offset, limit int) ([]store.Section, error) {
	if err := windowErr(offset, limit); err != nil {
		return nil, err
	}
	return r.x.sectionsOf(p, fv, offset, limit), nil
}
func (r *kbReader) GetSection(_ context.Context, p, id string, _ int64) (*store.Section, error) {
	return r.x.getSection(p, id), nil
}
func (r *kbReader) GetChunkDetail(_ context.Context, p, id string, _ int64) (*store.ChunkDetail, error) {
	return r.x.getChunk(p, id), nil
}
func (r *kbReader) ChunkDetails(_ context.Context, p string, q store.ChunkQuery) ([]store.ChunkDetail, error) {
	if err := windowErr(q.Offset, q.Limit); err != nil {
		return nil, err
	}
	return r.x.chunkDetails(p, q), nil
}
func (r *kbReader) CountChunks(_ context.Context, p string, q store.ChunkQuery) (int, error) {
	return len(r.x.selectChunks(p, q)), nil
}

// fakeImages serves pictures from memory.
type fakeImages struct {
	data  map[string][]byte
	reads []string
}

func (f *fakeImages) ReadImage(_ context.Context, ref string, maxBytes int64) ([]byte, error) {
	f.reads = append(f.reads, ref)
	b, ok := f.data[ref]
	switch {
	case !ok:
		return nil, errors.New("no such object")
	case int64(len(b)) > maxBytes:
		return nil, store.ErrImageTooLarge
	}
	return b, nil
}

func pngBytes() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// fixture ids and names the tests refer to.
type kbFixture struct {
	x                                      *kbIndex
	readme, guide, ref, broken, q4, oldDoc string // acme file ids
	guideFV, guideOldFV, refFV             string
	guideSecs                              []string // Guide, Install, Usage
	refSec                                 string
	imageChunk, tableChunk                 string
	oldChunk, oldSection                   string // of guide.md's replaced version
	betaDoc, betaSection, betaChunk        string
	imageRef                               string
}

// addFile adds an indexed file with sections of the given token counts and
// chunk counts; the chunks share their section's tokens evenly.
func (x *kbIndex) addFile(project, branch, path, fv string, secs []fixtureSection) (string, []string, []string) {
	fileID := ids.File(project, branch, path)
	var secIDs, chunkIDs []string
	index := 0
	for ord, s := range secs {
		sid := ids.Section(fv, ord)
		secIDs = append(secIDs, sid)
		x.sections[project] = append(x.sections[project], store.Section{ID: sid, FileID: fileID, FileVersionID: fv, FilePath: path,
			Branch: branch, Ordinal: ord, Title: s.title, HeadingPath: s.heading, Level: len(s.heading), TokenCount: s.tokens,
			ChunkCount: s.chunks, PageStart: s.page, PageEnd: s.page})
		for i := range s.chunks {
			cid := ids.Chunk(fv, index)
			chunkIDs = append(chunkIDs, cid)
			tokens := 0
			if s.chunks > 0 {
				tokens = s.tokens / s.chunks
			}
			x.chunks[project] = append(x.chunks[project], store.ChunkDetail{Chunk: store.Chunk{ID: cid, Project: project, FileID: fileID,
				FileVersionID: fv, FilePath: path, Branch: branch, Index: index, Content: fmt.Sprintf("%s %s part %d", path, s.title, i),
				StartOffset: index * 100, EndOffset: index*100 + 100, TokenCount: tokens, SectionID: sid, HeadingPath: s.heading},
				Kind: "text", PageStart: s.page, PageEnd: s.page})
			index++
		}
	}
	return fileID, secIDs, chunkIDs
}

type fixtureSection struct {
	title   string
	heading []string
	tokens  int
	chunks  int
	page    int
}

func (x *kbIndex) addDoc(project, branch, path, fv, status, errText string, deleted bool, chunks, sections, tokens int) {
	x.docs[project] = append(x.docs[project], store.DocumentDetail{Document: store.Document{
		FileID: ids.File(project, branch, path), FilePath: path, Name: baseName(path), Folder: folderOf(path), Branch: branch,
		FileVersionID: fv, Status: status, Error: errText, Deleted: deleted, ChunkCount: chunks, Title: baseName(path),
		DocumentInfo: store.DocumentInfo{Format: formatOf(path), UpdatedAt: "2026-11-22T00:00:00Z"},
	}, SectionCount: sections, TokenCount: tokens})
}

func formatOf(path string) string {
	switch {
	case strings.HasSuffix(path, ".md"):
		return "markdown"
	case strings.HasSuffix(strings.ToLower(path), ".pdf"):
		return "pdf"
	case strings.HasSuffix(path, ".docx"):
		return "docx"
	}
	return "text"
}

// newKBFixture builds acme and beta:
//
//	acme/README.md                   40 tokens, 1 section, 2 chunks: inline
//	acme/docs/guide.md               Guide 100 / Install 300 / Usage 1800 = 2200 tokens: a TOC at 2,000
//	                                 (and a replaced older version)
//	acme/docs/api/Reference.PDF      no statistics; an image chunk (page 2) and a table chunk
//	acme/docs/broken.docx            failed
//	acme/docs/old.md                 deleted
//	acme/archive/2024/Q4 Analysis.md
//	acme@preview/docs/guide.md       a branch file (not navigated)
//	beta/secret/guide-beta.md
func newKBFixture() *kbFixture {
	x := &kbIndex{docs: map[string][]store.DocumentDetail{}, sections: map[string][]store.Section{}, chunks: map[string][]store.ChunkDetail{}}
	f := &kbFixture{x: x}
	fv := func(project, branch, path, v string) string {
		return ids.FileVersion(ids.File(project, branch, path), v, v)
	}

	readmeFV := fv("acme", "", "README.md", "1")
	f.readme, _, _ = x.addFile("acme", "", "README.md", readmeFV, []fixtureSection{{title: "Acme", heading: []string{"Acme"}, tokens: 40, chunks: 2}})
	x.addDoc("acme", "", "README.md", readmeFV, pipeline.StatusIndexed, "", false, 2, 1, 40)

	f.guideOldFV = fv("acme", "", "docs/guide.md", "old")
	_, oldSecs, oldChunks := x.addFile("acme", "", "docs/guide.md", f.guideOldFV, []fixtureSection{{title: "Old", heading: []string{"Old"}, tokens: 10, chunks: 1}})
	f.oldSection, f.oldChunk = oldSecs[0], oldChunks[0]
	f.guideFV = fv("acme", "", "docs/guide.md", "2")
	f.guide, f.guideSecs, _ = x.addFile("acme", "", "docs/guide.md", f.guideFV, []fixtureSection{
		{title: "Guide", heading: []string{"Guide"}, tokens: 100, chunks: 1},
		{title: "Install", heading: []string{"Guide", "Install"}, tokens: 300, chunks: 3},
		{title: "Usage", heading: []string{"Guide", "Usage"}, tokens: 1800, chunks: 6},
	})
	x.addDoc("acme", "", "docs/guide.md", f.guideFV, pipeline.StatusIndexed, "", false, 10, 3, 2200)

	f.refFV = fv("acme", "", "docs/api/Reference.PDF", "1")
	var refSecs, refChunks []string
	f.ref, refSecs, refChunks = x.addFile("acme", "", "docs/api/Reference.PDF", f.refFV, []fixtureSection{{title: "Figures", heading: []string{"Figures"}, tokens: 0, chunks: 3, page: 2}})
	f.refSec, f.imageChunk, f.tableChunk = refSecs[0], refChunks[1], refChunks[2]
	f.imageRef = "strata-assets/acme/" + f.refFV + "/fig1.png"
	for i := range x.chunks["acme"] {
		c := &x.chunks["acme"][i]
		switch c.ID {
		case f.imageChunk:
			c.Kind, c.ImageRef, c.ImageMIME, c.Content = "image", f.imageRef, "image/png", "Figure 1: architecture diagram"
		case f.tableChunk:
			c.Kind = "table"
		}
	}
	x.addDoc("acme", "", "docs/api/Reference.PDF", f.refFV, pipeline.StatusIndexed, "", false, 3, 1, 0)

	x.addDoc("acme", "", "docs/broken.docx", fv("acme", "", "docs/broken.docx", "1"), pipeline.StatusFailed, "zip: not a valid zip file", false, 0, 0, 0)
	f.broken = ids.File("acme", "", "docs/broken.docx")
	x.addDoc("acme", "", "docs/old.md", fv("acme", "", "docs/old.md", "del"), "deleted", "", true, 0, 0, 0)
	f.oldDoc = ids.File("acme", "", "docs/old.md")

	q4FV := fv("acme", "", "archive/2024/Q4 Analysis.md", "1")
	f.q4, _, _ = x.addFile("acme", "", "archive/2024/Q4 Analysis.md", q4FV, []fixtureSection{{title: "Q4", heading: []string{"Q4"}, tokens: 20, chunks: 1}})
	x.addDoc("acme", "", "archive/2024/Q4 Analysis.md", q4FV, pipeline.StatusIndexed, "", false, 1, 1, 20)

	prevFV := fv("acme", "preview", "docs/guide.md", "1")
	x.addFile("acme", "preview", "docs/guide.md", prevFV, []fixtureSection{{title: "Preview", tokens: 5, chunks: 1}})
	x.addDoc("acme", "preview", "docs/guide.md", prevFV, pipeline.StatusIndexed, "", false, 1, 1, 5)
	x.addDoc("acme", "preview", "preview-only/draft.md", fv("acme", "preview", "preview-only/draft.md", "1"), pipeline.StatusIndexed, "", false, 0, 0, 0)

	betaFV := fv("beta", "", "secret/guide-beta.md", "1")
	var betaSecs, betaChunks []string
	f.betaDoc, betaSecs, betaChunks = x.addFile("beta", "", "secret/guide-beta.md", betaFV, []fixtureSection{{title: "Beta", heading: []string{"Beta"}, tokens: 10, chunks: 1}})
	f.betaSection, f.betaChunk = betaSecs[0], betaChunks[0]
	x.addDoc("beta", "", "secret/guide-beta.md", betaFV, pipeline.StatusIndexed, "", false, 1, 1, 10)
	return f
}
