package slides

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// profileOf is what every document of a format promises: one section per
// slide (a level-1 heading, then "(hidden)" and "Notes" at level 2), every
// block on its slide, clean text, images with their figures, the document
// properties under their keys.
func profileOf(format string) extracttest.Profile {
	return extracttest.Profile{
		Format:        format,
		Kinds:         []extract.Kind{extract.Heading, extract.Paragraph, extract.Table, extract.Figure},
		MaxLevel:      2,
		StepHeadings:  true,
		Pages:         true,
		Images:        true,
		CleanText:     true,
		CleanTitle:    true,
		TrimmedBlocks: true,
		MetadataKeys:  slices.Sorted(maps.Values(propKeys)),
		CleanMetadata: true,
	}
}

// readFile reads a file of testdata.
func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// extractorFor picks the extractor by the file's extension.
func extractorFor(name string) (extract.Extractor, string) {
	if strings.HasSuffix(name, ".odp") {
		return ODP{}, "odp"
	}
	return PPTX{}, "pptx"
}

// run extracts data named name and holds the document to its profile.
func run(tb testing.TB, name string, data []byte, lim extract.Limits) (*extract.Document, error) {
	tb.Helper()
	e, format := extractorFor(name)
	doc, err := e.Extract(context.Background(), data, name, lim)
	if err == nil {
		extracttest.Verify(tb, doc, data, profileOf(format))
	}
	return doc, err
}

// mustRun is run for a file that must extract.
func mustRun(tb testing.TB, name string, data []byte) *extract.Document {
	tb.Helper()
	doc, err := run(tb, name, data, extract.DefaultLimits())
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return doc
}

// line is one block as the tests compare it: "page kind level: text".
func line(doc *extract.Document, b extract.Block) string {
	return fmt.Sprintf("%d %s%d: %s", b.Page, b.Kind, b.Level, doc.Text[b.Start:b.End])
}

// lines lists every block of doc as line does.
func lines(doc *extract.Document) []string {
	out := make([]string, len(doc.Blocks))
	for i, b := range doc.Blocks {
		out[i] = line(doc, b)
	}
	return out
}

// find returns the block whose text contains marker, with the heading
// path above it ("Title > Notes"); it fails unless exactly one does.
func find(tb testing.TB, doc *extract.Document, marker string) (extract.Block, string) {
	tb.Helper()
	var (
		found []extract.Block
		paths []string
		open  []string // the open headings, by level
	)
	for _, b := range doc.Blocks {
		text := doc.Text[b.Start:b.End]
		if b.Kind == extract.Heading {
			open = append(open[:min(len(open), b.Level-1)], text)
		}
		if strings.Contains(text, marker) {
			found = append(found, b)
			paths = append(paths, strings.Join(open, " > "))
		}
	}
	if len(found) != 1 {
		tb.Fatalf("%d blocks hold %q; want 1:\n%s", len(found), marker, strings.Join(lines(doc), "\n"))
	}
	return found[0], paths[0]
}

