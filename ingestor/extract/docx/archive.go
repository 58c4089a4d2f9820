package docx

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Part names, lower-cased: OPC part names are case-insensitive.
const (
	documentPart = "word/document.xml"
	stylesPart   = "word/styles.xml"
	relsPart     = "word/_rels/document.xml.rels"
	corePart     = "docprops/core.xml"

	// ctxEvery is how many XML tokens we read between context checks:
	// often enough to stop within milliseconds, rarely enough to be free.
	ctxEvery = 256
	// maxWarnings keeps a broken file from growing Document.Warnings
	// without bound; the rest are counted in one final warning.
	maxWarnings = 32
)

// extraction is the state of one Extract call.
type extraction struct {
	// ctx is the caller's context; deadline applies lim.Timeout. Both are
	// polled rather than combined with context.WithTimeout, which would
	// cost a timer and hide a parent that only reports through Err.
	ctx      context.Context
	deadline time.Time
	name     string // file name, cleaned for messages
	lim      extract.Limits
	b        *extract.Builder
	files    map[string]*zip.File // by partKey

	style styleSheet
	rels  map[string]string // relationship id -> partKey of an internal target

	headers, footers []string   // header and footer parts of the body's relationships
	trailing         []trailing // the groups of parts read after the body

	imageBudget   int64           // uncompressed bytes images may still use
	seen          map[string]bool // image parts already emitted
	images        int             // images kept
	imagesOverMax int             // images dropped by lim.MaxImages
	textBytes     int             // raw text accumulated, bounded by lim.MaxTextBytes
	pages         *pager          // page breaks in the body

	warnings, suppressed int
	title, firstTitle    string
	firstHeading         string
	props                *extract.Props // the core properties, nil until read
}

// errorf wraps a sentinel error with a reason. Extract adds the file name.
func (x *extraction) errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// checkCtx turns a cancelled or expired context into extract.ErrTimeout.
func (x *extraction) checkCtx() error {
	if err := x.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	if time.Now().After(x.deadline) {
		return fmt.Errorf("%w: %v after %v", extract.ErrTimeout, context.DeadlineExceeded, x.lim.Timeout)
	}
	return nil
}

func (x *extraction) warn(format string, args ...any) {
	if x.warnings >= maxWarnings {
		x.suppressed++
		return
	}
	x.warnings++
	// Messages quote part names from the archive, which may hold any bytes.
	x.b.Warn(oneLine(fmt.Sprintf(format, args...), 4*maxLabelBytes))
}

// partKey normalises a zip entry name for lookup.
func partKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "\\", "/"))
}

// open reads the zip central directory and refuses archives that are
// not documents or would expand beyond lim.MaxUncompressed.
func (x *extraction) open(data []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	// Insecure paths (../, absolute) do not matter: nothing is written to disk.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("%w: not a zip archive: %w", extract.ErrCorrupt, err)
	}
	if len(zr.File) > maxEntries {
		return x.errorf(extract.ErrTooLarge, "%d zip entries, more than %d", len(zr.File), maxEntries)
	}
	x.files = make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		k := partKey(f.Name)
		if _, dup := x.files[k]; !dup { // the first of duplicate names wins
			x.files[k] = f
		}
	}
	doc := x.files[documentPart]
	if doc == nil {
		return x.errorf(extract.ErrCorrupt, "no %s in the archive", documentPart)
	}
	if doc.Flags&0x1 != 0 {
		return x.errorf(extract.ErrEncrypted, "zip entry %s is encrypted", documentPart)
	}

	// Refuse a bomb before decompressing anything: the XML parts we will
	// read must fit the budget as declared. Images are checked one by one
	// against what is left, as they are met.
	var declared uint64
	for _, k := range []string{documentPart, stylesPart, relsPart, corePart} {
		if f := x.files[k]; f != nil {
			declared += f.UncompressedSize64
			if f.UncompressedSize64 > uint64(x.lim.MaxUncompressed) || declared > uint64(x.lim.MaxUncompressed) {
				return x.errorf(extract.ErrTooLarge, "XML parts expand to more than %d bytes", x.lim.MaxUncompressed)
			}
		}
	}
	x.imageBudget = x.lim.MaxUncompressed - int64(declared)
	return nil
}

