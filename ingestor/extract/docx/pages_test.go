package docx

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// Page markers as Word writes them.
const (
	pageBreak    = `<w:r><w:br w:type="page"/></w:r>`
	renderedMark = `<w:lastRenderedPageBreak/>`
	// breakPara is the paragraph Word makes for Ctrl+Enter.
	breakPara = `<w:p>` + pageBreak + `</w:p>`
	// bookmarkPara is the empty paragraph Word leaves after it.
	bookmarkPara = `<w:p><w:bookmarkStart w:id="0" w:name="_GoBack"/><w:bookmarkEnd w:id="0"/></w:p>`
)

// runsPara is a paragraph of raw run XML.
func runsPara(xml ...string) string { return `<w:p>` + strings.Join(xml, "") + `</w:p>` }

// textRun is a run of text.
func textRun(s string) string {
	return `<w:r><w:t xml:space="preserve">` + xmlEscape(s) + `</w:t></w:r>`
}

// renderedText is a run starting a page Word laid out, as Word saves it.
func renderedText(s string) string {
	return `<w:r>` + renderedMark + `<w:t xml:space="preserve">` + xmlEscape(s) + `</w:t></w:r>`
}

// propsPara is a paragraph with raw w:pPr content and text.
func propsPara(pPr, s string) string {
	return `<w:p><w:pPr>` + pPr + `</w:pPr>` + textRun(s) + `</w:p>`
}

// sectionPara ends a section; typ is the w:type of that section (how it
// started), "" for none.
func sectionPara(typ, s string) string {
	sect := `<w:sectPr>`
	if typ != "" {
		sect += `<w:type w:val="` + typ + `"/>`
	}
	sect += `<w:pgSz w:w="11906" w:h="16838"/></w:sectPr>`
	return propsPara(sect, s)
}

// pagesOf lists "text@page" for each block (a figure by its image name,
// checked against the image's own page).
func pagesOf(tb testing.TB, doc *extract.Document) []string {
	tb.Helper()
	out := make([]string, len(doc.Blocks))
	for i, b := range doc.Blocks {
		s := doc.Text[b.Start:b.End]
		if b.Kind == extract.Figure {
			img := doc.Images[b.Image]
			s = img.Name
			if img.Page != b.Page {
				tb.Errorf("%s: block on page %d, image on page %d", s, b.Page, img.Page)
			}
		}
		out[i] = fmt.Sprintf("%s@%d", s, b.Page)
	}
	return out
}

