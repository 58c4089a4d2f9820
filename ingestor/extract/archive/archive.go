// Package archive reads a ZIP archive as a person opens one: the list of
// its members, then for each member a heading that names its path and a
// line that says what it is. Each member is read by its own format's
// reader (package container: a PDF as a PDF, a DOCX as a DOCX, a ZIP
// inside as an archive, at most container.MaxDepth deep) into a document
// of its own, a member of the archive's at its path: <archive>//<path>. A
// member's path is made safe (container.MemberPath: "../../etc/passwd" is
// "etc/passwd") and unique among the archive's members; nothing is ever
// written anywhere.
//
// What is not read is said under the member's heading and in the
// archive's warnings, and the rest is read: a member that expands past
// what the archive has left of Limits.MaxUncompressed (a zip bomb), one
// that is encrypted, empty, corrupt or of a format not read, the members
// after container.MaxMembers, and those the archive's time did not reach.
package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/container"
)

// Format is the format name of a ZIP archive that is no document format
// of its own (DOCX, XLSX, EPUB, ... are read by their readers).
const Format = "zip"

// Extractor reads ZIP archives.
type Extractor struct {
	// Member reads a member by its own format (the registry's Extract);
	// nil lists the members without reading them.
	Member container.Reader
}

// Extract reads one archive.
func (x Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	if err := container.Nested(ctx); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: zip archive whose directory cannot be read: %v", extract.ErrCorrupt, err)
	}
	r := &reading{x: x, ctx: ctx, lim: lim, b: extract.NewBuilder(Format).Within(lim)}
	title := container.MemberName(name)
	if title == "" {
		title = "archive"
	}
	r.b.SetTitle(title)
	r.b.Add(extract.Heading, 1, 0, title)
	files := r.members(zr.File)
	if err := r.contents(files); err != nil {
		return nil, err
	}
	for _, f := range files {
		if container.OutOfTime(ctx) {
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
			}
			r.b.Warn(fmt.Sprintf("members from %s on were not read: the archive's time ran out", f.path))
			break
		}
		heading := "Member: " + f.path
		if !container.Room(r.b, lim, heading) {
			r.b.Warn(container.Cut("members", f.path))
			break
		}
		if err := r.member(f, heading); err != nil {
			return nil, err
		}
	}
	if err := container.TooLong(r.b, r.lim); err != nil {
		return nil, err
	}
	return r.b.Finish()
}

// reading is one archive's extraction.
type reading struct {
	x        Extractor
	ctx      context.Context
	lim      extract.Limits
	b        *extract.Builder
	expanded int64 // bytes the members read so far expanded to (MaxUncompressed)
}

// file is a member: the archive's entry and its safe path.
type file struct {
	zf   *zip.File
	path string
}

// members are the archive's files (not its folders), in its order, at
// most container.MaxMembers; an entry whose path is empty once made safe
// gets one from its place.
func (r *reading) members(all []*zip.File) []file {
	var files []file
	skipped := 0
	for i, zf := range all {
		if strings.HasSuffix(zf.Name, "/") || zf.FileInfo().IsDir() {
			continue
		}
		if len(files) == container.MaxMembers {
			skipped++
			continue
		}
		p := container.MemberPath(zf.Name)
		if p == "" {
			p = fmt.Sprintf("member %d", i+1)
		}
		files = append(files, file{zf: zf, path: p})
	}
	if skipped > 0 {
		r.b.Warn(fmt.Sprintf("%d members after the first %d were neither listed nor read", skipped, container.MaxMembers))
	}
	return files
}

// contents adds the member list: each member's path and size.
func (r *reading) contents(files []file) error {
	r.b.Add(extract.Heading, 2, 0, "Contents")
	if len(files) == 0 {
		r.b.Add(extract.Paragraph, 0, 0, "(no files)")
		return r.b.Err()
	}
	var lines []string
	for _, f := range files {
		lines = append(lines, fmt.Sprintf("%s (%d bytes)", f.path, f.zf.UncompressedSize64))
	}
	r.b.Add(extract.Paragraph, 0, 0, strings.Join(lines, "\n"))
	if err := container.TooLong(r.b, r.lim); err != nil {
		return err
	}
	return r.b.Err()
}

