package pdf

import (
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// FuzzAssemble feeds arbitrary pdftotext output (pages split on form feeds)
// and outline titles through the assembly: the document must keep the
// invariants (extracttest.Check): blocks in order, inside the text, on their
// pages, not blank, and the text valid UTF-8 without control characters.
func FuzzAssemble(f *testing.F) {
	f.Add("Introduction\n\nBody text.\fDetails\n\nMore.", "Introduction", "Details")
	f.Add("\x00\x1b[31m\u202eevil\ufb01le\f\f\f", "", "x")
	f.Add("ÄOHFMQJEJïBÈOOFVOjCMFTLJWFSZVOC VGCPVSHVJHOPOÊPDVLÌNJMFKPVFQSåTEFM", "a", "b")
	f.Fuzz(func(t *testing.T, text, title1, title2 string) {
		pages := strings.Split(text, "\f")
		outline := []OutlineItem{{Title: title1, Page: 1, Level: 1}, {Title: title2, Page: 2, Level: 2}}
		doc, err := Assemble(pages, nil, outline, nil, testLimits())
		if err != nil {
			t.Fatal(err) // the fuzzer's inputs are far under the budget
		}
		doc.Pages = len(pages)
		extracttest.Verify(t, doc, nil, profile)
	})
}

// FuzzParseHTMLMeta: any pdftotext output is either refused as corrupt or
// split into pages that hold no form feed, with a title free of markup.
func FuzzParseHTMLMeta(f *testing.F) {
	f.Add("<html><head>\n<title>A &amp; B</title>\n</head>\n<body>\n<pre>\none\f\ftwo\f</pre>\n</body>\n</html>\n")
	f.Add("<head><title></title></head><pre>\n</pre>")
	f.Add("</head></head><pre>\n<pre>\n\f</pre></pre>")
	f.Add("<head>\n<meta name=\"CreationDate\" content=\"D:20240131120000+01'00'\"/>\n<meta name=\"ModDate\" content=\"2024-13-99T00:00:00Z\"/>\n" +
		"<meta name=\"Keywords\" content=\"a;b, c\"/>\n</head><pre>\nx</pre>")
	f.Fuzz(func(t *testing.T, out string) {
		text, err := ParseHTMLMeta([]byte(out))
		if err != nil {
			return
		}
		for i, p := range text.Pages {
			if strings.Contains(p, "\f") {
				t.Fatalf("page %d holds a form feed", i)
			}
		}
		if strings.Contains(text.Title, "</title>") {
			t.Fatalf("title %q runs past its tag", text.Title)
		}
		if len(text.Info) > maxInfoMetas {
			t.Fatalf("%d info entries", len(text.Info))
		}
		m, warnings := InfoMetadata(text.Info)
		extracttest.Verify(t, &extract.Document{Format: "pdf", Metadata: m, Warnings: warnings}, nil, profile)
	})
}