// zipParts writes parts into a zip, in name order (mimetype first, as ODF
// wants, stored).
func zipParts(tb testing.TB, parts map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := slices.Sorted(maps.Keys(parts))
	sort.SliceStable(names, func(i, j int) bool { return names[i] == "mimetype" && names[j] != "mimetype" })
	for _, name := range names {
		method := zip.Deflate
		if name == "mimetype" {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(parts[name])); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// PresentationML as the tests write it.

const pptxNS = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"` +
	` xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"` +
	` xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"` +
	` xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"`

const relsOpen = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
	`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`

const relType = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

// slideXML is a slide part with the shapes of its shape tree.
func slideXML(attrs string, shapes ...string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sld ` + pptxNS + attrs + `><p:cSld><p:spTree>` +
		`<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` +
		strings.Join(shapes, "") + `</p:spTree></p:cSld></p:sld>`
}

// xfrm places a shape at x, y (EMU); a negative y leaves it unplaced.
func xfrm(x, y int) string {
	if y < 0 {
		return `<p:spPr/>`
	}
	return fmt.Sprintf(`<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="100" cy="100"/></a:xfrm></p:spPr>`, x, y)
}

// sp is a text box at x, y: a placeholder of type ph unless ph is "-",
// with one paragraph per para.
func sp(ph string, x, y int, paras ...string) string {
	nv := `<p:nvPr/>`
	if ph != "-" {
		nv = `<p:nvPr><p:ph ` + ph + `/></p:nvPr>`
	}
	var body strings.Builder
	for _, p := range paras {
		body.WriteString(`<a:p><a:pPr lvl="1"/><a:r><a:rPr lang="en-US"/><a:t>` + xmlEscape(p) + `</a:t></a:r><a:endParaRPr/></a:p>`)
	}
	return `<p:sp><p:nvSpPr><p:cNvPr id="2" name="Box"/><p:cNvSpPr/>` + nv + `</p:nvSpPr>` + xfrm(x, y) +
		`<p:txBody><a:bodyPr/><a:lstStyle/>` + body.String() + `</p:txBody></p:sp>`
}

// title is a title placeholder at the top.
func title(text string) string { return sp(`type="title"`, 0, 0, text) }

// pic is a picture of the relationship rid at x, y with alt text descr.
func pic(rid, descr string, x, y int) string {
	return `<p:pic><p:nvPicPr><p:cNvPr id="3" name="Picture" descr="` + xmlEscape(descr) + `"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>` +
		`<p:blipFill><a:blip r:embed="` + rid + `"/></p:blipFill>` + xfrm(x, y) + `</p:pic>`
}

// grp is a group at x, y of the shapes.
func grp(x, y int, shapes ...string) string {
	return `<p:grpSp><p:nvGrpSpPr><p:cNvPr id="4" name="Group"/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>` +
		fmt.Sprintf(`<p:grpSpPr><a:xfrm><a:off x="%d" y="%d"/><a:chOff x="0" y="0"/></a:xfrm></p:grpSpPr>`, x, y) +
		strings.Join(shapes, "") + `</p:grpSp>`
}

// table is a graphic frame at x, y holding a table of the rows.
func table(x, y int, rows ...[]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(`<a:tr h="100">`)
		for _, c := range r {
			b.WriteString(`<a:tc><a:txBody><a:bodyPr/><a:p><a:r><a:t>` + xmlEscape(c) + `</a:t></a:r></a:p></a:txBody><a:tcPr/></a:tc>`)
		}
		b.WriteString(`</a:tr>`)
	}
	return `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="5" name="Table"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>` +
		fmt.Sprintf(`<p:xfrm><a:off x="%d" y="%d"/></p:xfrm>`, x, y) +
		`<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tblGrid/>` +
		b.String() + `</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
}

// deck is a PPTX package: slides in order, each with optional relations
// (slide N's rels part), and extra parts.
type deck struct {
	slides []string          // slide part XML, in presentation order
	rels   map[int]string    // slide number -> Relationship elements
	extra  map[string]string // more parts by name
}

func (d deck) parts() map[string]string {
	parts := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
	}
	var ids, rels strings.Builder
	for i, s := range d.slides {
		n := i + 1
		fmt.Fprintf(&ids, `<p:sldId id="%d" r:id="rId%d"/>`, 255+n, n+10)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="%sslide" Target="slides/slide%d.xml"/>`, n+10, relType, n)
		parts[fmt.Sprintf("ppt/slides/slide%d.xml", n)] = s
		if r, ok := d.rels[n]; ok {
			parts[fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", n)] = relsOpen + r + `</Relationships>`
		}
	}
	parts["ppt/presentation.xml"] = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:presentation ` + pptxNS +
		`><p:sldIdLst>` + ids.String() + `</p:sldIdLst></p:presentation>`
	parts["ppt/_rels/presentation.xml.rels"] = relsOpen + rels.String() + `</Relationships>`
	maps.Copy(parts, d.extra)
	return parts
}

func (d deck) zip(tb testing.TB) []byte { return zipParts(tb, d.parts()) }

// rel is a Relationship element of a slide.
func relElem(id, typ, target string) string {
	return `<Relationship Id="` + id + `" Type="` + relType + typ + `" Target="` + target + `"/>`
}

// notesXML is a notes slide with a slide image, the notes body and a
// slide number.
func notesXML(paras ...string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:notes ` + pptxNS + `><p:cSld><p:spTree>` +
		`<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` +
		sp(`type="sldImg"`, 0, 0) + sp(`type="body" idx="1"`, -1, -1, paras...) + sp(`type="sldNum" idx="10"`, -1, -1, "7") +
		`</p:spTree></p:cSld></p:notes>`
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// OpenDocument as the tests write it.

const odpNS = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"` +
	` xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"` +
	` xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"` +
	` xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"` +
	` xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"` +
	` xmlns:xlink="http://www.w3.org/1999/xlink"` +
	` xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"` +
	` xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"`

// odpContent is content.xml with the automatic styles and pages.
func odpContent(styles string, pages ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><office:document-content ` + odpNS + ` office:version="1.3">` +
		`<office:automatic-styles>` + styles + `</office:automatic-styles><office:body><office:presentation>` +
		strings.Join(pages, "") + `</office:presentation></office:body></office:document-content>`
}

// odpPage is a draw:page with the attributes and shapes.
func odpPage(attrs string, shapes ...string) string {
	return `<draw:page draw:name="p" ` + attrs + `>` + strings.Join(shapes, "") + `</draw:page>`
}

// frame is a text frame at x, y (cm) of class (none if ""), a paragraph each.
func frame(class string, x, y float64, paras ...string) string {
	c := ""
	if class != "" {
		c = ` presentation:class="` + class + `"`
	}
	var b strings.Builder
	for _, p := range paras {
		b.WriteString(`<text:p>` + xmlEscape(p) + `</text:p>`)
	}
	return fmt.Sprintf(`<draw:frame svg:x="%gcm" svg:y="%gcm" svg:width="5cm" svg:height="1cm"%s><draw:text-box>%s</draw:text-box></draw:frame>`,
		x, y, c, b.String())
}

// odp is an ODP package of content.xml and extra parts.
func odp(tb testing.TB, content string, extra map[string]string) []byte {
	tb.Helper()
	parts := map[string]string{
		"mimetype":              odpMIME,
		"content.xml":           content,
		"META-INF/manifest.xml": `<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>`,
	}
	maps.Copy(parts, extra)
	return zipParts(tb, parts)
}
