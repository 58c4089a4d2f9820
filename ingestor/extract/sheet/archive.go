package sheet

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	zipMagic = "PK\x03\x04"
	// oleMagic starts every OLE compound file: a password-protected OOXML
	// workbook (MS-OFFCRYPTO) or a legacy binary .xls.
	oleMagic = "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
	// maxRatio is the most an entry may expand over its compressed size
	// once it is past ratioFloor bytes. Deflate tops out near 1032:1, on a
	// run of one byte; worksheet XML, repetitive as it is, compresses
	// 10-100:1. An entry over this is a bomb, refused before anything is
	// decompressed, even when it fits MaxUncompressed.
	maxRatio   = 250
	ratioFloor = 1 << 20
)

// archive is a zip's central directory, checked.
type archive struct {
	entries []*zip.File
	files   map[string]*zip.File // by partKey; the first of duplicate names wins
}

// partKey normalises a zip entry name for lookup: OPC and ODF part names
// are matched without regard to case or slash direction.
func partKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "\\", "/"))
}

// openZip reads data's central directory and refuses, before
// decompressing anything, an archive with more than maxEntries entries,
// whose counted entries (count(name) true) declare more than
// lim.MaxUncompressed bytes together, or any entry over maxRatio.
func (x *run) openZip(data []byte, count func(name string) bool) (*archive, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	// Insecure paths (../, absolute) do not matter: nothing is written to disk.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: not a zip archive: %w", extract.ErrCorrupt, err)
	}
	if len(zr.File) > maxEntries {
		return nil, fmt.Errorf("%w: %d zip entries, more than %d", extract.ErrTooLarge, len(zr.File), maxEntries)
	}
	a := &archive{entries: zr.File, files: make(map[string]*zip.File, len(zr.File))}
	var declared uint64
	for _, f := range zr.File {
		k := partKey(f.Name)
		if _, dup := a.files[k]; !dup {
			a.files[k] = f
		}
		if f.UncompressedSize64 > ratioFloor && f.UncompressedSize64/max(f.CompressedSize64, 1) > maxRatio {
			return nil, fmt.Errorf("%w: zip entry %s expands %d times (%d bytes from %d): a zip bomb",
				extract.ErrTooLarge, oneLine(f.Name, maxTitleBytes), f.UncompressedSize64/max(f.CompressedSize64, 1), f.UncompressedSize64, f.CompressedSize64)
		}
		if count(k) {
			if declared += f.UncompressedSize64; declared > uint64(x.lim.MaxUncompressed) || declared < f.UncompressedSize64 {
				return nil, fmt.Errorf("%w: the archive expands to more than MaxUncompressed (%d bytes)", extract.ErrTooLarge, x.lim.MaxUncompressed)
			}
		}
	}
	return a, nil
}

// verify decompresses every entry and checks it against its header:
// excelize keeps whatever comes out of an entry, ignoring a checksum that
// does not match, data that breaks off or more bytes than the header says,
// so a damaged sheet would read as a shorter one. Decompressing costs
// little next to parsing.
func (x *run) verify(a *archive) error {
	for _, f := range a.entries {
		if err := x.checkCtx(); err != nil {
			return err
		}
		rc, cr, err := open(f, x.lim.MaxUncompressed)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, &ctxReader{r: cr, x: x})
		rc.Close()
		if err != nil {
			return classify(err, "zip entry %s", oneLine(f.Name, maxTitleBytes))
		}
	}
	return nil
}

// capReader reads a zip entry and fails once more than max bytes come out
// of it. Declared sizes can lie, so the cap is enforced on the bytes
// actually produced; io.LimitReader keeps us from decompressing more than
// one byte past it.
type capReader struct {
	r        io.Reader
	part     string
	max      int64
	declared int64 // the entry's UncompressedSize64
	n        int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return 0, fmt.Errorf("%w: %s expands beyond %d bytes", extract.ErrTooLarge, c.part, c.max)
	}
	// archive/zip refuses to produce more than the declared size, with
	// ErrFormat (and says io.ErrUnexpectedEOF when there is less): the
	// entry is bigger than its header says.
	if errors.Is(err, zip.ErrFormat) {
		return n, fmt.Errorf("%w: %s expands beyond its declared %d bytes", extract.ErrTooLarge, c.part, c.declared)
	}
	return n, err
}

// open opens an entry for streaming, capped at max bytes.
func open(f *zip.File, max int64) (io.ReadCloser, *capReader, error) {
	if f.Flags&0x1 != 0 {
		return nil, nil, fmt.Errorf("%w: zip entry %s is encrypted", extract.ErrEncrypted, f.Name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: opening %s: %w", extract.ErrCorrupt, f.Name, err)
	}
	cr := &capReader{r: io.LimitReader(rc, max+1), part: f.Name, max: max, declared: int64(min(f.UncompressedSize64, math.MaxInt64))}
	return rc, cr, nil
}

// oleError classifies an OLE compound file: an encrypted OOXML package
// has a stream named EncryptionInfo (names are UTF-16LE); anything else
// is most likely a legacy binary workbook, which is not read.
func oleError(data []byte, legacy string) error {
	if bytes.Contains(data, utf16le("EncryptionInfo")) || bytes.Contains(data, utf16le("EncryptedPackage")) {
		return fmt.Errorf("%w: password-protected workbook (OLE EncryptionInfo)", extract.ErrEncrypted)
	}
	return fmt.Errorf("%w: OLE compound file, probably a legacy %s; save it as .xlsx or .ods", extract.ErrUnsupported, legacy)
}

func utf16le(s string) []byte {
	out := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i], 0)
	}
	return out
}

// classify keeps the meaning of an error that already wraps one of
// extract's sentinels and makes any other a corrupt file.
func classify(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	for _, s := range []error{extract.ErrTooLarge, extract.ErrTimeout, extract.ErrEncrypted, extract.ErrCorrupt, extract.ErrUnsupported} {
		if errors.Is(err, s) {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return fmt.Errorf("%w: %s: %w", extract.ErrCorrupt, what, err)
}
