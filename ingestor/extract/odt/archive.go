package odt

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// maxEntries bounds the zip central directory we walk; a document
	// with its pictures has a few dozen entries.
	maxEntries = 10000
	// maxRatio is the most an entry may expand over its compressed size
	// once past ratioFloor. Real ODF XML compresses 5 to 30 times;
	// deflate's own ceiling is about 1030, which only a bomb of repeated
	// bytes reaches. It stops a bomb that stays under MaxUncompressed.
	maxRatio   = 200
	ratioFloor = 1 << 20
)

// archive is the zip of an ODT, read from memory. Every byte
// decompressed counts against budget (Limits.MaxUncompressed).
type archive struct {
	ctx    context.Context
	files  map[string]*zip.File // by name, "\" made "/"
	budget int64                // uncompressed bytes still allowed
	limit  int64                // Limits.MaxUncompressed, for messages
}

// openArchive reads the central directory.
func openArchive(ctx context.Context, data []byte, maxUncompressed int64) (*archive, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	// Insecure names (../, absolute) do not matter: nothing is written to
	// disk, and only names inside the zip are looked up.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: not a zip archive: %w", extract.ErrCorrupt, err)
	}
	if len(zr.File) > maxEntries {
		return nil, fmt.Errorf("%w: %d zip entries, more than %d", extract.ErrTooLarge, len(zr.File), maxEntries)
	}
	a := &archive{ctx: ctx, files: make(map[string]*zip.File, len(zr.File)), budget: maxUncompressed, limit: maxUncompressed}
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, "\\", "/")
		if _, dup := a.files[name]; !dup { // the first of duplicate names wins
			a.files[name] = f
		}
	}
	return a, nil
}

// open starts decompressing a part within the budget and the ratio
// limit; it fails at once when the part declares more than they allow.
// Close the reader to count its bytes against the budget.
func (a *archive) open(f *zip.File) (*partReader, error) {
	if f.Flags&0x1 != 0 {
		return nil, fmt.Errorf("%w: zip entry %s is encrypted", extract.ErrEncrypted, f.Name)
	}
	limit, ratioLimited := a.budget, false
	if f.Method != zip.Store {
		if r := max(ratioFloor, int64(min(f.CompressedSize64, math.MaxInt64/maxRatio))*maxRatio); r < limit {
			limit, ratioLimited = r, true
		}
	}
	p := &partReader{a: a, f: f, limit: limit, ratio: ratioLimited}
	if f.UncompressedSize64 > uint64(max(limit, 0)) {
		return nil, p.overError(fmt.Sprintf("declares %d bytes", f.UncompressedSize64))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: opening %s: %w", extract.ErrCorrupt, f.Name, err)
	}
	// Read at most one byte past the limit, so a part that lies about its
	// size costs no more than the limit.
	p.rc, p.r = rc, io.LimitReader(rc, limit+1)
	return p, nil
}

// partReader reads one part, failing once more bytes come out than its
// limit allows. Declared sizes can lie; the bytes produced are counted.
type partReader struct {
	a     *archive
	f     *zip.File
	rc    io.ReadCloser
	r     io.Reader
	limit int64
	ratio bool // limit is the ratio limit, not the budget
	n     int64
}

func (p *partReader) Read(b []byte) (int, error) {
	if err := p.a.ctx.Err(); err != nil {
		return 0, fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.n > p.limit {
		return 0, p.overError("expands further")
	}
	// archive/zip refuses to produce more than the declared size, with
	// ErrFormat; before that size is reached, the error can only mean the
	// entry is bigger than its header says.
	if errors.Is(err, zip.ErrFormat) && uint64(p.n) < p.f.UncompressedSize64 {
		return n, fmt.Errorf("%w: %s expands beyond its declared %d bytes", extract.ErrTooLarge, p.f.Name, p.f.UncompressedSize64)
	}
	if err != nil && err != io.EOF && !isExtractError(err) {
		return n, fmt.Errorf("%w: reading %s: %w", extract.ErrCorrupt, p.f.Name, err)
	}
	return n, err
}

// Close counts the bytes read against the archive's budget.
func (p *partReader) Close() error {
	p.a.budget -= p.n
	return p.rc.Close()
}

// overError says which limit a part broke.
func (p *partReader) overError(what string) error {
	if p.ratio {
		return fmt.Errorf("%w: %s %s, more than %d times its %d compressed bytes (a zip bomb)",
			extract.ErrTooLarge, p.f.Name, what, maxRatio, p.f.CompressedSize64)
	}
	return fmt.Errorf("%w: %s %s, beyond the %d bytes the archive may expand to (MaxUncompressed)",
		extract.ErrTooLarge, p.f.Name, what, p.a.limit)
}

// isExtractError reports whether err already wraps one of extract's
// sentinel errors, so it keeps its meaning.
func isExtractError(err error) bool {
	for _, s := range []error{extract.ErrTooLarge, extract.ErrTimeout, extract.ErrEncrypted, extract.ErrCorrupt, extract.ErrUnsupported} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
