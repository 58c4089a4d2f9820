package docx

import (
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// fullCoreXML is the core properties Word writes, every one filled.
const fullCoreXML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
 xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"
 xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<dc:title>Master  Services Agreement</dc:title>
<dc:subject>Contracts</dc:subject>
<dc:creator>Ann Lee</dc:creator>
<cp:keywords>legal; contract, 2024;;</cp:keywords>
<dc:description>Signed
copy.</dc:description>
<cp:lastModifiedBy>Bob</cp:lastModifiedBy>
<cp:revision>4</cp:revision>
<dcterms:created xsi:type="dcterms:W3CDTF">2024-01-31T12:00:00Z</dcterms:created>
<dcterms:modified xsi:type="dcterms:W3CDTF">2024-02-01T08:15Z</dcterms:modified>
</cp:coreProperties>`

func TestCoreProperties(t *testing.T) {
	p := parts(t, para("", "Body."))
	p["docProps/core.xml"] = []byte(fullCoreXML)
	doc, err := run(t, zipParts(t, p), extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Master Services Agreement" {
		t.Errorf("title %q", doc.Title)
	}
	created, _ := extract.ParseDate("2024-01-31T12:00:00Z")
	modified, _ := extract.ParseDate("2024-02-01T08:15:00Z")
	want := metadata.Metadata{
		"title":       {Kind: metadata.String, Text: "Master Services Agreement"},
		"author":      {Kind: metadata.String, Text: "Ann Lee"},
		"subject":     {Kind: metadata.String, Text: "Contracts"},
		"keywords":    {Kind: metadata.List, List: []string{"legal", "contract", "2024"}},
		"description": {Kind: metadata.String, Text: "Signed copy."},
		"created":     created,
		"modified":    modified,
	}
	checkMetadata(t, doc.Metadata, want)
	if modified.Text != "2024-02-01T08:15:00Z" {
		t.Errorf("modified written %q, want RFC 3339", modified.Text)
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// TestBadCoreProperties: a garbled property costs that value and a
// warning, never the file.
func TestBadCoreProperties(t *testing.T) {
	p := parts(t, para("", "Body."))
	p["docProps/core.xml"] = []byte(strings.NewReplacer(
		"2024-01-31T12:00:00Z", "31/01/2024 noon",
		"2024-02-01T08:15Z", "2024-02-30",
		"Ann Lee", "Ann\t\u200b\u202eLee",
	).Replace(fullCoreXML))
	doc, err := run(t, zipParts(t, p), extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Metadata["created"]; ok {
		t.Errorf("created %+v from a garbled date", doc.Metadata["created"])
	}
	if _, ok := doc.Metadata["modified"]; ok {
		t.Errorf("modified %+v from 30 February", doc.Metadata["modified"])
	}
	if len(doc.Warnings) != 2 || !strings.Contains(doc.Warnings[0], "created") || !strings.Contains(doc.Warnings[1], "modified") {
		t.Errorf("warnings %q, want one per bad date", doc.Warnings)
	}
	if doc.Metadata["title"].Text != "Master Services Agreement" || doc.Metadata["keywords"].Kind != metadata.List || doc.Metadata["author"].Text != "Ann Lee" {
		t.Errorf("the good properties are lost: %+v", doc.Metadata)
	}

	// A core part that is not XML: the document is read without metadata.
	p["docProps/core.xml"] = []byte("<cp:coreProperties><dc:title>Half")
	doc, err = run(t, zipParts(t, p), extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Metadata != nil || len(doc.Warnings) != 1 {
		t.Errorf("metadata %+v, warnings %q", doc.Metadata, doc.Warnings)
	}
}

func checkMetadata(t *testing.T, got, want metadata.Metadata) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("metadata %+v, want %d keys", got, len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Kind != w.Kind || g.Text != w.Text || !g.Date.Equal(w.Date) || strings.Join(g.List, "|") != strings.Join(w.List, "|") {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
}
