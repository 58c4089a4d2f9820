package odt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// reportHead and reportTail are the blocks of testdata/report.odt before
// and after its daily log, on their pages; the log's 90 paragraphs run
// from page 3 to page 7.
var reportHead = []string{
	"1 heading:1 Harbour Survey Report",
	"1 heading:1 Introduction",
	"1 paragraph:0 The survey counted ships in the harbour[1] over   one week.",
	"1 heading:2 Method",
	"1 paragraph:0 We walked along the quay.",
	"1 heading:3 Counting rules",
	"1 paragraph:0 1. Count the ships at dawn.",
	"1 paragraph:0 2. Count them again at dusk.",
	"1 paragraph:0 - sailing ships",
	"1 paragraph:0 - steam ships",
	"1 paragraph:0 3. Add the two counts.",
	"1 paragraph:0 - tugs",
	"1 paragraph:0 - ferries",
	"1 table:0 Day | Ships | Notes\nMonday | 12 | fog\nTuesday | 15\nclosed | closed | storm",
	"2 paragraph:0 The harbour from the pier:",
	"2 image:0 Image 1 (PNG, 8x6) in doc.odt: Harbour photo: A red square standing for the harbour",
	"3 heading:1 Results",
	"3 paragraph:0 Fifteen ships on the busiest day[i].",
	"3 paragraph:0 Ünïcödé — 日本語 — emoji 🎉",
	"3 paragraph:0 See the box:\nBoxed note odttextboxmarker",
	"3 heading:1 Daily log",
}

var reportTail = []string{
	"7 heading:1 Footnotes",
	"7 paragraph:0 Counted from the pier, odtfootnotemarker.",
	"7 heading:1 Endnotes",
	"7 paragraph:0 Tuesday, odtendnotemarker.",
	"7 heading:1 Comments",
	"7 paragraph:0 Bo Chen: Check the dates, odtcommentmarker.",
	"7 heading:1 Header",
	"7 paragraph:0 Harbour Board odtheadermarker",
	"7 heading:1 Footer",
	"7 paragraph:0 Confidential odtfootermarker page",
}

// TestReport reads the document LibreOffice made from report.fodt:
// every kind of content in reading order, notes, comments, header and
// footer once at the end, and as many pages as LibreOffice counted
// (meta:page-count), from its soft page breaks and one break-before.
func TestReport(t *testing.T) {
	doc := mustRun(t, fixture(t, "report.odt"))
	got := blockTexts(doc)
	if len(got) != len(reportHead)+90+len(reportTail) {
		t.Fatalf("%d blocks:\n%s", len(got), strings.Join(got, "\n"))
	}
	checkBlocks(t, got[:len(reportHead)], reportHead)
	checkBlocks(t, got[len(got)-len(reportTail):], reportTail)
	log := got[len(reportHead) : len(got)-len(reportTail)]
	day := regexp.MustCompile(`^([3-7]) paragraph:0 Day (\d+): `)
	for i, b := range log {
		m := day.FindStringSubmatch(b)
		if m == nil || m[2] != strconv.Itoa(i+1) {
			t.Errorf("log block %d: %q", i, b)
		}
	}
	if doc.Pages != 7 { // meta.xml: meta:page-count="7"
		t.Errorf("pages %d, LibreOffice counted 7", doc.Pages)
	}
	for _, absent := range []string{"odtdeletedmarker", "Contents"} {
		if strings.Contains(doc.Text, absent) {
			t.Errorf("text has %q (a tracked deletion, the table of contents)", absent)
		}
	}
	if doc.Title != "Harbour Survey Report" || len(doc.Images) != 1 || doc.Images[0].Width != 8 || doc.Images[0].Page != 2 || len(doc.Warnings) != 0 {
		t.Errorf("title %q, images %+v, warnings %q", doc.Title, doc.Images, doc.Warnings)
	}
	created, _ := extract.ParseDate("2024-03-01T09:30:00")
	modified, _ := extract.ParseDate("2024-03-02T10:00:00")
	checkMetadata(t, doc.Metadata, metadata.Metadata{
		"title":       {Kind: metadata.String, Text: "Harbour Survey Report"},
		"author":      {Kind: metadata.String, Text: "Ann Lee"}, // meta:initial-creator, not dc:creator
		"subject":     {Kind: metadata.String, Text: "Port logistics"},
		"description": {Kind: metadata.String, Text: "A small report for the Strata ODT reader."},
		"keywords":    {Kind: metadata.List, List: []string{"harbour", "survey"}},
		"created":     created,
		"modified":    modified,
		"language":    {Kind: metadata.String, Text: "en-GB"},
	})
}

