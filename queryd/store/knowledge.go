package store

// Reads behind Knowledge Stack's navigation tools (list_contents, find,
// get_info, read, read_around, view_chunk_image): one document by id, the
// folders and folder contents of main, the sections of a file version, and
// chunks with their structure (kind, pages, image). Every query is bounded by
// a limit and built with filter builders; no caller text is spliced into a
// query. Sections and chunks are read as of a commit sequence: objects of a
// version replaced or deleted by then are never returned.

import (
	"io"

	"context"
	"errors"
	"fmt"
	"github.com/minio/minio-go/v7"
	"slices"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// Section is a heading-delimited part of a file version, with the statistics
// adaptive reads decide by. A TokenCount of 0 means the statistics are missing.
type Section struct {
	ID            string
	FileID        string
	FileVersionID string
	FilePath      string
	Branch        string
	Ordinal       int
	Title         string
	HeadingPath   []string
	Level         int
	StartOffset   int
	EndOffset     int
	TokenCount    int
	ChunkCount    int
	PageStart     int
	PageEnd       int
	ValidFrom     int64
}

// ChunkDetail is a chunk with its structure.
type ChunkDetail struct {
	Chunk
	Kind      string // text, code, table or image
	PageStart int
	PageEnd   int
	ImageRef  string // "<bucket>/<key>" of the chunk's picture; "" when it has none
	ImageMIME string
	ValidFrom int64
	// Section is the chunk's section as the chunk records it (same version):
	// ID, title, heading path, ordinal, token and chunk counts only; nil when
	// the chunk predates these fields (read the Section object instead).
	Section *Section
}

// DocumentDetail is a document's current state with its statistics.
type DocumentDetail struct {
	Document
	SectionCount int
	TokenCount   int
	Pages        int
	Language     string
}

// ChunkQuery selects chunks of one file version, ordered by index.
type ChunkQuery struct {
	// FileVersionID is required unless SectionID is set: a section's id
	// derives from its version's (ids.Section), so it alone selects them.
	FileVersionID string
	SectionID     string // "" = every section
	From          int    // lowest index (inclusive)
	To            int    // highest index (inclusive); < 0 = no upper bound
	// AlsoSectionID widens the selection: the index range OR this section's
	// chunks (SectionID must be ""), so read_around gets a window and its
	// section in one query.
	AlsoSectionID string
	Offset        int
	Limit         int   // at most MaxChunkQuery; counts ignore Offset and Limit
	At            int64 // commit sequence the read is as of
}

// MaxChunkQuery bounds one chunk query.
const MaxChunkQuery = 1000

// ErrImageTooLarge is what an image reader returns for a picture over its size bound.
var ErrImageTooLarge = errors.New("image is larger than the size limit")

// Images reads image chunks' pictures from MinIO / S3.
type Images struct{ Client *minio.Client }

// ReadImage reads the object an image_ref names, refusing pictures over maxBytes.
func (im Images) ReadImage(ctx context.Context, ref string, maxBytes int64) ([]byte, error) {
	bucket, key, err := ParseImageRef(ref)
	if err != nil {
		return nil, err
	}
	obj, err := im.Client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", ref, err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", ref, err)
	}
	if st.Size > maxBytes {
		return nil, fmt.Errorf("%s: %d bytes: %w", ref, st.Size, ErrImageTooLarge)
	}
	// Read one byte past the bound so a size that lied cannot exceed it.
	data, err := io.ReadAll(io.LimitReader(obj, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read image %s: %w", ref, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("%s: %w", ref, ErrImageTooLarge)
	}
	return data, nil
}

// ParseImageRef splits an image_ref "<bucket>/<key>" into its bucket and key.
func ParseImageRef(ref string) (bucket, key string, err error) {
	bucket, key, ok := strings.Cut(ref, "/")
	if !ok || bucket == "" || key == "" || strings.HasPrefix(key, "/") || slices.Contains(strings.Split(key, "/"), "..") {
		return "", "", fmt.Errorf("invalid image ref %q", ref)
	}
	return bucket, key, nil
}