func TestPages(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		edit  func(map[string][]byte)
		want  []string
		pages int
	}{
		{
			name: "explicit page breaks",
			body: para("", "one") +
				runsPara(textRun("spans"), pageBreak, textRun(" the break")) + // keeps the page it starts on
				para("", "two") +
				breakPara + bookmarkPara +
				para("berschrift1", "three") +
				runsPara(pageBreak, textRun("four")) + // text after a leading break is on the new page
				para("", "still four"),
			want:  []string{"one@1", "spans\n the break@1", "two@2", "three@3", "four@4", "still four@4"},
			pages: 4,
		},
		{
			name: "page breaks in a row make blank pages",
			body: para("", "one") + runsPara(pageBreak, pageBreak) + para("", "three"),
			want: []string{"one@1", "three@3"}, pages: 3,
		},
		{
			name: "rendered page breaks only",
			body: para("", "one") +
				runsPara(`<w:r><w:t xml:space="preserve">the end</w:t>`+renderedMark+`<w:t xml:space="preserve"> of page one</w:t></w:r>`) +
				para("", "two") +
				runsPara(renderedText("three"), textRun(" and")) +
				para("", "more three"),
			want:  []string{"one@1", "the end of page one@1", "two@2", "three and@3", "more three@3"},
			pages: 3,
		},
		{
			name: "explicit and rendered break at the same place count once",
			body: para("", "one") +
				breakPara + bookmarkPara + runsPara(renderedText("two")) + // Word's Ctrl+Enter
				runsPara(textRun("a"), pageBreak, renderedText("b")) + // a break inside a paragraph
				para("", "three") +
				`<w:p><w:pPr><w:pageBreakBefore/></w:pPr>` + renderedText("four") + `</w:p>` +
				runsPara(textRun("x")),
			want:  []string{"one@1", "two@2", "a\nb@2", "three@3", "four@4", "x@4"},
			pages: 4,
		},
		{
			name: "a rendered break after content following an explicit one counts",
			body: para("", "one") + breakPara + para("", "two") +
				runsPara(textRun("long"), `<w:r>`+renderedMark+`</w:r>`, textRun(" paragraph")) + para("", "three"),
			want:  []string{"one@1", "two@2", "long paragraph@2", "three@3"},
			pages: 3,
		},
		{
			name: "page break before and a next-page section",
			body: para("", "one") +
				propsPara(`<w:pageBreakBefore/>`, "two") +
				sectionPara("nextPage", "end of section one") + // the body's sectPr (no type) makes section two nextPage
				para("", "three"),
			want:  []string{"one@1", "two@2", "end of section one@2", "three@3"},
			pages: 3,
		},
		{
			name: "page break before a paragraph already at the top of a page adds none",
			body: propsPara(`<w:pageBreakBefore/>`, "one") + // first in the document
				breakPara + propsPara(`<w:pageBreakBefore/>`, "two") +
				propsPara(`<w:pageBreakBefore w:val="0"/>`, "still two") +
				propsPara(`<w:pageBreakBefore w:val="true"/>`, "three"),
			want:  []string{"one@1", "two@2", "still two@2", "three@3"},
			pages: 3,
		},
		{
			name: "page break before from the paragraph style",
			body: para("", "one") + para("ChapterHead", "two") +
				propsPara(`<w:pStyle w:val="ChapterHead"/><w:pageBreakBefore w:val="off"/>`, "still two") +
				para("Derived", "three"),
			edit: func(p map[string][]byte) {
				p["word/styles.xml"] = []byte(strings.Replace(string(p["word/styles.xml"]), `</w:styles>`,
					`<w:style w:type="paragraph" w:styleId="ChapterHead"><w:name w:val="Chapter Head Break"/><w:basedOn w:val="Normal"/>`+
						`<w:pPr><w:pageBreakBefore/></w:pPr></w:style>`+
						`<w:style w:type="paragraph" w:styleId="Derived"><w:name w:val="Derived"/><w:basedOn w:val="ChapterHead"/></w:style></w:styles>`, 1))
			},
			want:  []string{"one@1", "two@2", "still two@2", "three@3"},
			pages: 3,
		},
		{
			name: "a section's type says how it starts: continuous",
			body: para("", "one") +
				sectionPara("nextPage", "end of section one") + // section one's own type: irrelevant
				para("", "section two") +
				sectionPara("continuous", "end of section two") + // section two started continuously
				para("", "section three"), // the body's sectPr has no type: nextPage
			want:  []string{"one@1", "end of section one@1", "section two@1", "end of section two@1", "section three@2"},
			pages: 2,
		},
		{
			name: "a section's type says how it starts: explicit types",
			body: sectionPara("", "one") + sectionPara("oddPage", "two") + sectionPara("evenPage", "three") +
				para("", "four"),
			edit: func(p map[string][]byte) {
				p["word/document.xml"] = []byte(strings.Replace(string(p["word/document.xml"]),
					`<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body>`,
					`<w:sectPr><w:type w:val="nextColumn"/><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body>`, 1))
			},
			want:  []string{"one@1", "two@2", "three@3", "four@3"},
			pages: 3,
		},
		{
			name: "a section break and Word's rendered mark count once; a continuous one and a mark count once",
			body: sectionPara("", "one") +
				runsPara(renderedText("two")) + // next page section
				sectionPara("", "end of two") +
				runsPara(renderedText("three")) + // continuous section, broken naturally here
				sectionPara("continuous", "end of three") +
				para("", "four"), // the body's sectPr: nextPage
			want:  []string{"one@1", "two@2", "end of two@2", "three@3", "end of three@3", "four@4"},
			pages: 4,
		},
		{
			name: "rendered breaks in a table",
			body: para("", "before") +
				`<w:tbl>` +
				`<w:tr><w:tc>` + runsPara(renderedText("r1c1")) + `</w:tc><w:tc>` + runsPara(renderedText("r1c2")) + `</w:tc></w:tr>` + // the table starts page 2
				`<w:tr><w:tc>` + runsPara(renderedText("r2c1")) + `</w:tc><w:tc>` + runsPara(renderedText("r2c2")) + `</w:tc></w:tr>` + // row 2 starts page 3
				`<w:tr><w:tc>` + para("", "r3c1") + runsPara(renderedText("r3c1 cont")) + `</w:tc>` + // row 3 breaks inside its cells
				`<w:tc>` + runsPara(textRun("r3c2"), `<w:r>`+renderedMark+`</w:r>`, textRun(" cont")) + `</w:tc></w:tr>` +
				`</w:tbl>` +
				para("", "after"),
			want:  []string{"before@1", "r1c1 | r1c2\nr2c1 | r2c2\nr3c1 r3c1 cont | r3c2 cont@2", "after@4"},
			pages: 4,
		},
		{
			name: "a table after a page break: the mark in its first row is the same break",
			body: para("", "before") + breakPara +
				`<w:tbl><w:tr><w:tc>` + runsPara(renderedText("a")) + `</w:tc><w:tc>` + runsPara(renderedText("b")) + `</w:tc></w:tr></w:tbl>` +
				runsPara(renderedText("after")),
			want:  []string{"before@1", "a | b@2", "after@3"},
			pages: 3,
		},
		{
			name: "a nested table starting a row starts it once",
			body: para("", "before") +
				`<w:tbl><w:tr><w:tc>` + para("", "r1") + `</w:tc></w:tr>` +
				`<w:tr><w:tc><w:tbl><w:tr><w:tc>` + runsPara(renderedText("nested")) + `</w:tc></w:tr></w:tbl><w:p/></w:tc>` +
				`<w:tc>` + runsPara(renderedText("r2c2")) + `</w:tc></w:tr></w:tbl>` +
				para("", "after"),
			want:  []string{"before@1", "r1\nnested | r2c2@1", "after@2"},
			pages: 2,
		},
		{
			name: "images are on the page they are on",
			body: runsPara(textRun("text"), pageBreak, drawingRun(1, "rId10", "after the break", "")) +
				`<w:tbl><w:tr><w:tc>` + para("", "r1") + `</w:tc></w:tr>` +
				`<w:tr><w:tc>` + runsPara(renderedText("r2"), drawingRun(2, "rId11", "in row two", "")) + `</w:tc></w:tr></w:tbl>` +
				para("", "after"),
			want:  []string{"text@1", "image-1.png@2", "r1\nr2@2", "image-2.jpg@3", "after@3"},
			pages: 3,
		},
		{
			name: "a break at the very end",
			body: para("", "one") + breakPara,
			want: []string{"one@1"}, pages: 2,
		},
		{
			name: "deleted breaks and breaks in text boxes do not count",
			body: para("", "one") +
				`<w:p><w:del w:id="1"><w:r><w:br w:type="page"/></w:r></w:del>` + textRun("still one") + `</w:p>` +
				`<w:p><w:r><w:drawing><wps:txbx><w:txbxContent>` + runsPara(pageBreak, renderedText("boxed")) +
				`</w:txbxContent></wps:txbx></w:drawing></w:r>` + textRun("anchor") + `</w:p>` +
				breakPara + para("", "two"),
			want:  []string{"one@1", "still one@1", "boxed\nanchor@1", "two@2"},
			pages: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parts(t, tt.body)
			if tt.edit != nil {
				tt.edit(p)
			}
			doc, err := run(t, zipParts(t, p), extract.DefaultLimits()) // run checks the invariants of pagedProfile
			if err != nil {
				t.Fatal(err)
			}
			if got := pagesOf(t, doc); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pages:\n got %q\nwant %q", got, tt.want)
			}
			if doc.Pages != tt.pages {
				t.Errorf("Pages %d, want %d", doc.Pages, tt.pages)
			}
		})
	}
}

