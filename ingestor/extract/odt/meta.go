package odt

import (
	"encoding/xml"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// metaLanguage is the metadata key of the document's language
// (dc:language); extract has no Prop constant for it.
const metaLanguage = "language"

// metaKeys maps the elements of office:meta (meta.xml) to metadata keys.
// The author is meta:initial-creator, who wrote the document; dc:creator
// is who saved it last, the author only when there is no initial creator.
// meta:keyword comes once per keyword.
var metaKeys = map[xml.Name]string{
	{Space: nsDC, Local: "title"}:             extract.PropTitle,
	{Space: nsDC, Local: "subject"}:           extract.PropSubject,
	{Space: nsDC, Local: "description"}:       extract.PropDescription,
	{Space: nsMeta, Local: "initial-creator"}: extract.PropAuthor,
	{Space: nsDC, Local: "creator"}:           "creator",
	{Space: nsMeta, Local: "keyword"}:         extract.PropKeywords,
	{Space: nsMeta, Local: "creation-date"}:   extract.PropCreated,
	{Space: nsDC, Local: "date"}:              extract.PropModified,
	{Space: nsDC, Local: "language"}:          metaLanguage,
}

// maxKeywords bounds the meta:keyword elements kept.
const maxKeywords = 256

// parseMeta reads office:meta, whose start was just read: the title and
// the metadata of metaKeys.
func (x *extraction) parseMeta(t *tokens) error {
	found := map[string]string{}
	var keywords []string
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return unexpectedEOF(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			key, ok := metaKeys[tok.Name]
			if !ok || depth != 1 {
				depth++
				continue
			}
			s, err := t.text(4 * extract.MaxPropBytes)
			if err != nil {
				return err
			}
			switch {
			case key == extract.PropKeywords:
				if len(keywords) < maxKeywords {
					keywords = append(keywords, s)
				}
			case found[key] == "":
				found[key] = s
			}
		case xml.EndElement:
			depth--
		}
	}
	if strings.TrimSpace(found[extract.PropAuthor]) == "" {
		found[extract.PropAuthor] = found["creator"]
	}
	x.title = oneLine(found[extract.PropTitle], maxHeadingBytes)
	p := extract.NewProps("document metadata")
	for _, key := range []string{extract.PropTitle, extract.PropAuthor, extract.PropSubject, extract.PropDescription, metaLanguage} {
		p.Text(key, found[key])
	}
	p.List(extract.PropKeywords, keywords)
	p.Date(extract.PropCreated, found[extract.PropCreated])
	p.Date(extract.PropModified, found[extract.PropModified])
	x.props = p
	return nil
}