var sectionFields = []graphql.Field{
	{Name: "file_id"}, {Name: "file_version_id"}, {Name: "file_path"}, {Name: "branch"}, {Name: "ordinal"},
	{Name: "title"}, {Name: "heading_path"}, {Name: "level"}, {Name: "start_offset"}, {Name: "end_offset"},
	{Name: "token_count"}, {Name: "chunk_count"}, {Name: "page_start"}, {Name: "page_end"}, {Name: "valid_from"},
	{Name: "_additional", Fields: []graphql.Field{{Name: "id"}}},
}

var chunkDetailFields = append(slices.Clone(chunkFields),
	graphql.Field{Name: "kind"}, graphql.Field{Name: "page_start"}, graphql.Field{Name: "page_end"},
	graphql.Field{Name: "image_ref"}, graphql.Field{Name: "image_mime"}, graphql.Field{Name: "valid_from"},
	graphql.Field{Name: "section_title"}, graphql.Field{Name: "section_heading_path"}, graphql.Field{Name: "section_ordinal"})

func intGE(path string, v int) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.GreaterThanEqual).WithValueInt(int64(v))
}

func intLEi(path string, v int) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.LessThanEqual).WithValueInt(int64(v))
}

// mainLive matches the live (not deleted) documents of main.
func mainLive() *filters.WhereBuilder { return wvquery.And(notDeleted(), eq("branch", "")) }

// DocumentByID returns the current state of the document with file_id fileID
// (any branch, tombstones included), or nil.
func (s *Store) DocumentByID(ctx context.Context, project, fileID string) (*DocumentDetail, error) {
	// An id the catalog has no version of is no document of the project
	// (read and get_info try an id as a document first): no round trip.
	if s.catalog.neverCommitted(ctx, project, fileID) {
		return nil, nil
	}
	// A document's object id is its file id: one REST GET.
	o, err := s.objectByID(ctx, schema.DocumentClass, project, fileID)
	if err != nil || o == nil {
		return nil, err
	}
	r := rowOf(o)
	return &DocumentDetail{
		Document: documentOf(r), SectionCount: wvquery.Int(r, "section_count"), TokenCount: wvquery.Int(r, "token_count"),
		Pages: wvquery.Int(r, "pages"), Language: wvquery.Str(r, "language"),
	}, nil
}

// documentOf is the Document of a row, from whichever of its fields the
// query asked for (the others stay zero).
func documentOf(r map[string]any) Document {
	d := Document{
		FileID: wvquery.Str(r, "file_id"), FilePath: wvquery.Str(r, "file_path"), Name: wvquery.Str(r, "name"), Folder: wvquery.Str(r, "folder"),
		Branch: wvquery.Str(r, "branch"), FileVersionID: wvquery.Str(r, "file_version_id"), Title: wvquery.Str(r, "title"),
		Status: wvquery.Str(r, "status"), Error: wvquery.Str(r, "error"), Deleted: r["deleted"] == true, ChunkCount: wvquery.Int(r, "chunk_count"),
		AccessError: wvquery.Str(r, "access_error"), Readers: wvquery.Strs(r, schema.ReadersProperty),
		DocumentInfo: DocumentInfo{Format: wvquery.Str(r, "format"), UpdatedAt: wvquery.Str(r, "updated_at"), IngestedAt: wvquery.Str(r, "ingested_at")},
	}
	if d.FilePath != "" {
		// From the path, as the catalog's (documentOfVersion): whatever
		// the index holds, a member's folder is its container's path.
		d.Folder, d.Name = folderOfPath(d.FilePath), baseOf(d.FilePath)
	}
	d.Metadata, d.MetadataWarnings = metadataOf(r)
	return d
}