// TestFlat reads the hand-written flat report.fodt: the same content,
// its picture from base64, and no pages (it records no layout).
func TestFlat(t *testing.T) {
	doc, err := Extractor{}.Extract(t.Context(), fixture(t, "report.fodt"), "doc.odt", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := blockTexts(doc)
	var want []string
	for _, b := range append(append([]string{}, reportHead...), reportTail...) {
		want = append(want, "0"+b[1:])
	}
	got = append(got[:len(reportHead)], got[len(got)-len(reportTail):]...)
	checkBlocks(t, got, want)
	if doc.Pages != 0 || len(doc.Images) != 1 || doc.Title != "Harbour Survey Report" {
		t.Errorf("pages %d, images %d, title %q", doc.Pages, len(doc.Images), doc.Title)
	}
}

// TestPages: soft page breaks where they fall (inside a paragraph,
// between table rows), page breaks of styles (before, after, a master
// page, inherited from a common style), none counted twice, and no pages
// at all without text:use-soft-page-breaks.
func TestPages(t *testing.T) {
	auto := `<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Standard"><style:paragraph-properties fo:break-before="page"/></style:style>` +
		`<style:style style:name="P2" style:family="paragraph" style:parent-style-name="Standard"><style:paragraph-properties fo:break-after="page"/></style:style>` +
		`<style:style style:name="P3" style:family="paragraph" style:parent-style-name="Chapter"/>` +
		`<style:style style:name="P4" style:family="paragraph" style:master-page-name="Landscape"/>` +
		`<style:style style:name="Tab1" style:family="table"><style:table-properties fo:break-before="page"/></style:style>`
	body := `<text:p text:style-name="P1">First, break-before at the top: page 1.</text:p>` +
		p(`Second<text:soft-page-break/> spans a soft break: still page 1.`) +
		p(`<text:soft-page-break/>Third starts page 3.`) +
		`<text:p text:style-name="P2">Fourth ends its page.</text:p>` +
		`<text:p text:style-name="P1">Fifth: break-after then break-before is one break: page 4.</text:p>` +
		`<table:table table:style-name="Tab1"><table:table-row><table:table-cell>` + p("Row 1, page 5") + `</table:table-cell></table:table-row>` +
		`<text:soft-page-break/><table:table-row><table:table-cell>` + p("Row 2, page 6") + `</table:table-cell></table:table-row></table:table>` +
		p(`After the table: page 6.`) +
		`<text:p text:style-name="P3">A Chapter paragraph: page 7.</text:p>` +
		`<text:p text:style-name="P4">A new master page: page 8.</text:p>` +
		p(`Note<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body>`+
			p(`A soft break <text:soft-page-break/>in a note is not the body's.`)+`</text:note-body></text:note>.`)
	d := newDoc("")
	d["content.xml"] = []byte(contentXML(auto, body, true))
	doc := mustRun(t, d.zip(t))
	checkBlocks(t, blockTexts(doc), []string{
		"1 paragraph:0 First, break-before at the top: page 1.",
		"1 paragraph:0 Second spans a soft break: still page 1.",
		"3 paragraph:0 Third starts page 3.",
		"3 paragraph:0 Fourth ends its page.",
		"4 paragraph:0 Fifth: break-after then break-before is one break: page 4.",
		"5 table:0 Row 1, page 5\nRow 2, page 6",
		"6 paragraph:0 After the table: page 6.",
		"7 paragraph:0 A Chapter paragraph: page 7.",
		"8 paragraph:0 A new master page: page 8.",
		"8 paragraph:0 Note[1].",
		"8 heading:1 Footnotes",
		"8 paragraph:0 A soft break in a note is not the body's.",
	})
	if doc.Pages != 8 {
		t.Errorf("pages %d", doc.Pages)
	}

	d["content.xml"] = []byte(contentXML(auto, body, false))
	doc = mustRun(t, d.zip(t))
	if doc.Pages != 0 || doc.Blocks[2].Page != 0 {
		t.Errorf("without use-soft-page-breaks: pages %d, block page %d", doc.Pages, doc.Blocks[2].Page)
	}
}

// TestMaxPages: pages beyond MaxPages are not read, nor the notes in
// them; the end sections are on the last page read.
func TestMaxPages(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxPages = 2
	doc, err := run(t, fixture(t, "report.odt"), lim)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{}, reportHead[:16]...)
	for _, b := range reportTail {
		if !strings.Contains(b, "Endnotes") && !strings.Contains(b, "odtendnotemarker") { // on page 3
			want = append(want, "2"+b[1:])
		}
	}
	checkBlocks(t, blockTexts(doc), want)
	if doc.Pages != 2 || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "MaxPages") {
		t.Errorf("pages %d, warnings %q", doc.Pages, doc.Warnings)
	}
}

