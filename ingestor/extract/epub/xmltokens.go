package epub

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// ctxEvery is how many XML tokens are read between context checks.
	ctxEvery = 256
	// maxXMLDepth bounds element nesting: package documents nest a few
	// levels, an NCX a dozen; without a bound a hostile file makes every
	// open element cost memory.
	maxXMLDepth = 256
)

// tokens reads the XML of a package part (container, OPF, NCX,
// encryption.xml). The decoder is lenient: real books carry HTML entities
// (&nbsp;) and stray ampersands in their metadata, and a title is better
// read as written than the book refused. It never reads a DTD or expands
// an entity the document declares: an undeclared entity stays as its
// literal text, so an entity bomb is inert.
type tokens struct {
	ctx   context.Context
	d     *xml.Decoder
	n     int
	depth int
}

func newTokens(ctx context.Context, data []byte) *tokens {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	d.AutoClose = nil
	// Package documents are UTF-8 or UTF-16 (OCF 3.0); other declared
	// encodings are read as UTF-8 rather than refused.
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	return &tokens{ctx: ctx, d: d}
}

// next returns the next token, io.EOF at the end.
func (t *tokens) next() (xml.Token, error) {
	if t.n++; t.n%ctxEvery == 0 {
		if err := t.ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, err)
		}
	}
	tok, err := t.d.Token()
	if err != nil {
		if err == io.EOF {
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

// attr returns the value of the first attribute with the local name.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
