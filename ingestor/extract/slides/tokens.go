package slides

import (
	"encoding/xml"
	"io"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// ctxEvery is how many XML tokens we read between context checks:
	// often enough to stop within milliseconds, rarely enough to be free.
	ctxEvery = 256
	// maxXMLDepth bounds element nesting in any part. Real decks nest a
	// few dozen levels even with groups in groups; without a bound, a
	// hostile file makes every open element cost memory.
	maxXMLDepth = 1024
)

// tokens reads XML tokens, checks the context every ctxEvery tokens and
// refuses absurd nesting. encoding/xml neither reads DTDs nor expands
// entities other than the five predefined ones, so entity bombs and
// external entities are errors, never expansions.
type tokens struct {
	x     *extraction
	d     *xml.Decoder
	n     int
	depth int
}

func (x *extraction) newTokens(r io.Reader) *tokens {
	d := xml.NewDecoder(r)
	// Office writes UTF-8. Other declared encodings are treated as UTF-8;
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

// attr returns the value of the first attribute with the local name.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