// TestLists: markers by list style and level, numbering that starts
// anew, at a start value or where the previous list stopped, list
// headers without a marker. (And sections, shown and hidden.)
func TestLists(t *testing.T) {
	body := `<text:list text:style-name="Numbering_20_123">` +
		`<text:list-header>` + p("Header, no marker") + `</text:list-header>` +
		`<text:list-item>` + p("one") + p("second paragraph of one") + `</text:list-item>` +
		`<text:list-item>` + p("two") + `<text:list><text:list-item>` + p("bullet") +
		`<text:list><text:list-item>` + p("lettered, numbered") + `</text:list-item></text:list></text:list-item></text:list></text:list-item>` +
		`<text:list-item text:start-value="7">` + p("seven") + `</text:list-item></text:list>` +
		p("Between.") +
		`<text:list text:style-name="Numbering_20_123" text:continue-numbering="true"><text:list-item>` + p("eight") + `</text:list-item></text:list>` +
		`<text:list text:style-name="Numbering_20_123"><text:list-item>` + p("one again") + `</text:list-item></text:list>` +
		`<text:list text:style-name="Unknown"><text:list-item>` + h(2, "A heading in a list") + p("bullet of an unknown style") + `</text:list-item></text:list>` +
		`<text:section text:name="Hidden" text:display="none">` + p("Hidden section.") + `</text:section>` +
		`<text:section text:name="Shown">` + p("Shown section.") + `</text:section>`
	doc := mustRun(t, newDoc(body).zip(t))
	checkBlocks(t, blockTexts(doc), []string{
		"0 paragraph:0 Header, no marker",
		"0 paragraph:0 1. one",
		"0 paragraph:0 second paragraph of one",
		"0 paragraph:0 2. two",
		"0 paragraph:0 - bullet",
		"0 paragraph:0 1. lettered, numbered",
		"0 paragraph:0 7. seven",
		"0 paragraph:0 Between.",
		"0 paragraph:0 8. eight",
		"0 paragraph:0 1. one again",
		"0 heading:2 A heading in a list",
		"0 paragraph:0 bullet of an unknown style",
		"0 paragraph:0 Shown section.",
	})
}