// member adds a member's heading and the line that says what it is, and
// the member, read by its own reader, at its path; or why it was not read.
func (r *reading) member(f file, heading string) error {
	size := f.zf.UncompressedSize64
	switch {
	case r.x.Member == nil:
		r.b.Add(extract.Heading, 2, 0, heading)
		r.b.Add(extract.Paragraph, 0, 0, fmt.Sprintf("%d bytes (not read)", size))
		return r.b.Err()
	case size == 0:
		r.b.Add(extract.Heading, 2, 0, heading)
		r.b.Add(extract.Paragraph, 0, 0, "(empty)")
		return r.b.Err()
	}
	data, why := r.open(f)
	why = container.Reason(why)
	if why == "" {
		doc, reason, err := container.Read(r.ctx, r.x.Member, data, f.path, container.Left(r.ctx, r.lim, r.b, r.expanded))
		switch {
		case err != nil:
			return err
		case doc == nil:
			why = reason
		case container.AddMember(r.b, r.lim, 2, heading, fmt.Sprintf("%s, %d bytes", doc.Format, size), f.path, doc):
			return r.b.Err()
		default:
			why = "it does not fit what the archive has left of its text and budget (MaxTextBytes or MaxFileBytes)"
		}
	}
	container.NotRead(r.b, r.lim, 2, heading, fmt.Sprintf("%d bytes, not read: %s", size, why))
	r.b.Warn(fmt.Sprintf("member %s not read: %s", f.path, why))
	return r.b.Err()
}

// open reads a member's bytes within what the archive has left to expand
// to, or says why it cannot.
func (r *reading) open(f file) (data []byte, why string) {
	if f.zf.Flags&0x1 != 0 {
		return nil, "encrypted"
	}
	budget := int64(1 << 62)
	if r.lim.MaxUncompressed > 0 {
		budget = r.lim.MaxUncompressed - r.expanded
	}
	if f.zf.UncompressedSize64 > uint64(max(budget, 0)) {
		return nil, fmt.Sprintf("expands to %d bytes, past the %d the archive has left (MaxUncompressed)", f.zf.UncompressedSize64, max(budget, 0))
	}
	rc, err := f.zf.Open()
	if err != nil {
		return nil, fmt.Sprintf("cannot be opened: %v", err)
	}
	defer rc.Close()
	// Held at its declared size from the start (no doubling as it grows),
	// but never more than its compressed bytes can expand to: a size may
	// lie. A member whose bytes pass its declared size is refused by
	// archive/zip as they pass it (ErrFormat), and the read stops one byte
	// past the budget whatever it declares.
	buf := bytes.NewBuffer(make([]byte, 0, prealloc(f.zf)+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(rc, budget+1))
	if int64(buf.Len()) > budget {
		return nil, fmt.Sprintf("expands past the %d bytes the archive has left (MaxUncompressed)", budget)
	}
	if err != nil {
		return nil, fmt.Sprintf("corrupt: %v", err)
	}
	r.expanded += int64(buf.Len())
	return buf.Bytes(), ""
}

// maxPrealloc bounds what a member's declared size makes held before a
// byte is read (without a MaxUncompressed, a size may declare anything).
const maxPrealloc = 64 << 20

// maxDeflateRatio is the most DEFLATE expands (RFC 1951: 258 bytes from
// 2 bits, about 1,032 to 1).
const maxDeflateRatio = 1032

// prealloc is what a member's buffer starts at: its declared size, at most
// what its compressed bytes can expand to and maxPrealloc.
func prealloc(f *zip.File) uint64 {
	most := f.CompressedSize64
	if f.Method != zip.Store {
		most *= maxDeflateRatio
	}
	return min(f.UncompressedSize64, most, maxPrealloc)
}
