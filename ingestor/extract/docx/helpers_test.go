package docx

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// Samples are built here from XML written for the tests, so no
// third-party document is committed.

const docOpen = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"` +
	` xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"` +
	` xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"` +
	` xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"` +
	` xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"` +
	` xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"` +
	` xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"` +
	` xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"` +
	` xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"` +
	` mc:Ignorable="wps"><w:body>`

const docClose = `<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body></w:document>`

const contentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
	`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
	`<Default Extension="xml" ContentType="application/xml"/>` +
	`<Default Extension="png" ContentType="image/png"/>` +
	`<Default Extension="jpeg" ContentType="image/jpeg"/>` +
	`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
	`</Types>`

const stylesXML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
	`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:keepNext/><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs><w:outlineLvl w:val="0"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter Head"/><w:basedOn w:val="berschrift1"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/></w:style>` +
	`<w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="Heading 1 Char"/></w:style>` +
	`</w:styles>`

const relsXML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
	`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>` +
	`<Relationship Id="rId10" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/>` +
	`<Relationship Id="rId11" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="/word/media/photo.jpeg"/>` +
	`<Relationship Id="rId12" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/fake.png"/>` +
	`<Relationship Id="rId13" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="http://example.com/x.png" TargetMode="External"/>` +
	`<Relationship Id="rId14" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/missing.png"/>` +
	`</Relationships>`

