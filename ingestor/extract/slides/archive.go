package slides

import (
	"archive/zip"
	"bytes"
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
	// maxEntries bounds the zip central directory we walk. A deck has a
	// slide part and a relationships part per slide, plus notes: 10,000
	// slides with notes are about 40,000 entries.
	maxEntries = 65535
	// maxRatio and ratioFloor refuse a part that expands more than
	// maxRatio times its compressed size, once it is bigger than
	// ratioFloor. Slide XML compresses about tenfold, a deck of ten
	// thousand identical empty slides a few hundred fold; runs of one
	// byte, what bombs are made of, a thousand fold.
	maxRatio   = 500
	ratioFloor = 1 << 20
	// oleMagic starts every OLE compound file: password-protected OOXML
	// (MS-OFFCRYPTO) and legacy binary .ppt files.
	oleMagic = "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
	zipMagic = "PK\x03\x04"
)

// partKey normalises a zip entry name for lookup: OPC part names are
// case-insensitive, and some writers use backslashes.
func partKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "\\", "/"))
}

// openZip reads the central directory, keyed by partKey, the first of
// duplicate names winning.
func openZip(data []byte) (map[string]*zip.File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	// Insecure paths (../, absolute) do not matter: nothing is written to disk.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: not a zip archive: %w", extract.ErrCorrupt, err)
	}
	if len(zr.File) > maxEntries {
		return nil, fmt.Errorf("%w: %d zip entries, more than %d", extract.ErrTooLarge, len(zr.File), maxEntries)
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		if k := partKey(f.Name); files[k] == nil {
			files[k] = f
		}
	}
	return files, nil
}

// hasEntry reports whether data is a zip archive with an entry named key
// (a partKey). Only the central directory is read.
func hasEntry(data []byte, key string) bool {
	if !bytes.HasPrefix(data, []byte(zipMagic)) {
		return false
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return false
	}
	for _, f := range zr.File {
		if partKey(f.Name) == key {
			return true
		}
	}
	return false
}

// capReader reads a zip entry and fails once more than max bytes come
// out of it. Declared sizes can lie, so the cap is enforced on the bytes
// actually produced; io.LimitReader keeps us from decompressing more than
// one byte past the cap.
type capReader struct {
	r        io.Reader
	part     string
	max      int64
	declared int64
	n        int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return 0, fmt.Errorf("%w: %s expands beyond %d bytes", extract.ErrTooLarge, c.part, c.max)
	}
	// archive/zip refuses to produce more than the declared size, with
	// ErrFormat. Before the declared size is reached that error can mean
	// nothing else: the entry is bigger than its header says.
	if errors.Is(err, zip.ErrFormat) && c.n < c.declared {
		return n, fmt.Errorf("%w: %s expands beyond its declared %d bytes", extract.ErrTooLarge, c.part, c.declared)
	}
	return n, err
}

// openPart opens a part for streaming within what is left of the
// expansion budget (lim.MaxUncompressed for the whole file, shared by
// every part read), or within max when that is smaller. A part whose
// declared size is over it, or that declares a bomb's compression ratio,
// is refused before anything is decompressed. done must be called after
// reading: it charges the bytes read to the budget.
func (x *extraction) openPart(f *zip.File, limit int64) (r io.Reader, done func(), err error) {
	if f.Flags&0x1 != 0 {
		return nil, nil, fmt.Errorf("%w: zip entry %s is encrypted", extract.ErrEncrypted, f.Name)
	}
	limit = max(min(limit, x.budget), 0)
	if f.UncompressedSize64 > uint64(limit) {
		return nil, nil, fmt.Errorf("%w: %s expands to %d bytes, over the %d bytes left of the %d byte limit",
			extract.ErrTooLarge, f.Name, f.UncompressedSize64, limit, x.lim.MaxUncompressed)
	}
	if f.UncompressedSize64 > ratioFloor && f.UncompressedSize64/max(f.CompressedSize64, 1) > maxRatio {
		return nil, nil, fmt.Errorf("%w: %s expands %d fold (%d bytes), a zip bomb's ratio",
			extract.ErrTooLarge, f.Name, f.UncompressedSize64/max(f.CompressedSize64, 1), f.UncompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: opening %s: %w", extract.ErrCorrupt, f.Name, err)
	}
	cr := &capReader{r: io.LimitReader(rc, limit+1), part: f.Name, max: limit,
		declared: int64(min(f.UncompressedSize64, math.MaxInt64))}
	return cr, func() { rc.Close(); x.budget -= cr.n }, nil
}

// partError classifies an error met while reading a part: limits,
// timeouts and encryption keep their meaning, anything else means a
// corrupt file.
func partError(part string, err error) error {
	if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) ||
		errors.Is(err, extract.ErrEncrypted) || errors.Is(err, extract.ErrCorrupt) {
		return fmt.Errorf("reading %s: %w", part, err)
	}
	return fmt.Errorf("%w: reading %s: %w", extract.ErrCorrupt, part, err)
}

// readXML streams the part key into parse. A missing part is not an
// error: ok is false.
func (x *extraction) readXML(key string, parse func(*tokens) error) (ok bool, err error) {
	f := x.files[key]
	if f == nil {
		return false, nil
	}
	r, done, err := x.openPart(f, x.budget)
	if err != nil {
		return true, err
	}
	defer done()
	if err := parse(x.newTokens(r)); err != nil {
		return true, partError(f.Name, err)
	}
	return true, nil
}

// readOptional reads a part the document can do without (properties,
// notes, layouts): a broken one costs a warning, unless it breaks a
// limit or the time.
func (x *extraction) readOptional(key string, parse func(*tokens) error) error {
	if _, err := x.readXML(key, parse); err != nil {
		if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) {
			return err
		}
		x.warn("ignored: %v", err)
	}
	return nil
}

// resolve turns a relationship or link target, relative to the folder
// dir or absolute from the package root, into a part key. External
// targets (with a scheme) give "".
func resolve(dir, target string) string {
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return ""
	}
	if u, err := url.PathUnescape(target); err == nil {
		target = u
	}
	target = strings.ReplaceAll(target, "\\", "/")
	if strings.HasPrefix(target, "/") {
		return partKey(strings.TrimPrefix(path.Clean(target), "/"))
	}
	return partKey(strings.TrimPrefix(path.Join(dir, target), "/"))
}
