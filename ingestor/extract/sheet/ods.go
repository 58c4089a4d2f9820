package sheet

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// ODS extracts OpenDocument spreadsheets: .ods (and .ots) archives, and
// flat .fods files, one XML document. It implements extract.Extractor;
// Document.Format is "ods".
type ODS struct{}

var _ extract.Extractor = ODS{}

// The parts of an ODS archive that are read, by partKey.
const (
	contentPart  = "content.xml"
	metaPart     = "meta.xml"
	manifestPart = "meta-inf/manifest.xml"
	mimetypePart = "mimetype"
)

// Extract reads every sheet (table:table) in order, up to lim.MaxPages,
// each on its own page, from content.xml streamed token by token: the
// text each cell displays, repeated cells and rows expanded only where
// they hold something, merged (covered) cells once. Zero fields of lim
// take their values from extract.DefaultLimits.
func (ODS) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	x := newRun(ctx, "ods", lim)
	doc, err := x.ods(data)
	if err != nil {
		return nil, failed("ods", name, err)
	}
	return doc, nil
}

func (x *run) ods(data []byte) (*extract.Document, error) {
	if err := x.checkCtx(); err != nil {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(data, []byte(oleMagic)):
		return nil, oleError(data, "binary spreadsheet")
	case !bytes.HasPrefix(data, []byte(zipMagic)):
		// A flat ODS: meta, styles and body in one XML document.
		if int64(len(data)) > x.lim.MaxUncompressed {
			return nil, fmt.Errorf("%w: %d bytes of XML, more than MaxUncompressed (%d bytes)", extract.ErrTooLarge, len(data), x.lim.MaxUncompressed)
		}
		o := newODSReader(x)
		if err := o.read(bytes.NewReader(data), true); err != nil {
			return nil, classify(err, "reading the document")
		}
		return o.finish()
	}
	read := map[string]bool{contentPart: true, metaPart: true, manifestPart: true, mimetypePart: true}
	a, err := x.openZip(data, func(k string) bool { return read[k] })
	if err != nil {
		return nil, err
	}
	if err := x.checkPackage(a); err != nil {
		return nil, err
	}
	content := a.files[contentPart]
	if content == nil {
		return nil, fmt.Errorf("%w: no %s in the archive", extract.ErrCorrupt, contentPart)
	}
	o := newODSReader(x)
	if f := a.files[metaPart]; f != nil {
		if err := x.readPart(f, func(r io.Reader) error { return o.read(r, false) }); err != nil {
			if isLimit(err) {
				return nil, err
			}
			x.warn("document properties ignored: %v", err)
		}
	}
	if err := x.readPart(content, func(r io.Reader) error { return o.read(r, true) }); err != nil {
		return nil, err
	}
	return o.finish()
}

// checkPackage refuses an OpenDocument file that is not a spreadsheet
// (its mimetype says so) or whose parts are encrypted (its manifest says
// so: their bytes would only read as corrupt XML).
func (x *run) checkPackage(a *archive) error {
	if f := a.files[mimetypePart]; f != nil {
		b, err := x.readAll(f)
		if err != nil {
			return err
		}
		if mt := strings.TrimSpace(string(b)); mt != "" && !strings.Contains(mt, "opendocument.spreadsheet") {
			return fmt.Errorf("%w: an OpenDocument file of type %q, not a spreadsheet", extract.ErrUnsupported, oneLine(mt, maxTitleBytes))
		}
	}
	if f := a.files[manifestPart]; f != nil {
		b, err := x.readAll(f)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("encryption-data")) {
			return fmt.Errorf("%w: password-protected document (the manifest lists encryption data)", extract.ErrEncrypted)
		}
	}
	return nil
}

// readAll reads a small part whole, within MaxUncompressed.
func (x *run) readAll(f *zip.File) ([]byte, error) {
	rc, cr, err := open(f, x.lim.MaxUncompressed)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(cr)
	if err != nil {
		return nil, classify(err, "reading %s", f.Name)
	}
	return b, nil
}

// readPart streams a part into read, within MaxUncompressed.
func (x *run) readPart(f *zip.File, read func(io.Reader) error) error {
	rc, cr, err := open(f, x.lim.MaxUncompressed)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := read(cr); err != nil {
		return classify(err, "reading %s", f.Name)
	}
	return nil
}

// isLimit: the error is a limit of the extraction (size, time), which
// ends it whatever part it was met in.
func isLimit(err error) bool {
	return errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout)
}

// maxXMLDepth bounds element nesting. Real documents nest a few dozen
// levels; without a bound, a hostile file makes every open element cost
// memory.
const maxXMLDepth = 1024

// tokens reads XML tokens, checks the context every ctxEvery tokens and
// refuses absurd nesting.
type tokens struct {
	x     *run
	d     *xml.Decoder
	n     int
	depth int
}

func newTokens(x *run, r io.Reader) *tokens {
	d := xml.NewDecoder(r)
	// ODF is UTF-8. Other declared encodings are read as UTF-8; invalid
	// bytes are refused by the decoder rather than misread.
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	return &tokens{x: x, d: d}
}

func (t *tokens) next() (xml.Token, error) {
	if t.n++; t.n%ctxEvery == 0 {
		if err := t.x.checkCtx(); err != nil {
			return nil, err
		}
	}
	tok, err := t.d.Token()
	switch tok.(type) {
	case xml.StartElement:
		if t.depth++; t.depth > maxXMLDepth {
			return nil, fmt.Errorf("%w: XML nested more than %d deep", extract.ErrCorrupt, maxXMLDepth)
		}
	case xml.EndElement:
		t.depth--
	}
	return tok, err
}
