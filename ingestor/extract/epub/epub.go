// Package epub extracts the text and structure of EPUB books (EPUB 2 and
// 3): META-INF/container.xml names the package document (OPF), whose
// manifest and spine list the chapters in reading order; each chapter is
// XHTML, read by the HTML reader (extract/htmltext). Chapters are the
// book's pages.
package epub

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	zipMagic = "PK\x03\x04"
	mimeType = "application/epub+zip"
	// maxWarnings keeps a broken book from growing Document.Warnings
	// without bound; the rest are counted in one final warning.
	maxWarnings = 32
)

// Extractor extracts .epub files. It implements extract.Extractor.
type Extractor struct{}

var _ extract.Extractor = Extractor{}

// Extract reads the chapters of the book in spine order. Zero fields of
// lim take their value from extract.DefaultLimits.
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	lim = withDefaults(lim)
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	x := &extraction{
		ctx:  ctx,
		name: oneLine(name, 4*maxHeadingBytes),
		lim:  lim,
		b:    extract.NewBuilder("epub").Within(lim),
	}
	doc, err := x.run(data)
	if err != nil {
		return nil, readable{oneLine(fmt.Sprintf("epub %s: %v", x.name, err), 2048), err}
	}
	return doc, nil
}

// readable is an error whose message is one line of clean text, however
// hostile the names and bytes it quotes (a zip entry's name, a broken
// XML token): it is shown to users and written to logs.
type readable struct {
	msg string
	err error
}

func (e readable) Error() string { return e.msg }
func (e readable) Unwrap() error { return e.err }

// extraction is the state of one Extract call.
type extraction struct {
	ctx  context.Context
	name string // file name, cleaned for messages
	lim  extract.Limits
	b    *extract.Builder
	zip  *archive

	warnings, suppressed int
}

func (x *extraction) run(data []byte) (*extract.Document, error) {
	if err := x.checkCtx(); err != nil {
		return nil, err
	}
	a, err := openArchive(x.ctx, data, x.lim.MaxUncompressed)
	if err != nil {
		return nil, err
	}
	x.zip = a
	opfName, err := x.findOPF()
	if err != nil {
		return nil, err
	}
	p, err := x.readOPF(opfName)
	if err != nil {
		return nil, err
	}
	encrypted, err := x.readEncryption()
	if err != nil {
		return nil, err
	}
	for _, id := range p.spine {
		if it, ok := p.manifest[id]; ok && encrypted[it.name] {
			return nil, fmt.Errorf("%w: chapter %s is encrypted (DRM); %s lists it", extract.ErrEncrypted, it.href, encryptionPart)
		}
	}
	toc, err := x.readTOC(p)
	if err != nil {
		return nil, err
	}
	if err := x.readChapters(p, toc); err != nil {
		return nil, err
	}
	return x.finish(p)
}

// findOPF reads META-INF/container.xml for the package document's name.
func (x *extraction) findOPF() (string, error) {
	f := x.zip.lookup(containerPart)
	if f == nil {
		return "", fmt.Errorf("%w: no %s in the archive: not an EPUB", extract.ErrCorrupt, containerPart)
	}
	data, err := x.zip.read(f)
	if err != nil {
		return "", err
	}
	name, err := rootfile(newTokens(x.ctx, data))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", containerPart, err)
	}
	// full-path is relative to the root of the container.
	opf, ok := resolve("", name)
	if !ok {
		return "", fmt.Errorf("%w: %s names no package document inside the archive (%q)", extract.ErrCorrupt, containerPart, oneLine(name, maxHeadingBytes))
	}
	return opf, nil
}

// readOPF reads the package document.
func (x *extraction) readOPF(name string) (*pkg, error) {
	f := x.zip.lookup(name)
	if f == nil {
		return nil, fmt.Errorf("%w: the package document %s is not in the archive", extract.ErrCorrupt, name)
	}
	data, err := x.zip.read(f)
	if err != nil {
		return nil, err
	}
	p, err := parseOPF(newTokens(x.ctx, data), name)
	if err != nil {
		return nil, fmt.Errorf("reading the package document %s: %w", name, err)
	}
	if len(p.spine) == 0 {
		return nil, fmt.Errorf("%w: the package document %s has no spine: no chapters", extract.ErrCorrupt, name)
	}
	return p, nil
}

// readEncryption reads META-INF/encryption.xml, when there is one. One
// that cannot be read leaves unknown which chapters are encrypted: the
// book is taken as encrypted rather than read as ciphertext.
func (x *extraction) readEncryption() (map[string]bool, error) {
	f := x.zip.lookup(encryptionPart)
	if f == nil {
		return nil, nil
	}
	data, err := x.zip.read(f)
	if err != nil {
		if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s cannot be read (%v), so chapters may be encrypted", extract.ErrEncrypted, encryptionPart, err)
	}
	parts, err := encryptedParts(newTokens(x.ctx, data))
	if err != nil {
		if errors.Is(err, extract.ErrTimeout) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s cannot be read (%v), so chapters may be encrypted", extract.ErrEncrypted, encryptionPart, err)
	}
	return parts, nil
}

