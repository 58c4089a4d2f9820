package epub

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// maxEntries bounds the zip central directory we walk; a long book
	// with its images has a few thousand entries.
	maxEntries = 20000
	// maxRatio is the most an entry may expand over its compressed size
	// once it is past ratioFloor. Real XHTML and XML compress 3 to 20
	// times; deflate's own ceiling is about 1030, which only a bomb of
	// repeated bytes reaches. It stops a bomb that stays under
	// MaxUncompressed from making the HTML parser build a huge tree.
	maxRatio   = 200
	ratioFloor = 1 << 20
)

// archive is the zip of an EPUB, read from memory. Every byte
// decompressed counts against budget (Limits.MaxUncompressed), so a part
// read twice counts twice and no sequence of reads can expand more.
type archive struct {
	ctx    context.Context
	files  map[string]*zip.File // by name as stored, "\" made "/"
	folded map[string]*zip.File // by lower-cased name
	budget int64                // uncompressed bytes still allowed
	limit  int64                // Limits.MaxUncompressed, for messages
}

// openArchive reads the central directory.
func openArchive(ctx context.Context, data []byte, maxUncompressed int64) (*archive, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	// Insecure names (../, absolute) do not matter: nothing is written to
	// disk, and names are only looked up (resolve keeps lookups inside).
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: not a zip archive: %w", extract.ErrCorrupt, err)
	}
	if len(zr.File) > maxEntries {
		return nil, fmt.Errorf("%w: %d zip entries, more than %d", extract.ErrTooLarge, len(zr.File), maxEntries)
	}
	a := &archive{
		ctx:    ctx,
		files:  make(map[string]*zip.File, len(zr.File)),
		folded: make(map[string]*zip.File, len(zr.File)),
		budget: maxUncompressed,
		limit:  maxUncompressed,
	}
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, "\\", "/")
		if _, dup := a.files[name]; !dup { // the first of duplicate names wins
			a.files[name] = f
		}
		if _, dup := a.folded[strings.ToLower(name)]; !dup {
			a.folded[strings.ToLower(name)] = f
		}
	}
	return a, nil
}

// lookup finds a part by its name in the zip. OCF names are
// case-sensitive, but books made on case-insensitive file systems often
// refer to "Chapter1.xhtml" stored as "chapter1.xhtml"; the exact name
// wins.
func (a *archive) lookup(name string) *zip.File {
	if f := a.files[name]; f != nil {
		return f
	}
	return a.folded[strings.ToLower(name)]
}

// read decompresses a whole part within the budget, the ratio limit and
// the context.
func (a *archive) read(f *zip.File) ([]byte, error) {
	if f.Flags&0x1 != 0 {
		return nil, fmt.Errorf("%w: zip entry %s is encrypted", extract.ErrEncrypted, f.Name)
	}
	limit, ratioLimited := a.budget, false
	if f.Method != zip.Store {
		if r := max(ratioFloor, int64(min(f.CompressedSize64, math.MaxInt64/maxRatio))*maxRatio); r < limit {
			limit, ratioLimited = r, true
		}
	}
	if f.UncompressedSize64 > uint64(max(limit, 0)) {
		return nil, a.overError(f, ratioLimited, fmt.Sprintf("declares %d bytes", f.UncompressedSize64))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: opening %s: %w", extract.ErrCorrupt, f.Name, err)
	}
	defer rc.Close()
	// Read at most one byte past the limit, so a part that lies about its
	// size costs no more than the limit.
	r := io.LimitReader(rc, limit+1)
	buf := bytes.NewBuffer(make([]byte, 0, min(f.UncompressedSize64, uint64(limit))+1))
	chunk := make([]byte, 32<<10)
	for {
		if err := a.ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, err)
		}
		n, err := r.Read(chunk)
		buf.Write(chunk[:n])
		a.budget -= int64(n)
		if int64(buf.Len()) > limit {
			return nil, a.overError(f, ratioLimited, "expands further")
		}
		if err == io.EOF {
			return buf.Bytes(), nil
		}
		if err != nil {
			// archive/zip refuses to produce more than the declared size,
			// with ErrFormat; before that size is reached, the error can
			// only mean the entry is bigger than its header says.
			if errors.Is(err, zip.ErrFormat) && uint64(buf.Len()) < f.UncompressedSize64 {
				return nil, fmt.Errorf("%w: %s expands beyond its declared %d bytes", extract.ErrTooLarge, f.Name, f.UncompressedSize64)
			}
			return nil, fmt.Errorf("%w: reading %s: %w", extract.ErrCorrupt, f.Name, err)
		}
	}
}

// overError says which limit a part broke.
func (a *archive) overError(f *zip.File, ratio bool, what string) error {
	if ratio {
		return fmt.Errorf("%w: %s %s, more than %d times its %d compressed bytes (a zip bomb)",
			extract.ErrTooLarge, f.Name, what, maxRatio, f.CompressedSize64)
	}
	return fmt.Errorf("%w: %s %s, beyond the %d bytes the archive may expand to (MaxUncompressed)",
		extract.ErrTooLarge, f.Name, what, a.limit)
}

// resolve turns an href found in the part at base (a zip name) into the
// zip name it points at: percent-decoded, relative to base's folder,
// without fragment or query. ok is false for a remote resource or a path
// that climbs out of the archive ("../../etc/passwd"): only names inside
// the zip are ever looked up.
func resolve(base, href string) (name string, ok bool) {
	href = strings.TrimSpace(href)
	if i := strings.IndexAny(href, "#?"); i >= 0 {
		href = href[:i]
	}
	if href == "" || strings.Contains(href, ":") && isURL(href) {
		return "", false
	}
	if u, err := url.PathUnescape(href); err == nil {
		href = u
	}
	href = strings.ReplaceAll(href, "\\", "/")
	var p string
	if strings.HasPrefix(href, "/") {
		p = path.Clean(href) // from the root of the container
	} else {
		p = path.Join("/", path.Dir(base), href)
		// path.Join cleans: ".." above the root stays at the root, which
		// would turn "../../etc/passwd" into a name inside the zip. Tell
		// that apart by resolving without the anchor.
		if rel := path.Join(path.Dir(base), href); rel == ".." || strings.HasPrefix(rel, "../") {
			return "", false
		}
	}
	p = strings.TrimPrefix(p, "/")
	if p == "" || p == "." {
		return "", false
	}
	return p, true
}

// isURL reports whether href has a URL scheme (http:, data:, mailto:).
func isURL(href string) bool {
	u, err := url.Parse(href)
	return err != nil || u.Scheme != ""
}
