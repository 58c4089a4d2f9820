package odt

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// ctxEvery is how many XML tokens are read between context checks:
	// often enough to stop within milliseconds, rarely enough to be free.
	ctxEvery = 256
	// maxXMLDepth bounds element nesting. Real documents nest a few dozen
	// levels even with tables in frames in tables; without a bound a
	// hostile file makes every open element cost memory.
	maxXMLDepth = 1024
)

// tokens reads the XML of one part. encoding/xml never reads a DTD nor
// expands an entity a document declares: an undeclared entity is a
// syntax error (ErrCorrupt), so an entity bomb is refused, never
// expanded. LibreOffice writes well-formed XML; the decoder is strict.
type tokens struct {
	x     *extraction
	d     *xml.Decoder
	n     int
	depth int
}

func (x *extraction) newTokens(r io.Reader) *tokens {
	d := xml.NewDecoder(r)
	// ODF is UTF-8; another declared encoding is read as UTF-8, whose
	// invalid bytes the decoder refuses rather than misreads.
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	return &tokens{x: x, d: d}
}

// next returns the next token; io.EOF at the end of the part.
func (t *tokens) next() (xml.Token, error) {
	if t.n++; t.n%ctxEvery == 0 {
		if err := t.x.checkCtx(); err != nil {
			return nil, err
		}
	}
	tok, err := t.d.Token()
	if err != nil {
		if err == io.EOF || isExtractError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", extract.ErrCorrupt, err)
	}
	switch tok.(type) {
	case xml.StartElement:
		if t.depth++; t.depth > maxXMLDepth {
			return nil, fmt.Errorf("%w: XML nested more than %d deep", extract.ErrCorrupt, maxXMLDepth)
		}
	case xml.EndElement:
		t.depth--
	}
	return tok, nil
}

// skip consumes the rest of the element whose start was just read.
func (t *tokens) skip() error {
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return unexpectedEOF(err)
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

// text consumes the rest of the element whose start was just read and
// returns its character data, at most max bytes of it.
func (t *tokens) text(max int) (string, error) {
	var b []byte
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return "", unexpectedEOF(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if len(b) < max {
				b = append(b, tok[:min(len(tok), max-len(b))]...)
			}
		}
	}
	return string(b), nil
}

// unexpectedEOF: a part that ends inside an element is truncated.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return fmt.Errorf("%w: %v", extract.ErrCorrupt, io.ErrUnexpectedEOF)
	}
	return err
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

// ODF namespaces.
const (
	nsOffice = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
	nsStyle  = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
	nsText   = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
	nsTable  = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
	nsDraw   = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
	nsFO     = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
	nsSVG    = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
	nsMeta   = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
	nsDC     = "http://purl.org/dc/elements/1.1/"
	nsXLink  = "http://www.w3.org/1999/xlink"
)

// attr returns the value of the attribute space:local, or "".
func attr(e xml.StartElement, space, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local && a.Name.Space == space {
			return a.Value
		}
	}
	return ""
}
