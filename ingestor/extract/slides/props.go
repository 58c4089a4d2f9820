package slides

import (
	"encoding/xml"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// propKeys maps the document properties, by the local name of their
// element, to metadata keys: PPTX's core properties (docProps/core.xml,
// children of cp:coreProperties) and ODP's (meta.xml, children of
// office:meta). Dates are W3CDTF in PPTX, ISO 8601 in ODP.
var propKeys = map[string]string{
	"title":           extract.PropTitle,       // dc:title
	"creator":         extract.PropAuthor,      // dc:creator
	"initial-creator": extract.PropAuthor,      // meta:initial-creator, when there is no dc:creator
	"subject":         extract.PropSubject,     // dc:subject
	"keywords":        extract.PropKeywords,    // cp:keywords: one string
	"keyword":         extract.PropKeywords,    // meta:keyword: one element per keyword
	"description":     extract.PropDescription, // dc:description
	"created":         extract.PropCreated,     // dcterms:created
	"creation-date":   extract.PropCreated,     // meta:creation-date
	"modified":        extract.PropModified,    // dcterms:modified
	"date":            extract.PropModified,    // dc:date (ODP: last saved)
}

// parseProps reads the properties of core.xml or meta.xml: the title, and
// the metadata of propKeys. Keywords are one string that writers separate
// with ";" and people with "," (both split it), or one element each. A
// date that is none is left out with a warning.
func (x *extraction) parseProps(t *tokens) error {
	var (
		depth     int
		metaDepth int    // depth of the element holding the properties; 0 before it
		key       string // the property being read, at metaDepth+1
		text      strings.Builder
		found     = map[string]string{}
		keywords  []string
	)
	err := t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case metaDepth == 0 && depth <= 2 && (tok.Name.Local == "coreProperties" || tok.Name.Local == "meta"):
				metaDepth = depth
			case metaDepth > 0 && depth == metaDepth+1:
				key = tok.Name.Local
				text.Reset()
			}
		case xml.EndElement:
			if depth == metaDepth+1 && key != "" {
				switch _, dup := found[key]; {
				case key == "keyword":
					if len(keywords) <= metadata.MaxListItems { // the merge keeps no more
						keywords = append(keywords, text.String())
					}
				case propKeys[key] != "" && !dup:
					found[key] = text.String()
				}
				key = ""
			}
			depth--
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
	// The first of the elements of a key wins: ODP's initial creator is
	// the author, dc:creator whoever saved it last.
	values := map[string]string{}
	for _, name := range []string{"initial-creator", "creator", "title", "subject", "keywords", "description",
		"created", "creation-date", "modified", "date"} {
		if k := propKeys[name]; values[k] == "" {
			values[k] = strings.TrimSpace(found[name])
		}
	}
	x.title = oneLine(values[extract.PropTitle], maxHeadingBytes)
	p := extract.NewProps("document property")
	for _, key := range []string{extract.PropTitle, extract.PropAuthor, extract.PropSubject, extract.PropDescription} {
		p.Text(key, values[key])
	}
	if keywords != nil {
		p.List(extract.PropKeywords, keywords)
	} else {
		p.Keywords(extract.PropKeywords, values[extract.PropKeywords], ",;")
	}
	p.Date(extract.PropCreated, values[extract.PropCreated])
	p.Date(extract.PropModified, values[extract.PropModified])
	x.props = p
	return nil
}