// TestTables: one block per table; repeated cells and rows written out
// (up to maxRepeat), merged cells once, rows without text dropped, empty
// cells kept between others and dropped at the end of a row, nested
// tables flattened into their cell.
func TestTables(t *testing.T) {
	cell := func(text string) string { return `<table:table-cell>` + p(text) + `</table:table-cell>` }
	body := `<table:table><table:table-column table:number-columns-repeated="4"/>` +
		`<table:table-header-rows><table:table-row>` + cell("A") + cell("B") + cell("C") + `</table:table-row></table:table-header-rows>` +
		`<table:table-row>` + `<table:table-cell table:number-columns-spanned="2">` + p("merged") + `</table:table-cell><table:covered-table-cell/>` + cell("c") + `</table:table-row>` +
		`<table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="2">` + p("x") + `</table:table-cell></table:table-row>` +
		`<table:table-row><table:table-cell/><table:table-cell/></table:table-row>` +
		`<table:table-row><table:table-cell table:number-columns-repeated="1000"/>` + cell("far") + `<table:table-cell table:number-columns-repeated="16384"/></table:table-row>` +
		`<table:table-row><table:table-cell>` + p("outer") + `<table:table><table:table-row>` + cell("n1") + cell("n2") + `</table:table-row></table:table></table:table-cell>` + cell("") + cell("end") + `</table:table-row>` +
		`<table:table-row><table:table-cell table:number-columns-repeated="1000000">` + p("r") + `</table:table-cell></table:table-row>` +
		`</table:table>`
	doc := mustRun(t, newDoc(body).zip(t))
	if len(doc.Blocks) != 1 || doc.Blocks[0].Kind != extract.Table {
		t.Fatalf("blocks %q", blockTexts(doc))
	}
	want := []string{
		"A | B | C",
		"merged | c",
		"x | x",
		"x | x",
		strings.Repeat(" | ", maxEmptyRun) + "far",
		"outer n1 | n2 |  | end",
		strings.TrimSuffix(strings.Repeat("r | ", maxRepeat), " | "),
	}
	if got := doc.Text; got != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestWhitespace: runs of white space in the XML are one space, text:s,
// text:tab and text:line-break are kept.
func TestWhitespace(t *testing.T) {
	body := "<text:p>  Leading\n\t and   inner  <text:span> spaced </text:span>out<text:s/><text:s text:c=\"3\"/>x<text:tab/>y<text:line-break/>z  </text:p>"
	doc := mustRun(t, newDoc(body).zip(t))
	if got, want := doc.Text, "Leading and inner spaced out    x\ty\nz"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// TestHeadings: a heading's level is its own, else its style's, else 1;
// past 6 it is 6; a paragraph in a heading style (Heading_20_N, defined
// or not, or derived from one) is a heading; the Title style (or one
// derived from it) is a level-1 heading and the title when meta.xml has
// none; a heading too long for one is a paragraph.
func TestHeadings(t *testing.T) {
	auto := `<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Title"/>` +
		`<style:style style:name="P2" style:family="paragraph" style:parent-style-name="Heading_20_3"/>`
	long := strings.Repeat("long words ", 30)
	body := `<text:p text:style-name="P1">Derived   Title</text:p>` +
		`<text:h text:style-name="Heading_20_2">From the style</text:h>` +
		`<text:h>No level</text:h>` +
		`<text:h text:outline-level="9">Deep</text:h>` +
		`<text:h text:outline-level="2">Multi<text:line-break/>line</text:h>` +
		`<text:p text:style-name="Heading_20_2">A paragraph in a heading style</text:p>` +
		`<text:p text:style-name="P2">Derived from Heading 3</text:p>` +
		`<text:p text:style-name="Heading_20_x">Not a heading style</text:p>` +
		`<text:h text:outline-level="2">` + long + `</text:h>`
	d := newDoc("")
	d["content.xml"] = []byte(contentXML(auto, body, false))
	d["meta.xml"] = []byte(metaXML(""))
	doc := mustRun(t, d.zip(t))
	checkBlocks(t, blockTexts(doc), []string{
		"0 heading:1 Derived Title",
		"0 heading:2 From the style",
		"0 heading:1 No level",
		"0 heading:6 Deep",
		"0 heading:2 Multi line",
		"0 heading:2 A paragraph in a heading style",
		"0 heading:3 Derived from Heading 3",
		"0 paragraph:0 Not a heading style",
		"0 paragraph:0 " + strings.TrimSpace(long),
	})
	if doc.Title != "Derived Title" {
		t.Errorf("title %q", doc.Title)
	}
}

// TestEndSections: notes in order of their citations, footnotes and
// endnotes apart, comments with their authors, headers and footers of
// every page style once each, page-number fields and hidden headers
// left out.
func TestEndSections(t *testing.T) {
	note := func(class, cit, text string) string {
		return `<text:note text:note-class="` + class + `"><text:note-citation>` + cit + `</text:note-citation><text:note-body>` + text + `</text:note-body></text:note>`
	}
	body := p("One"+note("footnote", "1", p("First footnote.")+p("Its second paragraph.")+`<text:list><text:list-item>`+p("a list in a note")+`</text:list-item></text:list>`)+
		" two"+note("endnote", "i", p("An endnote."))+" three"+note("footnote", "2", p("Second footnote.")+
		`<table:table><table:table-row><table:table-cell>`+p("note")+`</table:table-cell><table:table-cell>`+p("table")+`</table:table-cell></table:table-row></table:table>`)+".") +
		p(`Commented<office:annotation><dc:creator>Ann</dc:creator><dc:date>2024-01-01T00:00:00</dc:date><text:p>Is this right?</text:p></office:annotation> text<office:annotation-end/>.`) +
		p(`<office:annotation><text:p>Anonymous remark.</text:p></office:annotation>Second.`)
	masters := `<style:master-page style:name="Standard"><style:header><text:p>Company header</text:p></style:header>` +
		`<style:header-left><text:p>Company header</text:p></style:header-left>` +
		`<style:footer><text:p>Page <text:page-number>3</text:page-number> of <text:page-count>9</text:page-count></text:p></style:footer></style:master-page>` +
		`<style:master-page style:name="Landscape"><style:header><text:p>Wide header</text:p>` +
		`<table:table><table:table-row><table:table-cell>` + p("h1") + `</table:table-cell><table:table-cell>` + p("h2") + `</table:table-cell></table:table-row></table:table></style:header>` +
		`<style:footer style:display="false"><text:p>Hidden footer</text:p></style:footer>` +
		`<style:footer-first><text:p>First page footer</text:p></style:footer-first></style:master-page>`
	d := newDoc(body)
	d["styles.xml"] = []byte(stylesXML(commonStyles, masters))
	doc := mustRun(t, d.zip(t))
	checkBlocks(t, blockTexts(doc), []string{
		"0 paragraph:0 One[1] two[i] three[2].",
		"0 paragraph:0 Commented text.",
		"0 paragraph:0 Second.",
		"0 heading:1 Footnotes",
		"0 paragraph:0 First footnote.\nIts second paragraph.\n- a list in a note",
		"0 paragraph:0 Second footnote.\nnote | table",
		"0 heading:1 Endnotes",
		"0 paragraph:0 An endnote.",
		"0 heading:1 Comments",
		"0 paragraph:0 Ann: Is this right?",
		"0 paragraph:0 Anonymous remark.",
		"0 heading:1 Header",
		"0 paragraph:0 Company header",
		"0 paragraph:0 Wide header\nh1 | h2",
		"0 heading:1 Footer",
		"0 paragraph:0 Page of",
		"0 paragraph:0 First page footer",
	})
}

// TestImages: PNG and JPEG pictures are kept after their paragraph, with
// their alternative text; a picture repeated is kept once; SVG, missing,
// external or out-of-zip pictures, and those over the limits, leave their
// alternative text in the paragraph.
func TestImages(t *testing.T) {
	body := p("Two pictures:"+picture("Pictures/a.png", "Red", "A red dot")+picture("Pictures/b.jpg", "", "Grey")) +
		p("Again:"+picture("Pictures/a.png", "Red", "")) +
		p("Vector:"+picture("Pictures/c.svg", "Chart", "")) +
		p(picture("Pictures/missing.png", "Gone", "")+picture("http://example.com/x.png", "Remote", "")+picture("../../etc/passwd", "Out", "")) +
		picture("Pictures/a2.png", "Anchored to the page", "")
	d := newDoc(body)
	d["Pictures/a.png"] = samplePNG(t)
	d["Pictures/a2.png"] = samplePNG(t)
	d["Pictures/b.jpg"] = sampleJPEG(t)
	d["Pictures/c.svg"] = []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)
	doc := mustRun(t, d.zip(t))
	checkBlocks(t, blockTexts(doc), []string{
		"0 paragraph:0 Two pictures:",
		"0 image:0 Image 1 (PNG, 4x3) in doc.odt: Red: A red dot",
		"0 image:0 Image 2 (JPEG, 5x2) in doc.odt: Grey",
		"0 paragraph:0 Again: [image: Red]",
		"0 paragraph:0 Vector: [image: Chart]",
		"0 paragraph:0 [image: Gone] [image: Remote] [image: Out]",
		"0 image:0 Image 3 (PNG, 4x3) in doc.odt: Anchored to the page",
	})
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "missing.png") {
		t.Errorf("warnings %q", doc.Warnings)
	}

	lim := extract.DefaultLimits()
	lim.MaxImages = 1
	doc, err := run(t, d.zip(t), lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Images) != 1 || !strings.Contains(doc.Text, "[image: Grey]") {
		t.Errorf("MaxImages 1: %d images, text %q", len(doc.Images), doc.Text)
	}
	lim = extract.DefaultLimits()
	lim.MaxImageBytes = 10
	if doc, err = run(t, d.zip(t), lim); err != nil || len(doc.Images) != 0 || !strings.Contains(doc.Text, "[image: Red: A red dot]") {
		t.Errorf("MaxImageBytes 10: %v, %+v", err, doc)
	}
}

