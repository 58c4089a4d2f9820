package docx

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// partXML is a part whose root element is w:root, holding body, with
// the namespaces of docOpen.
func partXML(root, body string) string {
	open := strings.TrimSuffix(strings.Replace(docOpen, "<w:document", "<w:"+root, 1), "<w:body>")
	return open + body + "</w:" + root + ">"
}

// rel is a relationship of type typ (the last part of its URI, in the
// transitional namespace unless typ is a whole URI).
func rel(id, typ, target string) string {
	if !strings.Contains(typ, "/") {
		typ = nsR + "/" + typ
	}
	return `<Relationship Id="` + id + `" Type="` + typ + `" Target="` + target + `"/>`
}

// withRels adds relationships to the body's.
func withRels(p map[string][]byte, rels ...string) {
	p["word/_rels/document.xml.rels"] = []byte(strings.Replace(string(p["word/_rels/document.xml.rels"]),
		"</Relationships>", strings.Join(rels, "")+"</Relationships>", 1))
}

// relsXMLOf is a whole .rels part.
func relsXMLOf(rels ...string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
		`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		strings.Join(rels, "") + `</Relationships>`)
}

// note is a w:footnote or w:endnote; typ is its w:type, "" for none.
func note(kind, id, typ, body string) string {
	t := ""
	if typ != "" {
		t = ` w:type="` + typ + `"`
	}
	return `<w:` + kind + ` w:id="` + id + `"` + t + `>` + body + `</w:` + kind + `>`
}

// separators are the notes Word writes first in footnotes.xml.
var separators = note("footnote", "-1", "separator", `<w:p><w:r><w:separator/></w:r></w:p>`) +
	note("footnote", "0", "continuationSeparator", `<w:p><w:r><w:continuationSeparator/></w:r></w:p>`) +
	note("footnote", "1", "continuationNotice", para("", "continued on the next page"))

// comment is a w:comment by author ("" for none).
func comment(id, author, body string) string {
	a := ""
	if author != "" {
		a = ` w:author="` + xmlEscape(author) + `"`
	}
	return `<w:comment w:id="` + id + `"` + a + ` w:date="2024-05-01T10:00:00Z">` + body + `</w:comment>`
}

// withHeader adds a header part to p under relationship id.
func withHeader(p map[string][]byte, id, name, body string) {
	withRels(p, rel(id, "header", name))
	p["word/"+name] = []byte(partXML("hdr", body))
}

// trailingParts is a document with a header, a footer, notes and
// comments, for the conformance suite and the fuzzer.
func trailingParts(tb testing.TB) map[string][]byte {
	p := parts(tb, para("berschrift1", "Body")+para("", "Text."))
	withHeader(p, "rId20", "header1.xml", para("", "Acme")+table([]string{"Rev", "3"}))
	withRels(p, rel("rId21", "footer", "footer1.xml"))
	p["word/footer1.xml"] = []byte(partXML("ftr", para("", "Page 1")))
	p["word/footnotes.xml"] = []byte(partXML("footnotes", separators+note("footnote", "2", "", para("", "A footnote."))))
	p["word/endnotes.xml"] = []byte(partXML("endnotes", note("endnote", "1", "", para("", "An endnote."))))
	p["word/comments.xml"] = []byte(partXML("comments", comment("0", "Ana", para("", "A comment."))))
	return p
}

func trailingFixture(tb testing.TB) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "trailing.docx"))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// TestTrailingFixture reads a file LibreOffice made (testdata/README.md):
// each marker word in its block, under its group's heading, on the last
// page.
func TestTrailingFixture(t *testing.T) {
	doc, err := run(t, trailingFixture(t), extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"heading:1:Fixture body@1",
		"paragraph:0:First page text with a note.@1",
		"paragraph:0:Second page text with an endnote and a comment.@2",
		"heading:1:Header@2",
		"paragraph:0:docxheadermarker Company Confidential@2", // the first-page header has the same text: written once
		"table:0:Revision | 3@2",
		"heading:1:Footer@2", // the first-page footer is empty
		"paragraph:0:docxfootermarker see the policy page@2",
		"heading:1:Footnotes@2", // the separators are not notes
		"paragraph:0:docxfootnotemarker the footnote text@2",
		"heading:1:Endnotes@2",
		"paragraph:0:docxendnotemarker the endnote text@2",
		"heading:1:Comments@2",
		"paragraph:0:Ana: docxcommentmarker please check@2",
	}
	if got := blockPages(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("blocks:\n got %q\nwant %q", got, want)
	}
	for marker, heading := range map[string]string{
		"docxheadermarker":   "Header",
		"docxfootermarker":   "Footer",
		"docxfootnotemarker": "Footnotes",
		"docxendnotemarker":  "Endnotes",
		"docxcommentmarker":  "Comments",
	} {
		if got := headingOver(doc, marker); got != heading {
			t.Errorf("%s is under %q, want %q", marker, got, heading)
		}
	}
	if doc.Pages != 2 || doc.Title != "Trailing parts fixture" || len(doc.Warnings) != 0 {
		t.Errorf("Pages %d, title %q, warnings %q", doc.Pages, doc.Title, doc.Warnings)
	}
}

// blockPages lists "kind:level:text@page" for each block.
func blockPages(doc *extract.Document) []string {
	out := blockTexts(doc)
	for i, b := range doc.Blocks {
		out[i] += "@" + itoa(b.Page)
	}
	return out
}

// headingOver is the text of the last heading before the one block
// holding marker, "" if there is none or not exactly one such block.
func headingOver(doc *extract.Document, marker string) string {
	found, heading := "", ""
	n := 0
	for _, b := range doc.Blocks {
		text := doc.Text[b.Start:b.End]
		switch {
		case b.Kind == extract.Heading:
			heading = text
		case strings.Contains(text, marker):
			found = heading
			n++
		}
	}
	if n != 1 {
		return ""
	}
	return found
}

func TestTrailing(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		edit   func(map[string][]byte)
		blocks []string
		title  string
		images int
		warn   string // a warning that must be there
	}{
		{
			name: "the same header text is written once",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				withHeader(p, "rId20", "header1.xml", para("", "Acme Corp")+para("", "Confidential")) // default
				withHeader(p, "rId21", "header2.xml", para("", "Acme Corp"))                          // first page
				withHeader(p, "rId22", "header3.xml", para("", "Acme Corp")+para("", "Draft"))        // next section
				withRels(p, rel("rId23", "header", "/word/header1.xml"))                              // the same part again
				p["word/header9.xml"] = []byte(partXML("hdr", para("", "left by an old revision")))   // not the body's
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Header", "paragraph:0:Acme Corp", "paragraph:0:Confidential", "paragraph:0:Draft"},
		},
		{
			name: "groups in order, each under its heading",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				p["word/comments.xml"] = []byte(partXML("comments",
					comment("0", "Ana", para("", "first line")+para("", "second line"))+
						comment("1", "", para("", "anonymous"))+
						comment("2", " Bo\n  Berg ", para("", "spaced name"))+
						comment("3", "Cy", para("", " "))))
				p["word/endnotes.xml"] = []byte(partXML("endnotes", note("endnote", "1", "normal", para("", "an endnote"))))
				p["word/footnotes.xml"] = []byte(partXML("footnotes", separators+
					note("footnote", "2", "", para("", "Ibid."))+note("footnote", "3", "", para("", "Ibid."))+
					note("footnote", "4", "", table([]string{"k", "v"}))))
				withRels(p, rel("rId30", "footer", "footer1.xml"))
				p["word/footer1.xml"] = []byte(partXML("ftr", `<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r>`+
					`<w:fldSimple w:instr=" PAGE "><w:r><w:t>3</w:t></w:r></w:fldSimple>`+
					`<w:hyperlink r:id="rId1"><w:r><w:t xml:space="preserve"> of the site</w:t></w:r></w:hyperlink></w:p>`))
				withHeader(p, "rId31", "header1.xml", para("", "The header"))
			},
			blocks: []string{
				"paragraph:0:Body.",
				"heading:1:Header", "paragraph:0:The header",
				"heading:1:Footer", "paragraph:0:Page 3 of the site",
				"heading:1:Footnotes", "paragraph:0:Ibid.", "paragraph:0:Ibid.", "table:0:k | v", // notes are not merged
				"heading:1:Endnotes", "paragraph:0:an endnote",
				"heading:1:Comments", "paragraph:0:Ana: first line\nsecond line", "paragraph:0:anonymous", "paragraph:0:Bo Berg: spaced name",
			},
		},
		{
			name: "empty groups have no heading",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				withHeader(p, "rId20", "header1.xml", `<w:p/>`+para("", " ")+table([]string{"", ""}))
				p["word/footnotes.xml"] = []byte(partXML("footnotes", separators))
				p["word/comments.xml"] = []byte(partXML("comments", comment("0", "Ana", `<w:p/>`)))
			},
			blocks: []string{"paragraph:0:Body."},
		},
		{
			name: "headings in them stay under the group's; the title is the body's",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				p["word/footnotes.xml"] = []byte(partXML("footnotes",
					note("footnote", "1", "", para("berschrift1", "Note heading")+para("", "note text"))))
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Footnotes", "heading:2:Note heading", "paragraph:0:note text"},
		},
		{
			name: "text boxes and tables in a header read as in the body",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				withHeader(p, "rId20", "header1.xml", table([]string{"a", "b"})+
					`<w:p><w:r><w:drawing><wps:txbx><w:txbxContent>`+para("", "boxed")+`</w:txbxContent></wps:txbx></w:drawing></w:r>`+
					`<w:r><w:t>anchor</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>`)
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Header", "table:0:a | b", "paragraph:0:boxed\nanchor"},
		},
		{
			name: "a header's pictures come through its own relationships, once",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				// rId1 is styles.xml in the body's relationships.
				withHeader(p, "rId20", "header1.xml", `<w:p>`+drawingRun(1, "rId1", "logo", "")+`</w:p>`)
				p["word/_rels/header1.xml.rels"] = relsXMLOf(rel("rId1", "image", "media/image1.png"))
				withHeader(p, "rId21", "header2.xml", `<w:p>`+drawingRun(1, "rId7", "logo", "")+`</w:p>`)
				p["word/_rels/header2.xml.rels"] = relsXMLOf(rel("rId7", "image", "/word/media/image1.png"))
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Header", "image:0:Image 1 (PNG, 4x3) in sample.docx: logo"},
			images: 1,
		},
		{
			name: "strict relationship types",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				withRels(p, rel("rId20", nsRStrict+"/footer", "footer1.xml"))
				p["word/footer1.xml"] = []byte(partXML("ftr", para("", "strict footer")))
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Footer", "paragraph:0:strict footer"},
		},
		{
			name: "a header the archive lacks",
			body: para("", "Body."),
			edit: func(p map[string][]byte) {
				withRels(p, rel("rId20", "header", "header1.xml"))
				p["word/footnotes.xml"] = []byte(partXML("footnotes", note("footnote", "1", "", para("", "a note"))))
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Footnotes", "paragraph:0:a note"},
			warn:   "word/header1.xml not in the archive",
		},
		{
			name: "only the trailing parts have text",
			body: "",
			edit: func(p map[string][]byte) {
				p["word/comments.xml"] = []byte(partXML("comments", comment("0", "Ana", para("Title", "not the title"))))
			},
			blocks: []string{"heading:1:Comments", "paragraph:0:Ana: not the title"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parts(t, tt.body)
			if tt.edit != nil {
				tt.edit(p)
			}
			doc, err := run(t, zipParts(t, p), extract.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if got := blockTexts(doc); !reflect.DeepEqual(got, tt.blocks) {
				t.Errorf("blocks:\n got %q\nwant %q", got, tt.blocks)
			}
			if doc.Title != tt.title {
				t.Errorf("title %q, want %q", doc.Title, tt.title)
			}
			if len(doc.Images) != tt.images {
				t.Errorf("%d images, want %d", len(doc.Images), tt.images)
			}
			if tt.warn != "" && !hasWarning(doc, tt.warn) {
				t.Errorf("warnings %q, want %q", doc.Warnings, tt.warn)
			}
			if tt.warn == "" && len(doc.Warnings) != 0 {
				t.Errorf("warnings %q", doc.Warnings)
			}
		})
	}
}

// TestTrailingPages: the trailing blocks are on the document's last
// page, and page markers in them move nothing.
func TestTrailingPages(t *testing.T) {
	notes := func(p map[string][]byte) {
		p["word/footnotes.xml"] = []byte(partXML("footnotes", note("footnote", "1", "", para("", "a note"))))
		withHeader(p, "rId20", "header1.xml", runsPara(textRun("head"), pageBreak, renderedText("er"))+breakPara)
	}
	tests := []struct {
		name  string
		body  string
		edit  func(map[string][]byte)
		want  []string
		pages int
	}{
		{
			name:  "after a page break",
			body:  para("", "one") + breakPara + para("", "two"),
			want:  []string{"one@1", "two@2", "Header@2", "head\ner@2", "Footnotes@2", "a note@2"},
			pages: 2,
		},
		{
			name:  "a break at the very end: the last page is blank",
			body:  para("", "one") + breakPara,
			want:  []string{"one@1", "Header@2", "head\ner@2", "Footnotes@2", "a note@2"},
			pages: 2,
		},
		{
			name: "the body's last section has no sectPr: it starts a new page",
			body: sectionPara("", "one") + para("", "two"),
			edit: func(p map[string][]byte) {
				p["word/document.xml"] = []byte(strings.Replace(string(p["word/document.xml"]), docClose, `</w:body></w:document>`, 1))
			},
			want:  []string{"one@1", "two@2", "Header@2", "head\ner@2", "Footnotes@2", "a note@2"},
			pages: 2,
		},
		{
			name:  "no page break in the body: no pages",
			body:  para("", "one"),
			want:  []string{"one@0", "Header@0", "head\ner@0", "Footnotes@0", "a note@0"},
			pages: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parts(t, tt.body)
			notes(p)
			if tt.edit != nil {
				tt.edit(p)
			}
			doc, err := run(t, zipParts(t, p), extract.DefaultLimits())
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
