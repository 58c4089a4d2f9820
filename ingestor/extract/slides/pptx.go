package slides

import (
	"encoding/xml"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Part names, lower-cased: OPC part names are case-insensitive.
const (
	presentationPart = "ppt/presentation.xml"
	corePart         = "docprops/core.xml"
)

// rel is one relationship of a part.
type rel struct{ target, typ string }

// readPPTX reads the properties, then the slides in the order of the
// presentation's slide list (p:sldIdLst), each with its notes.
func (x *extraction) readPPTX() error {
	if x.files[presentationPart] == nil {
		return x.errorf(extract.ErrCorrupt, "no %s in the archive", presentationPart)
	}
	if err := x.readOptional(corePart, x.parseProps); err != nil {
		return err
	}
	rels, err := x.rels(presentationPart)
	if err != nil {
		return err
	}
	var ids []string // the slides' relationship ids, up to lim.MaxPages
	if _, err := x.readXML(presentationPart, func(t *tokens) error {
		return t.each(func(tok xml.Token) error {
			if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "sldId" {
				if x.slides++; x.slides <= x.lim.MaxPages {
					ids = append(ids, relID(e, "id"))
				}
			}
			return nil
		})
	}); err != nil {
		return err
	}
	for i, id := range ids {
		if err := x.checkCtx(); err != nil {
			return err
		}
		r := rels[id]
		if r.target == "" || x.files[r.target] == nil {
			x.warn("slide %d skipped: its part %q is not in the archive", i+1, r.target)
			continue
		}
		if err := x.readSlide(i+1, r.target); err != nil {
			return err
		}
	}
	return nil
}

// relID is the value of the relationship attribute (r:id, r:embed) with
// the local name, told from an unprefixed one of the same name.
func relID(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local && a.Name.Space != "" {
			return a.Value
		}
	}
	return ""
}

// rels reads the relationships of part: id to target part key (internal
// targets only). A part without relationships has none; broken ones are
// an error only when they break a limit (a warning otherwise).
func (x *extraction) rels(part string) (map[string]rel, error) {
	out := map[string]rel{}
	dir := path.Dir(part)
	key := dir + "/_rels/" + path.Base(part) + ".rels"
	err := x.readOptional(key, func(t *tokens) error {
		return t.each(func(tok xml.Token) error {
			e, ok := tok.(xml.StartElement)
			if !ok || e.Name.Local != "Relationship" || strings.EqualFold(attr(e, "TargetMode"), "External") {
				return nil
			}
			if target := resolve(dir, attr(e, "Target")); target != "" {
				out[attr(e, "Id")] = rel{target, attr(e, "Type")}
			}
			return nil
		})
	})
	return out, err
}

// relOfType is the target of the first relationship whose type ends in
// suffix ("/notesSlide", "/slideLayout"), or "".
func relOfType(rels map[string]rel, suffix string) string {
	best := ""
	for id, r := range rels {
		// Several of a kind are not expected; the lowest id is taken so
		// the choice does not depend on map order.
		if strings.HasSuffix(r.typ, suffix) && (best == "" || id < best) {
			best = id
		}
	}
	return rels[best].target
}

// readSlide reads slide num from part, with its notes, and adds it.
func (x *extraction) readSlide(num int, part string) error {
	rels, err := x.rels(part)
	if err != nil {
		return err
	}
	s := &slide{num: num}
	w := &pptxWalker{c: &collector{x: x}, rels: rels}
	if err := x.readPart(part, fmt.Sprintf("slide %d", num), w.run); err != nil {
		return err
	}
	s.hidden = w.hidden
	s.shapes = w.c.top
	s.title, _ = takeTitle(&s.shapes, "title", "ctrTitle")
	if err := x.placeFromLayout(s.shapes, relOfType(rels, "/slideLayout")); err != nil {
		return err
	}
	if notes := relOfType(rels, "/notesSlide"); notes != "" {
		nrels, err := x.rels(notes)
		if err != nil {
			return err
		}
		nw := &pptxWalker{c: &collector{x: x}, rels: nrels}
		if err := x.readPart(notes, fmt.Sprintf("the notes of slide %d", num), nw.run); err != nil {
			return err
		}
		s.notes = nw.c.top
	}
	return x.emitSlide(s)
}

// readPart reads a slide's part (what). A part that breaks off (corrupt
// XML, a broken stream) keeps what was read before, with a warning: one
// bad slide does not cost the deck. Limits and timeouts still end the
// extraction.
func (x *extraction) readPart(key, what string, parse func(*tokens) error) error {
	if _, err := x.readXML(key, parse); err != nil {
		if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) || errors.Is(err, extract.ErrEncrypted) {
			return err
		}
		x.warn("%s read in part: %v", what, err)
	}
	return nil
}

// takeTitle removes the first shape (in document order, groups included)
// that is a placeholder of one of the types and returns its paragraphs.
func takeTitle(shapes *[]*shape, types ...string) ([]string, bool) {
	for i, s := range *shapes {
		if slices.Contains(types, s.ph) && !s.hidden {
			*shapes = slices.Delete(*shapes, i, i+1)
			return s.paras, true
		}
		if t, ok := takeTitle(&s.children, types...); ok {
			return t, true
		}
	}
	return nil, false
}