// readTOC reads the chapter titles of the navigation document and the
// NCX. A missing or broken one costs the titles ("Chapter N" is used),
// with a warning, not the book.
func (x *extraction) readTOC(p *pkg) (titles, error) {
	toc := titles{}
	if it, ok := p.manifest[p.navID]; ok && it.name != "" {
		if err := x.readPart(it, func(data []byte) error { return navTitles(data, it.name, toc) }); err != nil {
			return nil, err
		}
	}
	if it, ok := p.manifest[p.tocID]; ok && it.name != "" {
		err := x.readPart(it, func(data []byte) error {
			title, err := ncxTitles(newTokens(x.ctx, data), it.name, toc)
			p.ncxTitle = title
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return toc, nil
}

// readPart reads a table of contents: only limits and timeouts are errors.
func (x *extraction) readPart(it item, parse func([]byte) error) error {
	f := x.zip.lookup(it.name)
	if f == nil {
		x.warn("table of contents %s is not in the archive", it.href)
		return nil
	}
	data, err := x.zip.read(f)
	if err == nil {
		err = parse(data)
	}
	if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) {
		return err
	}
	if err != nil {
		x.warn("table of contents %s ignored: %v", it.href, err)
	}
	return nil
}

// finish sets the title, metadata and summary warnings.
func (x *extraction) finish(p *pkg) (*extract.Document, error) {
	title := oneLine(p.title, maxHeadingBytes)
	if title == "" {
		title = oneLine(p.ncxTitle, maxHeadingBytes)
	}
	x.b.SetTitle(title)
	props := metadataOf(p)
	x.b.SetMetadata(props.Metadata())
	for _, w := range props.Warnings() {
		x.warn("%s", w)
	}
	if x.suppressed > 0 {
		x.b.Warn(fmt.Sprintf("%d more warnings not shown", x.suppressed))
	}
	return x.b.Finish()
}

// metaLanguage is the metadata key of the book's language (dc:language);
// extract has no Prop constant for it.
const metaLanguage = "language"

// metadataOf maps the OPF's Dublin Core metadata to the extract.Prop*
// keys: creators (one string, "; " between them), subjects as keywords,
// dates as created and modified, and the language.
func metadataOf(p *pkg) *extract.Props {
	props := extract.NewProps("EPUB metadata")
	props.Text(extract.PropTitle, p.title)
	props.Text(extract.PropAuthor, strings.Join(p.creators, "; "))
	props.Text(extract.PropDescription, p.description)
	props.List(extract.PropKeywords, p.subjects)
	props.Date(extract.PropCreated, p.created)
	props.Date(extract.PropModified, p.modified)
	props.Text(metaLanguage, p.language)
	return props
}

func (x *extraction) checkCtx() error {
	if err := x.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	return nil
}

func (x *extraction) warn(format string, args ...any) {
	if x.warnings >= maxWarnings {
		x.suppressed++
		return
	}
	x.warnings++
	// Messages quote names from the archive, which may hold any bytes.
	x.b.Warn(oneLine(fmt.Sprintf(format, args...), 4*maxHeadingBytes))
}

// Sniff reports whether data is an EPUB: a zip archive with a
// META-INF/container.xml, or whose mimetype entry says application/epub+zip.
// Only the central directory and the mimetype entry are read.
func Sniff(data []byte) bool {
	if !bytes.HasPrefix(data, []byte(zipMagic)) {
		return false
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return false
	}
	for _, f := range zr.File {
		switch {
		case f.Name == containerPart:
			return true
		case f.Name == "mimetype" && f.UncompressedSize64 < 64:
			rc, err := f.Open()
			if err != nil {
				continue
			}
			var buf [64]byte
			n, _ := rc.Read(buf[:])
			rc.Close()
			if strings.TrimSpace(string(buf[:n])) == mimeType {
				return true
			}
		}
	}
	return false
}

// withDefaults fills zero limits from extract.DefaultLimits.
func withDefaults(lim extract.Limits) extract.Limits {
	def := extract.DefaultLimits()
	if lim.Timeout <= 0 {
		lim.Timeout = def.Timeout
	}
	if lim.MaxTextBytes <= 0 {
		lim.MaxTextBytes = def.MaxTextBytes
	}
	if lim.MaxUncompressed <= 0 {
		lim.MaxUncompressed = def.MaxUncompressed
	}
	if lim.MaxPages <= 0 {
		lim.MaxPages = def.MaxPages
	}
	return lim
}