// TestMetadata: dc:creator is the author only without an initial
// creator; a date that is none costs a warning.
func TestMetadata(t *testing.T) {
	d := newDoc(p("Body."))
	d["meta.xml"] = []byte(metaXML(`<dc:creator>Last Editor</dc:creator><meta:creation-date>not a date</meta:creation-date>` +
		`<meta:keyword>one</meta:keyword><meta:keyword> </meta:keyword><meta:keyword>two</meta:keyword>`))
	doc := mustRun(t, d.zip(t))
	checkMetadata(t, doc.Metadata, metadata.Metadata{
		"author":   {Kind: metadata.String, Text: "Last Editor"},
		"keywords": {Kind: metadata.List, List: []string{"one", "two"}},
	})
	if doc.Title != "" || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "created") {
		t.Errorf("title %q, warnings %q", doc.Title, doc.Warnings)
	}

	// A broken meta.xml costs the metadata, with a warning.
	d["meta.xml"] = []byte(`<office:document-meta` + namespaces + `><office:meta><dc:title>Half`)
	doc = mustRun(t, d.zip(t))
	if doc.Metadata != nil || len(doc.Warnings) != 1 {
		t.Errorf("metadata %v, warnings %q", doc.Metadata, doc.Warnings)
	}
}

func checkMetadata(t *testing.T, got, want metadata.Metadata) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("metadata %+v, want %d keys", got, len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Kind != w.Kind || g.Text != w.Text || !g.Date.Equal(w.Date) || fmt.Sprint(g.List) != fmt.Sprint(w.List) {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
}