func coreXML(title string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"` +
		` xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/">` +
		`<dc:title>` + xmlEscape(title) + `</dc:title><dc:creator>Test</dc:creator></cp:coreProperties>`
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// para is a paragraph with an optional style and plain-text runs.
func para(style string, runs ...string) string {
	var b strings.Builder
	b.WriteString("<w:p>")
	if style != "" {
		fmt.Fprintf(&b, `<w:pPr><w:pStyle w:val="%s"/></w:pPr>`, style)
	}
	for _, r := range runs {
		fmt.Fprintf(&b, `<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">%s</w:t></w:r>`, xmlEscape(r))
	}
	b.WriteString("</w:p>")
	return b.String()
}

// drawingRun is an inline picture with alt text, as Word writes it.
func drawingRun(id int, relID, descr, title string) string {
	return fmt.Sprintf(`<w:r><w:drawing><wp:inline><wp:extent cx="38100" cy="28575"/>`+
		`<wp:docPr id="%d" name="Picture %d" descr="%s" title="%s"/>`+
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>`+
		`<pic:nvPicPr><pic:cNvPr id="0" name="x.png"/><pic:cNvPicPr/></pic:nvPicPr>`+
		`<pic:blipFill><a:blip r:embed="%s"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>`+
		`</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`,
		id, id, xmlEscape(descr), xmlEscape(title), relID)
}

func table(rows ...[]string) string {
	var b strings.Builder
	b.WriteString(`<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="4000"/></w:tblGrid>`)
	for _, r := range rows {
		b.WriteString("<w:tr>")
		for _, c := range r {
			b.WriteString("<w:tc><w:tcPr><w:tcW w:w=\"4000\"/></w:tcPr>")
			if strings.HasPrefix(c, "<") { // raw XML, e.g. a nested table
				b.WriteString(c)
				b.WriteString("<w:p/>")
			} else {
				b.WriteString(para("", c))
			}
			b.WriteString("</w:tc>")
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	return b.String()
}

// samplePNG is a real 4x3 PNG made by image/png.
func samplePNG(tb testing.TB) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for x := 0; x < 4; x++ {
		img.Set(x, 1, color.RGBA{R: 200, A: 255})
	}
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

// parts returns the parts of a complete document with body as the
// content of w:body. Tests change or delete entries before zipping.
func parts(tb testing.TB, body string) map[string][]byte {
	return map[string][]byte{
		"[Content_Types].xml":          []byte(contentTypes),
		"word/document.xml":            []byte(docOpen + body + docClose),
		"word/styles.xml":              []byte(stylesXML),
		"word/_rels/document.xml.rels": []byte(relsXML),
		"docProps/core.xml":            []byte(coreXML("")),
		"word/media/image1.png":        samplePNG(tb),
		"word/media/photo.jpeg":        sampleJPEG(tb),
		"word/media/fake.png":          []byte("GIF89a not really a png"),
	}
}

// zipParts writes parts into a deflated zip, [Content_Types].xml first
// and the rest sorted so the bytes are reproducible.
func zipParts(tb testing.TB, p map[string][]byte) []byte {
	return zipPartsMethod(tb, p, zip.Deflate)
}

// zipPartsMethod is zipParts with a choice of compression; stored
// (uncompressed) samples let the fuzzer mutate the XML directly.
func zipPartsMethod(tb testing.TB, p map[string][]byte, method uint16) []byte {
	tb.Helper()
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ci, cj := names[i] == "[Content_Types].xml", names[j] == "[Content_Types].xml"
		if ci != cj {
			return ci
		}
		return names[i] < names[j]
	})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(p[n]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func docx(tb testing.TB, body string) []byte { return zipParts(tb, parts(tb, body)) }

// richBody exercises most of what the extractor reads.
func richBody() string {
	nested := table([]string{"n1", "n2"}, []string{"n3", ""})
	return para("Title", "Quarterly ", "Report") +
		para("berschrift1", "Introduction") +
		para("", "First line", "") +
		`<w:p><w:r><w:t>Col A</w:t></w:r><w:r><w:tab/><w:t>Col B</w:t><w:br/><w:t>next line</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>list item one</w:t></w:r></w:p>` +
		para("") + // empty paragraph, skipped
		para("Heading2", "Data") +
		table([]string{"Name", "Value"}, []string{"alpha", "1"}, []string{"", ""}, []string{"beta", nested}) +
		`<w:p>` + drawingRun(1, "rId10", "A red line on white", "Red line") + `</w:p>` +
		`<w:p><w:r><w:t xml:space="preserve">Kept </w:t></w:r><w:del w:id="1"><w:r><w:delText>deleted</w:delText></w:r></w:del>` +
		`<w:ins w:id="2"><w:r><w:t>inserted</w:t></w:r></w:ins>` +
		`<w:hyperlink r:id="rId99"><w:r><w:t xml:space="preserve"> link</w:t></w:r></w:hyperlink>` +
		`<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r>` +
		`<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>7</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>` +
		`<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="5" name="Text Box 5"/>` +
		`<a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent>` + para("", "Boxed text") + `</w:txbxContent></wps:txbx></wps:wsp>` +
		`</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent>` +
		para("", "Boxed text") + `</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>` +
		`<w:r><w:t>Anchor paragraph</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:outlineLvl w:val="2"/></w:pPr><w:r><w:t>Outline heading</w:t></w:r></w:p>` +
		para("Chapter", "Derived heading") +
		`<w:p>` + drawingRun(2, "rId11", "", "Photo title") + drawingRun(3, "rId12", "fake", "") +
		drawingRun(4, "rId13", "external", "") + drawingRun(5, "rId10", "same picture again", "") + `</w:p>` +
		`<w:p><w:r><w:t>E = mc</w:t></w:r><m:oMath><m:r><m:t>²</m:t></m:r></m:oMath></w:p>` +
		para("", "Ünïcödé — 日本語 — emoji 🎉")
}

// profile is what every DOCX document promises: clean text (no control
// characters), images with their figures, the core properties under
// their keys (coreKeys), cleaned; a zip archive MaxUncompressed bounds.
// It has no pages: a document whose body records page breaks is held to
// pagedProfile instead (profileFor).
var profile = extracttest.Profile{
	Format:        "docx",
	Images:        true,
	CleanText:     true,
	CleanTitle:    true,
	TrimmedBlocks: true,
	MetadataKeys:  slices.Collect(maps.Values(coreKeys)),
	CleanMetadata: true,
}

// pagedProfile is profile for a document with page breaks: every block
// and image on a page 1..Pages, in order.
var pagedProfile = func() extracttest.Profile {
	p := profile
	p.Pages = true
	return p
}()

// profileFor is the profile doc is held to: with pages or without, as
// its body says (a DOCX either knows the page of every block or of none).
func profileFor(doc *extract.Document) extracttest.Profile {
	if doc != nil && doc.Pages > 0 {
		return pagedProfile
	}
	return profile
}

func run(tb testing.TB, data []byte, lim extract.Limits) (*extract.Document, error) {
	tb.Helper()
	doc, err := Extractor{}.Extract(context.Background(), data, "sample.docx", lim)
	if err == nil {
		extracttest.Verify(tb, doc, data, profileFor(doc))
	}
	return doc, err
}

// blockTexts lists "kind:level:text" for each block.
func blockTexts(doc *extract.Document) []string {
	out := make([]string, len(doc.Blocks))
	for i, b := range doc.Blocks {
		out[i] = fmt.Sprintf("%s:%d:%s", b.Kind, b.Level, doc.Text[b.Start:b.End])
	}
	return out
}