// TestNoPages: without a page break in the body the pages are unknown,
// not 1: a document Word never laid out says nothing about its pages.
func TestNoPages(t *testing.T) {
	tests := []struct {
		name string
		body string
		edit func(map[string][]byte)
	}{
		{name: "no markers", body: richBody()},
		{name: "page break before the first paragraph", body: propsPara(`<w:pageBreakBefore/>`, "one") + para("", "two")},
		{name: "page break before switched off", body: para("", "one") + propsPara(`<w:pageBreakBefore w:val="false"/>`, "two")},
		{
			name: "continuous sections",
			body: sectionPara("", "one") + sectionPara("continuous", "two") + para("", "three"),
			edit: func(p map[string][]byte) {
				p["word/document.xml"] = []byte(strings.Replace(string(p["word/document.xml"]),
					`<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body>`,
					`<w:sectPr><w:type w:val="continuous"/></w:sectPr></w:body>`, 1))
			},
		},
		{name: "a rendered mark before any content", body: runsPara(renderedText("one")) + para("", "two")},
		{
			name: "breaks in a table cell and a text box",
			body: `<w:tbl><w:tr><w:tc>` + runsPara(textRun("a"), pageBreak, textRun("b")) +
				propsPara(`<w:pageBreakBefore/>`, "c") + `</w:tc></w:tr></w:tbl>` +
				`<w:p><w:r><w:drawing><wps:txbx><w:txbxContent>` + runsPara(textRun("x"), pageBreak, renderedText("y")) +
				`</w:txbxContent></wps:txbx></w:drawing></w:r></w:p>`,
		},
		{name: "column breaks", body: runsPara(textRun("a"), `<w:r><w:br w:type="column"/></w:r>`, textRun("b")) + para("", "c")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parts(t, tt.body)
			if tt.edit != nil {
				tt.edit(p)
			}
			data := zipParts(t, p)
			doc, err := run(t, data, extract.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			checkNoPages(t, doc)
		})
	}
}

