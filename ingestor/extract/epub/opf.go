package epub

import (
	"encoding/xml"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	containerPart  = "META-INF/container.xml"
	encryptionPart = "META-INF/encryption.xml"
	opfMediaType   = "application/oebps-package+xml"

	// maxManifest bounds the manifest items and spine entries kept;
	// maxEntries bounds the parts, and a spine longer than the zip is
	// only repeats.
	maxManifest = maxEntries
	// maxMetaBytes bounds the text of one metadata element.
	maxMetaBytes = 4 * extract.MaxPropBytes
)

// rootfile reads META-INF/container.xml and returns the zip name of the
// package document (the OPF): the first rootfile of the OPF media type,
// else the first rootfile.
func rootfile(t *tokens) (string, error) {
	var first, opf string
	err := t.each(func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "rootfile" {
			return nil
		}
		p := attr(se, "full-path")
		if first == "" {
			first = p
		}
		if opf == "" && strings.EqualFold(strings.TrimSpace(attr(se, "media-type")), opfMediaType) {
			opf = p
		}
		return nil
	})
	if opf == "" {
		opf = first
	}
	return opf, err
}

// item is a manifest entry.
type item struct {
	name      string // zip name, resolved against the OPF; "" when outside the zip
	href      string // as written, for messages
	mediaType string
}

// metaFields are the metadata elements read, by lower-cased local name
// (OEB 1 and early EPUB 2 books write dc:Title).
var metaFields = map[string]bool{"title": true, "creator": true, "subject": true, "description": true,
	"language": true, "date": true, "meta": true}

// pkg is what the package document says.
type pkg struct {
	manifest map[string]item // by id
	// spine holds the manifest ids of the spine's itemrefs in order.
	// Entries with linear="no" (notes, answers, pop-ups) are read at their
	// place like the others: their text is the book's.
	spine []string
	tocID string // spine toc attribute: the NCX's manifest id
	navID string // the first item with the "nav" property (EPUB 3)

	title, ncxTitle    string
	creators, subjects []string
	description        string
	language           string
	created, modified  string
}

// parseOPF reads the package document at name: metadata, manifest and
// spine, in one pass.
func parseOPF(t *tokens, name string) (*pkg, error) {
	p := &pkg{manifest: map[string]item{}}
	var (
		inMetadata bool
		field      string // the metadata element being read
		event      string // its opf:event (EPUB 2 dates)
		property   string // a <meta property=...>'s property
		text       strings.Builder
	)
	err := t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			switch local := tok.Name.Local; {
			case local == "metadata":
				inMetadata = true
			case inMetadata && field == "" && metaFields[strings.ToLower(local)]:
				field, event, property = strings.ToLower(local), attr(tok, "event"), attr(tok, "property")
				text.Reset()
			case local == "item":
				if len(p.manifest) < maxManifest {
					id := attr(tok, "id")
					href := attr(tok, "href")
					resolved, _ := resolve(name, href)
					if p.navID == "" && hasToken(attr(tok, "properties"), "nav") {
						p.navID = id
					}
					if _, dup := p.manifest[id]; !dup {
						p.manifest[id] = item{name: resolved, href: href, mediaType: strings.ToLower(strings.TrimSpace(attr(tok, "media-type")))}
					}
				}
			case local == "spine":
				p.tocID = attr(tok, "toc")
			case local == "itemref":
				if len(p.spine) < maxManifest {
					p.spine = append(p.spine, attr(tok, "idref"))
				}
			}
		case xml.CharData:
			if field != "" && text.Len() < maxMetaBytes {
				text.Write(tok)
			}
		case xml.EndElement:
			switch {
			case tok.Name.Local == "metadata":
				inMetadata = false
			case inMetadata && strings.EqualFold(tok.Name.Local, field):
				p.setMeta(field, event, property, text.String())
				field = ""
			}
		}
		return nil
	})
	return p, err
}

// setMeta stores one metadata element: Dublin Core elements by name, and
// the EPUB 3 modification date (<meta property="dcterms:modified">).
// EPUB 2 dates say what they are in opf:event.
func (p *pkg) setMeta(field, event, property, value string) {
	value = strings.TrimSpace(value)
	if value == "" {
		return
	}
	switch field {
	case "title":
		if p.title == "" {
			p.title = value
		}
	case "creator":
		if len(p.creators) < 16 {
			p.creators = append(p.creators, value)
		}
	case "subject":
		if len(p.subjects) < 64 {
			p.subjects = append(p.subjects, value)
		}
	case "description":
		if p.description == "" {
			p.description = value
		}
	case "language":
		if p.language == "" {
			p.language = value
		}
	case "date":
		switch strings.ToLower(event) {
		case "modification":
			if p.modified == "" {
				p.modified = value
			}
		case "", "publication", "creation", "original-publication":
			if p.created == "" {
				p.created = value
			}
		}
	case "meta":
		if property == "dcterms:modified" && p.modified == "" {
			p.modified = value
		}
	}
}
