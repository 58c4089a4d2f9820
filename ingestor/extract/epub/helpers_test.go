package epub

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// profile is what every EPUB document promises: chapters as pages, the
// HTML reader's block kinds, clean text and titles, the OPF metadata
// under the Prop keys and "language".
var profile = extracttest.Profile{
	Format:        "epub",
	Kinds:         []extract.Kind{extract.Paragraph, extract.Heading, extract.Code, extract.Table},
	Pages:         true,
	CleanText:     true,
	CleanTitle:    true,
	TrimmedBlocks: true,
	MetadataKeys: []string{extract.PropTitle, extract.PropAuthor, extract.PropDescription, extract.PropKeywords,
		extract.PropCreated, extract.PropModified, metaLanguage},
	CleanMetadata: true,
}

// fixture reads a file of testdata.
func fixture(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// run extracts data and holds the document to the profile.
func run(tb testing.TB, data []byte, lim extract.Limits) (*extract.Document, error) {
	tb.Helper()
	doc, err := Extractor{}.Extract(context.Background(), data, "book.epub", lim)
	if err == nil {
		extracttest.Verify(tb, doc, data, profile)
	}
	return doc, err
}

// mustRun is run for a book that must extract.
func mustRun(tb testing.TB, data []byte) *extract.Document {
	tb.Helper()
	doc, err := run(tb, data, extract.DefaultLimits())
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}

// blockTexts lists "page kind:level text" for each block.
func blockTexts(doc *extract.Document) []string {
	out := make([]string, len(doc.Blocks))
	for i, b := range doc.Blocks {
		out[i] = fmt.Sprintf("%d %s:%d %s", b.Page, b.Kind, b.Level, doc.Text[b.Start:b.End])
	}
	return out
}

func checkBlocks(t *testing.T, doc *extract.Document, want []string) {
	t.Helper()
	got := blockTexts(doc)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const containerXML = `<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`

// chapter is an XHTML chapter with body as the content of <body>.
func chapter(title, body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>` + title + `</title></head><body>` + body + `</body></html>`
}

// opfXML is a package document with the given metadata elements,
// manifest items and spine itemrefs.
func opfXML(metadata, manifest, spine string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
<dc:identifier id="id">urn:uuid:1</dc:identifier>` + metadata + `</metadata>
<manifest>` + manifest + `</manifest>
<spine toc="ncx">` + spine + `</spine></package>`
}

// book is the parts of an EPUB, by zip name.
type book map[string]string

// newBook is a book of chapters c1.xhtml, c2.xhtml, ... in OEBPS, in
// spine order, with a navigation document titling each "Nav N".
func newBook(chapters ...string) book {
	b := book{"META-INF/container.xml": containerXML}
	var manifest, spine, nav strings.Builder
	manifest.WriteString(`<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>`)
	for i, c := range chapters {
		n := i + 1
		fmt.Fprintf(&manifest, `<item id="c%d" href="c%d.xhtml" media-type="application/xhtml+xml"/>`, n, n)
		fmt.Fprintf(&spine, `<itemref idref="c%d"/>`, n)
		fmt.Fprintf(&nav, `<li><a href="c%d.xhtml">Nav %d</a></li>`, n, n)
		b[fmt.Sprintf("OEBPS/c%d.xhtml", n)] = chapter(fmt.Sprintf("Chapter file %d", n), c)
	}
	b["OEBPS/content.opf"] = opfXML(`<dc:title>A Test Book</dc:title><dc:language>en</dc:language>`, manifest.String(), spine.String())
	b["OEBPS/nav.xhtml"] = chapter("Contents", `<nav epub:type="toc"><ol>`+nav.String()+`</ol></nav>`)
	return b
}

// zipBook writes the book as an EPUB: mimetype first and stored, as OCF
// requires, then the parts in name order, compressed with method.
func zipBook(tb testing.TB, b book, method uint16) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "mimetype", Method: zip.Store})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write([]byte(mimeType))
	names := make([]string, 0, len(b))
	for n := range b {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(b[n])); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func (b book) zip(tb testing.TB) []byte { return zipBook(tb, b, zip.Deflate) }

// bigBook is a book of n chapters of about size bytes of XHTML each, with
// sections, lists, tables and code.
func bigBook(n, size int) book {
	chapters := make([]string, n)
	for i := range chapters {
		var c strings.Builder
		fmt.Fprintf(&c, "<h1>Part %d</h1>", i+1)
		for j := 0; c.Len() < size; j++ {
			if j%12 == 0 {
				fmt.Fprintf(&c, "<h2>Section %d.%d</h2>", i+1, j/12+1)
			}
			c.WriteString(`<p>The harbour master counted the <em>crates</em> again, and wrote the number in a ledger that nobody would read until spring.</p>`)
			if j%20 == 5 {
				c.WriteString(`<ul><li>tea</li><li>books</li></ul><table><tr><td>ship</td><td>crates</td></tr><tr><td>Mara</td><td>40</td></tr></table><pre>ledger 1
  total 40</pre>`)
			}
		}
		chapters[i] = c.String()
	}
	return newBook(chapters...)
}