func checkNoPages(t *testing.T, doc *extract.Document) {
	t.Helper()
	if len(doc.Blocks) == 0 {
		t.Fatal("no blocks")
	}
	if doc.Pages != 0 {
		t.Errorf("Pages %d, want 0", doc.Pages)
	}
	for i, b := range doc.Blocks {
		if b.Page != 0 {
			t.Errorf("block %d on page %d, want 0", i, b.Page)
		}
	}
	for i, img := range doc.Images {
		if img.Page != 0 {
			t.Errorf("image %d on page %d, want 0", i, img.Page)
		}
	}
}

// pagedBody is a document as Word saves it after laying it out: natural
// breaks (lastRenderedPageBreak), a Ctrl+Enter page break, a table row
// starting a page, a page-break-before heading and a next-page section.
func pagedBody() string {
	row := func(mark bool, cells ...string) string {
		s := `<w:tr>`
		for _, c := range cells {
			r := textRun(c)
			if mark {
				r = renderedText(c)
			}
			s += `<w:tc><w:tcPr><w:tcW w:w="4000"/></w:tcPr>` + runsPara(r) + `</w:tc>`
		}
		return s + `</w:tr>`
	}
	return para("Title", "Employee Handbook") + // page 1
		para("", "Welcome to the handbook.") +
		runsPara(textRun("This paragraph runs over"), `<w:r>`+renderedMark+`</w:r>`, textRun(" the end of page one.")) +
		para("", "Second page text.") + // page 2
		breakPara + bookmarkPara +
		`<w:p><w:pPr><w:pStyle w:val="berschrift1"/></w:pPr>` + renderedText("Benefits") + `</w:p>` + // page 3
		`<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr>` +
		row(false, "Plan", "Cover") + row(false, "Health", "Full") + row(true, "Dental", "Half") + // this row starts page 4
		`</w:tbl>` +
		runsPara(textRun("Organisation chart:"), drawingRun(1, "rId10", "Organisation chart", "")) + // page 4
		`<w:p><w:pPr><w:pStyle w:val="Heading2"/><w:pageBreakBefore/></w:pPr>` + renderedText("Leave") + `</w:p>` + // page 5
		para("", "Twenty days a year.") +
		sectionPara("", "End of part one.") +
		runsPara(renderedText("Part two starts a new section.")) + // page 6 (the body's sectPr: nextPage)
		`<w:p>` + drawingRun(2, "rId11", "", "Office photo") + `</w:p>` +
		para("", "The end.")
}

