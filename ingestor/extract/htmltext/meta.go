package htmltext

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// metaKeys maps the <meta> names (name=, or property= for Open Graph) read
// as document properties to the metadata key each fills, best first: of
// several names for one key the first the page has wins (for a date, the
// first that reads as one). They are the names pages use to say what they
// are about, who wrote them and when: HTML's own (author, description,
// keywords), Dublin Core (DC.*, DCTERMS.*), Open Graph articles
// (article:*, og:description), Google Scholar's citation_* and Google
// News' news_keywords. Names about presentation or the site (viewport,
// robots, generator, og:image, twitter:card, ...) are not metadata.
var metaKeys = map[string][]string{
	extract.PropAuthor:      {"author", "dc.creator", "dcterms.creator", "citation_author"},
	extract.PropDescription: {"description", "dc.description", "dcterms.description", "dcterms.abstract", "og:description", "twitter:description"},
	extract.PropKeywords:    {"keywords", "news_keywords", "article:tag"},
	extract.PropSubject:     {"subject", "dc.subject", "dcterms.subject"},
	extract.PropCreated: {"dcterms.created", "dc.date.created", "article:published_time", "dcterms.issued", "dc.date.issued",
		"dcterms.date", "dc.date", "date", "citation_publication_date", "citation_date"},
	extract.PropModified: {"dcterms.modified", "dc.date.modified", "article:modified_time", "og:updated_time", "last-modified"},
}

// metaKey is the metadata key and rank of each name in metaKeys.
var metaKey = func() map[string]struct {
	key  string
	rank int
} {
	out := map[string]struct {
		key  string
		rank int
	}{}
	for key, names := range metaKeys {
		for i, n := range names {
			out[n] = struct {
				key  string
				rank int
			}{key, i}
		}
	}
	return out
}()

// maxMetas bounds the <meta> elements read: a page has a few dozen.
const maxMetas = 1000

// metadataOf reads the page's properties from the <meta> elements of its
// head (see metaKeys) and its <title> (title): keywords, a comma-separated
// list, become a list (article:tag, one keyword per element, too);
// created and modified are dates, left out with a warning when none of
// their elements reads as one; the rest are text.
func (w *walker) metadataOf(root *html.Node, title string) (metadata.Metadata, []string) {
	found := map[string][][]string{} // key -> by rank -> contents in page order
	seen := 0
	w.traverse(root, func(n *html.Node) bool {
		switch {
		case n.Type == html.DocumentNode:
			return true
		case n.Type != html.ElementNode || n.Namespace != "" || seen >= maxMetas:
			return false
		case n.DataAtom == atom.Html || n.DataAtom == atom.Head:
			return true
		case n.DataAtom != atom.Meta:
			return false
		}
		seen++
		name := attr(n, "name")
		if name == "" {
			name = attr(n, "property")
		}
		k, ok := metaKey[strings.ToLower(strings.TrimSpace(name))]
		if !ok {
			return false
		}
		if found[k.key] == nil {
			found[k.key] = make([][]string, len(metaKeys[k.key]))
		}
		found[k.key][k.rank] = append(found[k.key][k.rank], attr(n, "content"))
		return false
	}, nil)
	p := extract.NewProps("HTML <meta>")
	p.Text(extract.PropTitle, title)
	for _, key := range []string{extract.PropAuthor, extract.PropDescription, extract.PropSubject} {
		for _, contents := range found[key] {
			if p.Text(key, first(contents)); p.Has(key) {
				break
			}
		}
	}
	for rank, contents := range found[extract.PropKeywords] {
		if metaKeys[extract.PropKeywords][rank] == "article:tag" {
			p.List(extract.PropKeywords, contents)
		} else {
			p.Keywords(extract.PropKeywords, first(contents), ",")
		}
		if p.Has(extract.PropKeywords) {
			break
		}
	}
	for _, key := range []string{extract.PropCreated, extract.PropModified} {
		var bad string
		for _, contents := range found[key] {
			for _, c := range contents {
				if v, ok := extract.ParseDate(extract.PropText(c)); ok {
					p.Set(key, v)
					break
				} else if bad == "" {
					bad = c
				}
			}
			if p.Has(key) {
				break
			}
		}
		if !p.Has(key) && strings.TrimSpace(bad) != "" {
			p.Date(key, bad) // says why
		}
	}
	return p.Metadata(), p.Warnings()
}

// first is the first non-blank content, or "".
func first(contents []string) string {
	for _, c := range contents {
		if strings.TrimSpace(c) != "" {
			return c
		}
	}
	return ""
}
