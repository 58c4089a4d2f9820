package htmltext

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

func TestMetadata(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "meta.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Extractor{}.Extract(context.Background(), data, "meta.html", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Travel Policy 2024" {
		t.Errorf("title %q", doc.Title)
	}
	created, _ := extract.ParseDate("2024-03-01T09:30:00+01:00")
	want := metadata.Metadata{
		"title":       {Kind: metadata.String, Text: "Travel Policy 2024"},
		"author":      {Kind: metadata.String, Text: "Ann Lee"},
		"description": {Kind: metadata.String, Text: "How to book travel."},
		"keywords":    {Kind: metadata.List, List: []string{"travel", "policy", "legal", "2024"}},
		"subject":     {Kind: metadata.String, Text: "Company policies"},
		"created":     created,
	}
	if len(doc.Metadata) != len(want) {
		t.Errorf("metadata %+v", doc.Metadata)
	}
	for k, w := range want {
		g := doc.Metadata[k]
		if g.Kind != w.Kind || g.Text != w.Text || !g.Date.Equal(w.Date) || strings.Join(g.List, "|") != strings.Join(w.List, "|") {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
	// created falls back from the bad dcterms.created to a good date quietly;
	// modified has none and says so.
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], `modified "last week" is not a date`) {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

func TestMetadataFallbacks(t *testing.T) {
	page := `<html><head><meta property="og:description" content="OG"><meta property="article:tag" content="a">` +
		`<meta property="article:tag" content=" b "><meta name="citation_publication_date" content="2023/07/14">` +
		`<meta name="description" content="   "><svg><meta name="author" content="no"></svg></head><body><h1>H</h1><p>x</p></body></html>`
	doc, err := Extractor{}.Extract(context.Background(), []byte(page), "p.html", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	m := doc.Metadata
	if m["description"].Text != "OG" || strings.Join(m["keywords"].List, "|") != "a|b" || m["created"].Text != "2023-07-14" || m["created"].Kind != metadata.Date {
		t.Errorf("metadata %+v", m)
	}
	if _, ok := m["title"]; ok || doc.Title != "H" {
		t.Errorf("title %q, metadata title %+v: the heading is the title, not a property", doc.Title, m["title"])
	}
	if _, ok := m["author"]; ok {
		t.Errorf("author from an SVG <meta>")
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings %q", doc.Warnings)
	}
}
