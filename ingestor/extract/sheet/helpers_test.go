package sheet

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// profiles are what each format promises: clean text of headings and
// table rows, properties under the extract.Prop* keys; workbooks have
// pages (their sheets), CSV has none.
var (
	xlsxProfile = extracttest.Profile{
		Format:        "xlsx",
		Kinds:         []extract.Kind{extract.Heading, extract.Table},
		MaxLevel:      2,
		StepHeadings:  true,
		Pages:         true,
		CleanText:     true,
		CleanTitle:    true,
		TrimmedBlocks: true,
		MetadataKeys:  propKeys,
		CleanMetadata: true,
	}
	odsProfile = func() extracttest.Profile {
		p := xlsxProfile
		p.Format = "ods"
		return p
	}()
	csvProfile = extracttest.Profile{
		Format:        "csv",
		Kinds:         []extract.Kind{extract.Table},
		CleanText:     true,
		CleanTitle:    true,
		TrimmedBlocks: true,
		MetadataKeys:  []string{},
	}
	propKeys = []string{extract.PropTitle, extract.PropAuthor, extract.PropSubject, extract.PropKeywords,
		extract.PropDescription, extract.PropCreated, extract.PropModified}
)

func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// zipParts makes a zip of the parts (name -> content), in name order,
// deflated unless stored.
func zipParts(tb testing.TB, parts map[string]string, stored bool) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := sortedKeys(parts)
	if i := slices.Index(names, "mimetype"); i > 0 { // ODF wants it first
		names = append([]string{"mimetype"}, slices.Delete(names, i, i+1)...)
	}
	for _, name := range names {
		method := zip.Deflate
		if stored || name == "mimetype" {
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

// uncompressed is the size of an archive's XML parts expanded.
func uncompressed(tb testing.TB, data []byte) int64 {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".xml") {
			n += int64(f.UncompressedSize64)
		}
	}
	return n
}

// xlsxParts are the parts of a minimal workbook whose sheets are the
// given worksheet XML bodies (what goes inside <sheetData>, or a whole
// <worksheet> when it starts with "<worksheet"), named Sheet1, Sheet2...
func xlsxParts(sheets ...string) map[string]string {
	var wb, rels, types strings.Builder
	for i := range sheets {
		n := itoa(i + 1)
		wb.WriteString(`<sheet name="Sheet` + n + `" sheetId="` + n + `" r:id="rId` + n + `"/>`)
		rels.WriteString(`<Relationship Id="rId` + n + `" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet` + n + `.xml"/>`)
		types.WriteString(`<Override PartName="/xl/worksheets/sheet` + n + `.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`)
	}
	parts := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` + types.String() + `</Types>`,
		"_rels/.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
		"xl/workbook.xml": `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
			`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>` + wb.String() + `</sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			rels.String() + `</Relationships>`,
	}
	for i, s := range sheets {
		if !strings.HasPrefix(s, "<worksheet") {
			s = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + s + `</sheetData></worksheet>`
		}
		parts["xl/worksheets/sheet"+itoa(i+1)+".xml"] = `<?xml version="1.0" encoding="UTF-8"?>` + s
	}
	return parts
}

// sstXML is a shared strings part of the given strings.
func sstXML(items ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`)
	for _, s := range items {
		b.WriteString("<si><t>" + s + "</t></si>")
	}
	b.WriteString("</sst>")
	return b.String()
}

// odsSheet is a table:table of the given rows XML; style "ta2" hides it
// (odsFile's automatic styles).
func odsSheet(name, style, rows string) string {
	if style != "" {
		style = ` table:style-name="` + style + `"`
	}
	return `<table:table table:name="` + name + `"` + style + `>` + rows + `</table:table>`
}

// odsCell is a string cell.
func odsCell(text string) string {
	return `<table:table-cell office:value-type="string"><text:p>` + text + `</text:p></table:table-cell>`
}

const odsNS = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ` +
	`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ` +
	`xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" ` +
	`xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"`

// odsContent is content.xml with the sheets, and a table style ta2 that
// hides a sheet.
func odsContent(sheets string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><office:document-content ` + odsNS + ` office:version="1.3">` +
		`<office:automatic-styles><style:style style:name="ta1" style:family="table"><style:table-properties table:display="true"/></style:style>` +
		`<style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/></style:style></office:automatic-styles>` +
		`<office:body><office:spreadsheet>` + sheets + `</office:spreadsheet></office:body></office:document-content>`
}

// odsFile is an .ods archive of the sheets and, when given, meta.xml's
// office:meta children.
func odsFile(tb testing.TB, sheets, meta string) []byte {
	tb.Helper()
	parts := map[string]string{
		"mimetype":    "application/vnd.oasis.opendocument.spreadsheet",
		"content.xml": odsContent(sheets),
		"META-INF/manifest.xml": `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">` +
			`<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>` +
			`<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`,
	}
	if meta != "" {
		parts["meta.xml"] = `<?xml version="1.0" encoding="UTF-8"?><office:document-meta ` + odsNS + `><office:meta>` + meta + `</office:meta></office:document-meta>`
	}
	return zipParts(tb, parts, false)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// extractOK extracts with the default limits and fails the test on error
// or on a document that breaks the format's profile.
func extractOK(tb testing.TB, e extract.Extractor, p extracttest.Profile, data []byte, name string) *extract.Document {
	tb.Helper()
	doc, err := e.Extract(context.Background(), data, name, extract.DefaultLimits())
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if err := extracttest.Check(doc, data, p); err != nil {
		tb.Fatalf("%s:\n%v", name, err)
	}
	return doc
}

// block is one block as the tests compare it.
type block struct {
	Kind  extract.Kind
	Level int
	Page  int
	Text  string
}

func blocks(doc *extract.Document) []block {
	out := make([]block, len(doc.Blocks))
	for i, b := range doc.Blocks {
		out[i] = block{b.Kind, b.Level, b.Page, doc.Text[b.Start:b.End]}
	}
	return out
}

// texts are the blocks' texts.
func texts(doc *extract.Document) []string {
	out := make([]string, len(doc.Blocks))
	for i, b := range doc.Blocks {
		out[i] = doc.Text[b.Start:b.End]
	}
	return out
}