// Folders lists the distinct folders ("docs", "docs/api") that hold live
// documents on main, at most limit of them; ancestors that hold only folders
// are not listed (callers derive them). The project root ("") is not listed.
func (s *Store) Folders(ctx context.Context, project string, limit int) ([]string, error) {
	resp, err := s.wv.GraphQL().Aggregate().WithClassName(schema.DocumentClass).WithTenant(project).
		WithWhere(s.withReaders(ctx, project, schema.DocumentClass, mainLive())).WithGroupBy("folder").WithLimit(limit).
		WithFields(graphql.Field{Name: "groupedBy", Fields: []graphql.Field{{Name: "value"}}},
			graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}}).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("folders of %s: %w", project, err)
	}
	if missing, err := graphQLError(resp.Errors, "folders of %s", project); missing || err != nil {
		if err != nil {
			return nil, err
		}
		return nil, nil // no index for this project yet
	}
	agg, _ := resp.Data["Aggregate"].(map[string]any)
	list, _ := agg[schema.DocumentClass].([]any)
	var out []string
	for _, item := range list {
		m, _ := item.(map[string]any)
		g, _ := m["groupedBy"].(map[string]any)
		if f, ok := g["value"].(string); ok && f != "" {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FolderDocuments lists the live documents of main directly in folder ("" =
// the project root), any status, sorted by path, from offset, at most limit
// (0 = none: count only), and how many there are in all.
func (s *Store) FolderDocuments(ctx context.Context, project, folder string, offset, limit int) ([]Document, int, error) {
	where := wvquery.And(mainLive(), eq("folder", folder))
	counts, err := s.aggregate(ctx, schema.DocumentClass, project, where, "")
	if err != nil {
		return nil, 0, err
	}
	total := counts[""]
	if limit <= 0 || offset >= total {
		return nil, total, nil
	}
	rows, err := s.get(ctx, schema.DocumentClass, project, listDocumentFields, where, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		return g.WithSort(graphql.Sort{Path: []string{"file_path"}, Order: graphql.Asc}).
			WithOffset(offset).WithLimit(limit)
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]Document, 0, len(rows))
	for _, r := range rows {
		out = append(out, documentOf(r))
	}
	return out, total, nil
}

// Sections lists the sections of a file version committed by sequence at,
// ordered by ordinal, from offset, at most limit.
func (s *Store) Sections(ctx context.Context, project, fileVersionID string, at int64, offset, limit int) ([]Section, error) {
	rows, err := s.find(ctx, schema.SectionClass, project, sectionFields, getQuery{where: wvquery.And(eq("file_version_id", fileVersionID), intLE("valid_from", at)),
		sort: []graphql.Sort{{Path: []string{"ordinal"}, Order: graphql.Asc}}, offset: offset, limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Section, 0, len(rows))
	for _, r := range rows {
		out = append(out, sectionOf(r))
	}
	return out, nil
}

// GetSection returns a section of the version visible as of sequence at, or nil.
func (s *Store) GetSection(ctx context.Context, project, id string, at int64) (*Section, error) {
	row, err := s.rowByID(ctx, schema.SectionClass, project, id, at)
	if err != nil || row == nil {
		return nil, err
	}
	sec := sectionOf(row)
	latest, err := s.LatestVersions(ctx, project, []string{sec.FileID}, at)
	if err != nil || latest[sec.FileID] != sec.FileVersionID {
		return nil, err // a replaced or deleted version's section is not current
	}
	return &sec, nil
}

// GetChunkDetail returns a chunk of the version visible as of sequence at, or nil.
func (s *Store) GetChunkDetail(ctx context.Context, project, id string, at int64) (*ChunkDetail, error) {
	row, err := s.rowByID(ctx, schema.ChunkClass, project, id, at)
	if err != nil || row == nil {
		return nil, err
	}
	c := chunkDetails(project, []map[string]any{row})[0]
	latest, err := s.LatestVersions(ctx, project, []string{c.FileID}, at)
	if err != nil || latest[c.FileID] != c.FileVersionID {
		return nil, err
	}
	return &c, nil
}

// ChunkDetails returns the chunks q selects, ordered by index. The caller
// names a version it found visible (VersionAt, GetSection, GetChunkDetail).
func (s *Store) ChunkDetails(ctx context.Context, project string, q ChunkQuery) ([]ChunkDetail, error) {
	if (q.FileVersionID == "" && q.SectionID == "") || q.Limit <= 0 {
		return nil, nil
	}
	rows, err := s.find(ctx, schema.ChunkClass, project, chunkDetailFields, getQuery{where: chunkQueryWhere(q),
		sort: []graphql.Sort{{Path: []string{"index"}, Order: graphql.Asc}}, offset: max(q.Offset, 0), limit: min(q.Limit, MaxChunkQuery)})
	if err != nil {
		return nil, err
	}
	return chunkDetails(project, rows), nil
}

// CountChunks counts the chunks q selects (Offset and Limit ignored).
func (s *Store) CountChunks(ctx context.Context, project string, q ChunkQuery) (int, error) {
	if q.FileVersionID == "" && q.SectionID == "" {
		return 0, nil
	}
	counts, err := s.aggregate(ctx, schema.ChunkClass, project, chunkQueryWhere(q), "")
	if err != nil {
		return 0, err
	}
	return counts[""], nil
}

func chunkQueryWhere(q ChunkQuery) *filters.WhereBuilder {
	var ws []*filters.WhereBuilder
	if q.FileVersionID != "" {
		ws = append(ws, eq("file_version_id", q.FileVersionID))
	}
	ws = append(ws, intLE("valid_from", q.At))
	if q.SectionID != "" {
		ws = append(ws, SectionFilter(q.SectionID))
	}
	var span []*filters.WhereBuilder
	switch {
	case q.From >= 0 && q.To >= q.From && q.To-q.From < maxIDWindow && ids.Valid(q.FileVersionID):
		span = append(span, chunkIDsIn(q.FileVersionID, q.From, q.To))
	default:
		if q.From > 0 {
			span = append(span, intGE("index", q.From))
		}
		if q.To >= 0 {
			span = append(span, intLEi("index", q.To))
		}
	}
	switch {
	case q.AlsoSectionID != "" && len(span) > 0:
		ws = append(ws, or(wvquery.And(span...), SectionFilter(q.AlsoSectionID)))
	case q.AlsoSectionID == "":
		ws = append(ws, span...)
	}
	return wvquery.And(ws...)
}

// maxIDWindow: a bounded index range of up to this many chunks is read by
// the chunks' ids, ids.Chunk(version, index) as the ingestor names them. An
// id lookup costs the same at any index size; a range on index first
// matches that range in every document (a tenth of all chunks at 1M) and
// only then narrows to the version.
const maxIDWindow = 256

// chunkIDsIn selects a version's chunks from index from to to (inclusive) by id.
func chunkIDsIn(fileVersionID string, from, to int) *filters.WhereBuilder {
	chunkIDs := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		chunkIDs = append(chunkIDs, ids.Chunk(fileVersionID, i))
	}
	return filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(chunkIDs...)
}

func sectionOf(r map[string]any) Section {
	add, _ := r["_additional"].(map[string]any)
	return Section{
		ID: wvquery.Str(add, "id"), FileID: wvquery.Str(r, "file_id"), FileVersionID: wvquery.Str(r, "file_version_id"), FilePath: wvquery.Str(r, "file_path"),
		Branch: wvquery.Str(r, "branch"), Ordinal: wvquery.Int(r, "ordinal"), Title: wvquery.Str(r, "title"), HeadingPath: wvquery.Strs(r, "heading_path"),
		Level: wvquery.Int(r, "level"), StartOffset: wvquery.Int(r, "start_offset"), EndOffset: wvquery.Int(r, "end_offset"),
		TokenCount: wvquery.Int(r, "token_count"), ChunkCount: wvquery.Int(r, "chunk_count"), PageStart: wvquery.Int(r, "page_start"),
		PageEnd: wvquery.Int(r, "page_end"), ValidFrom: int64(wvquery.Float(r, "valid_from")),
	}
}

func chunkDetails(project string, rows []map[string]any) []ChunkDetail {
	base := chunks(project, rows)
	out := make([]ChunkDetail, 0, len(rows))
	for i, r := range rows {
		d := ChunkDetail{
			Chunk: base[i], Kind: wvquery.Str(r, "kind"), PageStart: wvquery.Int(r, "page_start"), PageEnd: wvquery.Int(r, "page_end"),
			ImageRef: wvquery.Str(r, "image_ref"), ImageMIME: wvquery.Str(r, "image_mime"), ValidFrom: int64(wvquery.Float(r, "valid_from")),
		}
		if n := d.SectionChunks; n > 0 && d.SectionID != "" {
			d.Section = &Section{
				ID: d.SectionID, FileID: d.FileID, FileVersionID: d.FileVersionID, FilePath: d.FilePath, Branch: d.Branch,
				Ordinal: wvquery.Int(r, "section_ordinal"), Title: wvquery.Str(r, "section_title"), HeadingPath: wvquery.Strs(r, "section_heading_path"),
				TokenCount: d.SectionTokens, ChunkCount: n, ValidFrom: d.ValidFrom,
			}
		}
		out = append(out, d)
	}
	return out
}
