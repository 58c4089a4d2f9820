package pdf

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/unidoc/unipdf/v3/model"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
	"github.com/strata-kb/strata/shared/metadata"
)

// TestDocumentInfo: the document information dictionary, which
// pdftotext -htmlmeta prints with the text, becomes metadata.
func TestDocumentInfo(t *testing.T) {
	data := pdfwrite.MakeWithInfo(map[string]string{
		"Title":        "Master Services Agreement",
		"Author":       "Zoë Ångström & <Bob>",
		"Subject":      "Contracts",
		"Keywords":     "legal, contracts; 2024",
		"CreationDate": "D:20240131120000+01'00'",
		"ModDate":      "D:20240201",
		"Creator":      "Word",
		"Producer":     "Acrobat",
		"Department":   "Legal", // custom entries: pdftotext does not print them
	}, []pdfwrite.Page{{Lines: []string{"Body."}}}, nil)
	doc, err := Poppler{}.Extract(context.Background(), data, "msa.pdf", testLimits())
	if err != nil {
		t.Fatal(err)
	}
	created, _ := extract.ParseDate("2024-01-31T12:00:00+01:00")
	modified, _ := extract.ParseDate("2024-02-01T00:00:00Z") // poppler writes the time
	checkMetadata(t, doc.Metadata, metadata.Metadata{
		"title":    {Kind: metadata.String, Text: "Master Services Agreement"},
		"author":   {Kind: metadata.String, Text: "Zoë Ångström & <Bob>"},
		"subject":  {Kind: metadata.String, Text: "Contracts"},
		"keywords": {Kind: metadata.List, List: []string{"legal", "contracts", "2024"}},
		"created":  created,
		"modified": modified,
	})
	if doc.Title != "Master Services Agreement" || len(doc.Warnings) != 0 {
		t.Errorf("title %q, warnings %q", doc.Title, doc.Warnings)
	}
}

// TestBadDocumentInfo: a date that is none costs that value and a
// warning, never the file.
func TestBadDocumentInfo(t *testing.T) {
	data := pdfwrite.MakeWithInfo(map[string]string{
		"Author":       "Ann",
		"CreationDate": "yesterday",  // poppler prints nothing
		"ModDate":      "D:20241399", // poppler prints 2024-13-99T00:00:00Z
	}, []pdfwrite.Page{{Lines: []string{"Body."}}}, nil)
	doc, err := Poppler{}.Extract(context.Background(), data, "bad.pdf", testLimits())
	if err != nil {
		t.Fatal(err)
	}
	checkMetadata(t, doc.Metadata, metadata.Metadata{"author": {Kind: metadata.String, Text: "Ann"}})
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "modified") {
		t.Errorf("warnings %q, want one about modified", doc.Warnings)
	}
	if !strings.Contains(doc.Text, "Body.") {
		t.Errorf("text %q", doc.Text)
	}
}

// TestParseHTMLMetaInfo reads the head as poppler writes it, also the raw
// PDF dates of poppler before 0.80.
func TestParseHTMLMetaInfo(t *testing.T) {
	out := "<!DOCTYPE html><html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n<title>T &amp; U</title>\n" +
		"<meta name=\"Keywords\" content=\"a, b\"/>\n<meta name=\"Author\" content=\"Ann &quot;A&quot; Lee\"/>\n" +
		"<meta name=\"CreationDate\" content=\"D:20240131120000-05'30'\"/>\n<meta name=\"ModDate\" content=\"2024-01-31T12:00:00+01\"/>\n" +
		"<meta name=\"Author\" content=\"second\"/>\n<meta name=\"broken content=\"x\"/>\n</head>\n<body>\n<pre>\ntext\f</pre>\n</body>\n</html>\n"
	text, err := ParseHTMLMeta([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if text.Title != "T & U" || text.Info["Author"] != `Ann "A" Lee` || len(text.Info) != 4 {
		t.Fatalf("title %q info %q", text.Title, text.Info)
	}
	m, warnings := InfoMetadata(text.Info)
	created, _ := extract.ParseDate("2024-01-31T12:00:00-05:30")
	modified, _ := extract.ParseDate("2024-01-31T12:00:00+01:00")
	checkMetadata(t, m, metadata.Metadata{
		"author":   {Kind: metadata.String, Text: `Ann "A" Lee`},
		"keywords": {Kind: metadata.List, List: []string{"a", "b"}},
		"created":  created,
		"modified": modified,
	})
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
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

// TestUniPDFInfo: UniPDF reads the same dictionary itself.
func TestUniPDFInfo(t *testing.T) {
	data := pdfwrite.MakeWithInfo(map[string]string{
		"Title": "T", "Author": "Zoë", "Keywords": "a; b", "CreationDate": "D:20240131120000+01'00'",
	}, []pdfwrite.Page{{Lines: []string{"Body."}}}, nil)
	reader, err := model.NewPdfReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	m, warnings := InfoMetadata(uniPDFInfo(reader))
	created, _ := extract.ParseDate("2024-01-31T12:00:00+01:00")
	checkMetadata(t, m, metadata.Metadata{
		"title":    {Kind: metadata.String, Text: "T"},
		"author":   {Kind: metadata.String, Text: "Zoë"},
		"keywords": {Kind: metadata.List, List: []string{"a", "b"}},
		"created":  created,
	})
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
}