// capReader reads a zip entry and fails once more than max bytes come
// out of it. Declared sizes can lie, so the cap is enforced on the
// bytes actually produced; io.LimitReader keeps us from decompressing
// more than one byte past the cap.
type capReader struct {
	r        io.Reader
	part     string
	max      int64
	declared int64 // the entry's UncompressedSize64; 0 when not from a zip
	n        int64
}

func newCapReader(r io.Reader, part string, max int64) *capReader {
	return &capReader{r: io.LimitReader(r, max+1), part: part, max: max}
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return 0, fmt.Errorf("%w: %s expands beyond %d bytes", extract.ErrTooLarge, c.part, c.max)
	}
	// archive/zip itself refuses to produce more than the declared size,
	// with ErrFormat. Before the declared size is reached that error can
	// mean nothing else: the entry is bigger than its header says.
	if errors.Is(err, zip.ErrFormat) && c.n < c.declared {
		return n, fmt.Errorf("%w: %s expands beyond its declared %d bytes", extract.ErrTooLarge, c.part, c.declared)
	}
	return n, err
}

// openPart opens a part for streaming, capped at max bytes.
func (x *extraction) openPart(f *zip.File, max int64) (io.ReadCloser, *capReader, error) {
	if f.Flags&0x1 != 0 {
		return nil, nil, x.errorf(extract.ErrEncrypted, "zip entry %s is encrypted", f.Name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: opening %s: %w", extract.ErrCorrupt, f.Name, err)
	}
	cr := newCapReader(rc, f.Name, max)
	cr.declared = int64(min(f.UncompressedSize64, math.MaxInt64))
	return rc, cr, nil
}

// partError classifies an error met while reading a part: limits and
// timeouts keep their meaning, anything else means a corrupt file.
func (x *extraction) partError(part string, err error) error {
	if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) ||
		errors.Is(err, extract.ErrEncrypted) || errors.Is(err, extract.ErrCorrupt) {
		return fmt.Errorf("reading %s: %w", part, err)
	}
	return fmt.Errorf("%w: reading %s: %w", extract.ErrCorrupt, part, err)
}

// maxXMLDepth bounds element nesting in any part. Real documents nest a
// few dozen levels even with tables in text boxes in tables; without a
// bound, a hostile file makes every open element cost memory.
const maxXMLDepth = 1024

// tokens reads XML tokens, checks the context every ctxEvery tokens and
// refuses absurd nesting.
type tokens struct {
	x     *extraction
	d     *xml.Decoder
	n     int
	depth int
}

func (x *extraction) newTokens(r io.Reader) *tokens {
	d := xml.NewDecoder(r)
	// Word writes UTF-8. Other declared encodings are treated as UTF-8;
	// invalid bytes are rejected by the decoder rather than misread.
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	return &tokens{x: x, d: d}
}

func (t *tokens) next() (xml.Token, error) {
	t.n++
	if t.n%ctxEvery == 0 {
		if err := t.x.checkCtx(); err != nil {
			return nil, err
		}
	}
	tok, err := t.d.Token()
	switch tok.(type) {
	case xml.StartElement:
		if t.depth++; t.depth > maxXMLDepth {
			return nil, t.x.errorf(extract.ErrCorrupt, "XML nested more than %d deep", maxXMLDepth)
		}
	case xml.EndElement:
		t.depth--
	}
	return tok, err
}

