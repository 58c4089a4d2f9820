package odt

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// profile is what every ODT document promises: clean text, pictures with
// their figures, the meta.xml properties under the Prop keys and
// "language". It has no pages: a file that records its layout is held to
// pagedProfile (profileFor).
var profile = extracttest.Profile{
	Format:        "odt",
	Kinds:         []extract.Kind{extract.Paragraph, extract.Heading, extract.Table, extract.Figure},
	Images:        true,
	CleanText:     true,
	CleanTitle:    true,
	TrimmedBlocks: true,
	MetadataKeys: []string{extract.PropTitle, extract.PropAuthor, extract.PropSubject, extract.PropDescription,
		extract.PropKeywords, extract.PropCreated, extract.PropModified, metaLanguage},
	CleanMetadata: true,
}

// pagedProfile is profile for a file with soft page breaks: every block
// and picture on a page 1..Pages, in order.
var pagedProfile = func() extracttest.Profile {
	p := profile
	p.Pages = true
	return p
}()

func profileFor(doc *extract.Document) extracttest.Profile {
	if doc != nil && doc.Pages > 0 {
		return pagedProfile
	}
	return profile
}

func fixture(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// run extracts data and holds the document to its profile.
func run(tb testing.TB, data []byte, lim extract.Limits) (*extract.Document, error) {
	tb.Helper()
	doc, err := Extractor{}.Extract(context.Background(), data, "doc.odt", lim)
	if err == nil {
		extracttest.Verify(tb, doc, data, profileFor(doc))
	}
	return doc, err
}

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

func checkBlocks(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const namespaces = ` xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"` +
	` xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"` +
	` xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"` +
	` xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"` +
	` xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"` +
	` xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"` +
	` xmlns:xlink="http://www.w3.org/1999/xlink"` +
	` xmlns:dc="http://purl.org/dc/elements/1.1/"` +
	` xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"` +
	` xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"`

// contentXML is a content.xml with automatic styles and a body; paged
// says the body records soft page breaks.
func contentXML(auto, body string, paged bool) string {
	soft := ""
	if paged {
		soft = ` text:use-soft-page-breaks="true"`
	}
	return `<?xml version="1.0" encoding="UTF-8"?><office:document-content` + namespaces + ` office:version="1.3">` +
		`<office:automatic-styles>` + auto + `</office:automatic-styles>` +
		`<office:body><office:text` + soft + `>` + body + `</office:text></office:body></office:document-content>`
}

// stylesXML is a styles.xml with common styles and master pages.
func stylesXML(common, masters string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><office:document-styles` + namespaces + ` office:version="1.3">` +
		`<office:styles>` + common + `</office:styles>` +
		`<office:automatic-styles><style:style style:name="P1" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style></office:automatic-styles>` +
		`<office:master-styles>` + masters + `</office:master-styles></office:document-styles>`
}

func metaXML(meta string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><office:document-meta` + namespaces + ` office:version="1.3"><office:meta>` +
		meta + `</office:meta></office:document-meta>`
}

const manifestXML = `<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">
 <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
</manifest:manifest>`

// commonStyles are the common styles LibreOffice writes that the tests use.
const commonStyles = `<style:style style:name="Standard" style:family="paragraph"/>` +
	`<style:style style:name="Heading" style:family="paragraph" style:parent-style-name="Standard"/>` +
	`<style:style style:name="Heading_20_1" style:family="paragraph" style:parent-style-name="Heading" style:default-outline-level="1"/>` +
	`<style:style style:name="Heading_20_2" style:family="paragraph" style:parent-style-name="Heading" style:default-outline-level="2"/>` +
	`<style:style style:name="Title" style:family="paragraph" style:parent-style-name="Heading"/>` +
	`<style:style style:name="Chapter" style:family="paragraph" style:parent-style-name="Standard"><style:paragraph-properties fo:break-before="page"/></style:style>` +
	`<text:list-style style:name="Numbering_20_123"><text:list-level-style-number text:level="1" style:num-format="1"/>` +
	`<text:list-level-style-bullet text:level="2" text:bullet-char="-"/><text:list-level-style-number text:level="3" style:num-format="a"/></text:list-style>`

// doc is the parts of an ODT, by zip name.
type doc map[string][]byte

// newDoc is a document whose body is body, with the common styles,
// meta.xml giving a title, and no master pages.
func newDoc(body string) doc {
	return doc{
		"mimetype":              []byte("application/vnd.oasis.opendocument.text"),
		"META-INF/manifest.xml": []byte(manifestXML),
		"content.xml":           []byte(contentXML("", body, false)),
		"styles.xml":            []byte(stylesXML(commonStyles, "")),
		"meta.xml":              []byte(metaXML(`<dc:title>Test Document</dc:title>`)),
	}
}

// zip writes the document: mimetype first and stored, as ODF requires,
// then the parts in name order, compressed with method.
func (d doc) zipWith(tb testing.TB, method uint16) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "mimetype") != (names[j] == "mimetype") {
			return names[i] == "mimetype"
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		m := method
		if n == "mimetype" {
			m = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: m})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(d[n]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func (d doc) zip(tb testing.TB) []byte { return d.zipWith(tb, zip.Deflate) }

// p is a paragraph in the Standard style.
func p(text string) string { return `<text:p text:style-name="Standard">` + text + `</text:p>` }

// h is a heading at level.
func h(level int, text string) string {
	return fmt.Sprintf(`<text:h text:style-name="Heading_20_%d" text:outline-level="%d">%s</text:h>`, level, level, text)
}

// picture is an inline picture with alternative text.
func picture(href, title, desc string) string {
	return `<draw:frame draw:name="Picture" text:anchor-type="as-char"><draw:image xlink:href="` + href + `" xlink:type="simple"/>` +
		`<svg:title>` + title + `</svg:title><svg:desc>` + desc + `</svg:desc></draw:frame>`
}

// samplePNG is a real 4x3 PNG made by image/png.
func samplePNG(tb testing.TB) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// sampleJPEG is a real 5x2 JPEG made by image/jpeg.
func sampleJPEG(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 5, 2)), nil); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// bigBody is a body of about size bytes of XML: sections of headings,
// paragraphs with spans and notes, lists and tables.
func bigBody(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i%25 == 0 {
			b.WriteString(h(1, fmt.Sprintf("Chapter %d", i/25+1)))
		}
		b.WriteString(p(`The harbour master counted the <text:span text:style-name="T1">crates</text:span> again,<text:s/> and wrote the number in a ledger that nobody would read until spring.`))
		if i%10 == 3 {
			b.WriteString(`<text:list text:style-name="Numbering_20_123"><text:list-item>` + p("tea") + `</text:list-item><text:list-item>` + p("books") + `</text:list-item></text:list>`)
		}
		if i%20 == 7 {
			b.WriteString(`<table:table><table:table-column table:number-columns-repeated="2"/><table:table-row><table:table-cell>` + p("ship") +
				`</table:table-cell><table:table-cell>` + p("crates") + `</table:table-cell></table:table-row><table:table-row><table:table-cell>` +
				p("Mara") + `</table:table-cell><table:table-cell>` + p("40") + `</table:table-cell></table:table-row></table:table>`)
		}
		if i%30 == 11 {
			b.WriteString(p(`A note<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body>` + p("Footnote text.") + `</text:note-body></text:note> here.`))
		}
	}
	return b.String()
}