func pagedDocx(tb testing.TB) []byte {
	p := parts(tb, pagedBody())
	delete(p, "word/media/fake.png")
	return zipParts(tb, p)
}

func TestGoldenPaged(t *testing.T) {
	doc, err := run(t, pagedDocx(t), extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := render(doc)
	path := filepath.Join("testdata", "paged.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("structure differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestPagesRandom builds documents from random sequences of paragraphs,
// tables, text boxes, pictures and every kind of page marker, in and
// out of place, and holds each to the invariants: pages in order, each
// block and image on a page 1..Pages, or no pages at all.
func TestPagesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	var inline func(depth int) string
	inline = func(depth int) string {
		switch rng.IntN(40) {
		case 0:
			return pageBreak
		case 1:
			return `<w:r>` + renderedMark + `</w:r>`
		case 2:
			return renderedText("r")
		case 3:
			return drawingRun(1, pick("rId10", "rId11"), "", "")
		case 4:
			if depth < 2 {
				return `<w:r><w:drawing><wps:txbx><w:txbxContent>` + block(rng, depth+1, inline) + `</w:txbxContent></wps:txbx></w:drawing></w:r>`
			}
		case 5:
			return `<w:r><w:br w:type="column"/></w:r>`
		}
		return textRun(pick("a", "b c", " "))
	}
	paged := 0
	const docs = 300
	for i := range docs {
		var body strings.Builder
		for range 1 + rng.IntN(12) {
			body.WriteString(block(rng, 0, inline))
		}
		data := docx(t, body.String())
		doc, err := Extractor{}.Extract(t.Context(), data, "sample.docx", extract.DefaultLimits())
		if err == nil {
			err = extracttest.Check(doc, data, profileFor(doc))
		}
		if err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, body.String())
		}
		if doc.Pages > 0 {
			paged++
		}
	}
	if paged < docs/10 || paged > docs*9/10 {
		t.Errorf("%d of %d documents with pages: the generator is lopsided", paged, docs)
	}
}

// block is a random paragraph or table for TestPagesRandom.
func block(rng *rand.Rand, depth int, inline func(int) string) string {
	if depth < 3 && rng.IntN(4) == 0 {
		var b strings.Builder
		b.WriteString(`<w:tbl>`)
		for range 1 + rng.IntN(3) {
			b.WriteString(`<w:tr>`)
			for range 1 + rng.IntN(3) {
				b.WriteString(`<w:tc>`)
				for range 1 + rng.IntN(2) {
					b.WriteString(block(rng, depth+1, inline))
				}
				b.WriteString(`</w:tc>`)
			}
			b.WriteString(`</w:tr>`)
		}
		b.WriteString(`</w:tbl>`)
		return b.String()
	}
	var b, runs strings.Builder
	for range rng.IntN(4) {
		runs.WriteString(inline(depth))
	}
	b.WriteString(`<w:p>`)
	late := rng.IntN(4) == 0 // properties after the runs, as no valid file has them
	if late {
		b.WriteString(runs.String())
	}
	if rng.IntN(8) == 0 {
		b.WriteString(`<w:pPr>`)
		switch rng.IntN(4) {
		case 0:
			b.WriteString(`<w:pageBreakBefore/>`)
		case 1:
			b.WriteString(`<w:sectPr><w:type w:val="` + []string{"continuous", "nextPage", "oddPage", "nextColumn", ""}[rng.IntN(5)] + `"/></w:sectPr>`)
		case 2:
			b.WriteString(`<w:sectPr/>`)
		case 3:
			b.WriteString(`<w:pStyle w:val="berschrift1"/><w:pageBreakBefore w:val="0"/>`)
		}
		b.WriteString(`</w:pPr>`)
	}
	if !late {
		b.WriteString(runs.String())
	}
	b.WriteString(`</w:p>`)
	return b.String()
}