// skip consumes the rest of the element whose start was just read.
func (t *tokens) skip() error {
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

// each calls fn with every token up to the end of the part.
func (t *tokens) each(fn func(xml.Token) error) error {
	for {
		tok, err := t.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// readSideParts reads the relationships, styles and core properties.
// They are optional: a broken one costs a warning, not the document,
// unless it breaks a limit.
func (x *extraction) readSideParts() error {
	parts := []struct {
		key   string
		parse func(*tokens) error
	}{
		{relsPart, x.parseRels},
		{stylesPart, x.parseStyles},
		{corePart, x.parseCore},
	}
	for _, p := range parts {
		f := x.files[p.key]
		if f == nil {
			continue
		}
		if err := x.readXML(f, p.parse); err != nil {
			if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) {
				return err
			}
			x.warn("ignored: %v", err)
		}
	}
	return nil
}

// readXML streams one XML part into parse.
func (x *extraction) readXML(f *zip.File, parse func(*tokens) error) error {
	rc, cr, err := x.openPart(f, int64(f.UncompressedSize64))
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := parse(x.newTokens(cr)); err != nil {
		return x.partError(f.Name, err)
	}
	return nil
}

// parseRels maps the body's relationship ids to the parts they point
// at, and lists its header and footer parts in the order given.
func (x *extraction) parseRels(t *tokens) error {
	return eachRel(t, path.Dir(documentPart), func(id, typ, target string) {
		x.rels[id] = target
		switch typ {
		case nsR + "/header", nsRStrict + "/header":
			x.headers = append(x.headers, target)
		case nsR + "/footer", nsRStrict + "/footer":
			x.footers = append(x.footers, target)
		}
	})
}

// eachRel calls fn with the id, type and target part key of every
// internal relationship in a .rels part; dir is the folder of the part
// the relationships are of, which relative targets start from.
func eachRel(t *tokens, dir string, fn func(id, typ, target string)) error {
	return t.each(func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "Relationship" {
			return nil
		}
		id, target := attr(se, "Id"), attr(se, "Target")
		if id != "" && target != "" && !strings.EqualFold(attr(se, "TargetMode"), "External") {
			fn(id, attr(se, "Type"), resolveTarget(dir, target))
		}
		return nil
	})
}

// resolveTarget turns a relationship target, relative to dir or
// absolute from the package root, into a part key.
func resolveTarget(dir, target string) string {
	if u, err := url.PathUnescape(target); err == nil {
		target = u
	}
	target = strings.ReplaceAll(target, "\\", "/")
	if strings.HasPrefix(target, "/") {
		return partKey(strings.TrimPrefix(path.Clean(target), "/"))
	}
	return partKey(path.Join(dir, target))
}

// coreKeys maps the core properties (docProps/core.xml, children of
// cp:coreProperties, by local name) to metadata keys. Dates are W3CDTF.
var coreKeys = map[string]string{
	"title":       extract.PropTitle,       // dc:title
	"creator":     extract.PropAuthor,      // dc:creator
	"subject":     extract.PropSubject,     // dc:subject
	"keywords":    extract.PropKeywords,    // cp:keywords
	"description": extract.PropDescription, // dc:description
	"created":     extract.PropCreated,     // dcterms:created
	"modified":    extract.PropModified,    // dcterms:modified
}

// parseCore reads the core properties: the title, and the metadata of
// coreKeys. Keywords are one string that Word separates with ";" and people
// with ",": both split it. A date that is none is left out with a warning.
func (x *extraction) parseCore(t *tokens) error {
	var (
		depth int
		key   string // the property being read, at depth 2
		text  strings.Builder
		found = map[string]string{}
	)
	err := t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth++; depth == 2 {
				key = coreKeys[tok.Name.Local]
				text.Reset()
			}
		case xml.EndElement:
			if depth--; depth == 1 && key != "" {
				if _, dup := found[key]; !dup {
					found[key] = text.String()
				}
				key = ""
			}
		case xml.CharData:
			// cp:keywords may hold its words in child elements: all text counts.
			if key != "" && text.Len() < 4*extract.MaxPropBytes {
				text.Write(tok)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.title = oneLine(found[extract.PropTitle], maxLabelBytes)
	p := extract.NewProps("document property")
	for _, key := range []string{extract.PropTitle, extract.PropAuthor, extract.PropSubject, extract.PropDescription} {
		p.Text(key, found[key])
	}
	p.Keywords(extract.PropKeywords, found[extract.PropKeywords], ",;")
	p.Date(extract.PropCreated, found[extract.PropCreated])
	p.Date(extract.PropModified, found[extract.PropModified])
	x.props = p
	return nil
}

// attr returns the value of the first attribute with the local name.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
