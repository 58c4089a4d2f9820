package docx

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func TestExtract(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		edit   func(map[string][]byte) // changes to the parts before zipping
		blocks []string
		title  string
		images int
	}{
		{
			name: "headings and paragraphs",
			body: para("berschrift1", "Intro") + para("", "Hello ", "world.") + para("") +
				para("Heading2", "Details") + para("", "More text.") +
				`<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>item</w:t></w:r></w:p>`,
			blocks: []string{"heading:1:Intro", "paragraph:0:Hello world.", "heading:2:Details", "paragraph:0:More text.", "paragraph:0:item"},
			title:  "Intro",
		},
		{
			name:   "heading ids without styles.xml",
			body:   para("Heading3", "Three") + para("heading 7", "Seven") + para("Normal", "Body"),
			edit:   func(p map[string][]byte) { delete(p, "word/styles.xml") },
			blocks: []string{"heading:3:Three", "heading:6:Seven", "paragraph:0:Body"},
			title:  "Three",
		},
		{
			name: "outline levels",
			body: `<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Level two</w:t></w:r></w:p>` +
				`<w:p><w:pPr><w:pStyle w:val="berschrift1"/><w:outlineLvl w:val="9"/></w:pPr><w:r><w:t>Body text</w:t></w:r></w:p>` +
				para("Chapter", "Inherited"),
			blocks: []string{"heading:2:Level two", "paragraph:0:Body text", "heading:1:Inherited"},
			title:  "Level two",
		},
		{
			name: "table",
			body: para("", "Before") +
				table([]string{"Name", "Qty"}, []string{"apple", "3"}, []string{"", ""},
					[]string{"nested", table([]string{"a", "b"}, []string{"c", "d"})}) +
				para("", "After"),
			blocks: []string{"paragraph:0:Before", "table:0:Name | Qty\napple | 3\nnested | a | b | c | d", "paragraph:0:After"},
		},
		{
			name: "tabs and breaks",
			body: `<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>` +
				`<w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t><w:cr/><w:t>d</w:t></w:r></w:p>`,
			blocks: []string{"paragraph:0:a\tb\nc\nd"},
		},
		{
			name:   "image with alt text",
			body:   para("", "See below") + `<w:p>` + drawingRun(1, "rId10", "A red line", "ignored title") + `</w:p>`,
			blocks: []string{"paragraph:0:See below", "image:0:Image 1 (PNG, 4x3) in sample.docx: A red line"},
			images: 1,
		},
		{
			name: "images follow their paragraph, repeats and non-images skipped",
			body: `<w:p><w:r><w:t>Text</w:t></w:r>` + drawingRun(1, "rId11", "", "Photo") + `<w:r><w:t xml:space="preserve"> more</w:t></w:r></w:p>` +
				`<w:p>` + drawingRun(2, "rId12", "fake", "") + drawingRun(3, "rId13", "ext", "") +
				drawingRun(4, "rId14", "missing", "") + drawingRun(5, "rId11", "again", "") + `</w:p>`,
			blocks: []string{"paragraph:0:Text more", "image:0:Image 1 (JPEG, 5x2) in sample.docx: Photo"},
			images: 1,
		},
		{
			name:   "image in table follows the table",
			body:   `<w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell</w:t></w:r>` + drawingRun(1, "rId10", "", "") + `</w:p></w:tc></w:tr></w:tbl>`,
			blocks: []string{"table:0:cell", "image:0:Image 1 (PNG, 4x3) in sample.docx"},
			images: 1,
		},
		{
			name:   "table with an empty last cell",
			body:   table([]string{"Q1", "Q2"}, []string{"10", ""}),
			blocks: []string{"table:0:Q1 | Q2\n10 |"},
		},
		{
			name:   "table with an empty first cell",
			body:   table([]string{"", "Q1"}, []string{"Sales", "10"}),
			blocks: []string{"table:0: | Q1\nSales | 10"},
		},
		{
			name:   "VML picture",
			body:   `<w:p><w:r><w:pict><v:shape><v:imagedata r:id="rId10" o:title="VML pic"/></v:shape></w:pict></w:r></w:p>`,
			blocks: []string{"image:0:Image 1 (PNG, 4x3) in sample.docx: VML pic"},
			images: 1,
		},
		{
			name: "part names are case-insensitive",
			body: para("", "upper"),
			edit: func(p map[string][]byte) {
				p["Word/Document.XML"] = p["word/document.xml"]
				delete(p, "word/document.xml")
			},
			blocks: []string{"paragraph:0:upper"},
		},
		{
			name:   "title from core.xml",
			body:   para("Title", "Styled Title") + para("berschrift1", "First"),
			edit:   func(p map[string][]byte) { p["docProps/core.xml"] = []byte(coreXML("  Core\n Title ")) },
			blocks: []string{"heading:1:Styled Title", "heading:1:First"},
			title:  "Core Title",
		},
		{
			name:   "title falls back to Title style",
			body:   para("berschrift1", "First") + para("Title", "Styled Title"),
			edit:   func(p map[string][]byte) { delete(p, "docProps/core.xml") },
			blocks: []string{"heading:1:First", "heading:1:Styled Title"},
			title:  "Styled Title",
		},
		{
			name:   "unicode text",
			body:   para("", "Grüße, 世界 — ", "emoji 🎉 ", "RTL שלום") + para("", "\u00a0 \u2003"),
			blocks: []string{"paragraph:0:Grüße, 世界 — emoji 🎉 RTL שלום"},
		},
		{
			name:   "control characters dropped",
			body:   `<w:p><w:r><w:t>a&#x7f;b&#x85;c&#9;d</w:t></w:r></w:p>`,
			blocks: []string{"paragraph:0:abc\td"},
		},
		{
			name: "text box read once, deleted text skipped",
			body: `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx><w:txbxContent>` +
				para("", "boxed") + `</w:txbxContent></wps:txbx></w:drawing></mc:Choice><mc:Fallback><w:pict><v:textbox><w:txbxContent>` +
				para("", "boxed") + `</w:txbxContent></v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r>` +
				`<w:r><w:t>anchor</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>`,
			blocks: []string{"paragraph:0:boxed\nanchor"},
		},
		{
			name:   "empty document",
			body:   "",
			blocks: []string{},
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
		})
	}
}

func TestImageMetadata(t *testing.T) {
	p := parts(t, `<w:p>`+drawingRun(1, "rId10", "red", "")+drawingRun(2, "rId11", "", "")+`</w:p>`)
	doc, err := run(t, zipParts(t, p), extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := []extract.Image{
		{Name: "image-1.png", MIME: "image/png", Data: p["word/media/image1.png"], Width: 4, Height: 3},
		{Name: "image-2.jpg", MIME: "image/jpeg", Data: p["word/media/photo.jpeg"], Width: 5, Height: 2},
	}
	if !reflect.DeepEqual(doc.Images, want) {
		t.Errorf("images differ:\n got %+v\nwant %+v", doc.Images, want)
	}
	for i, b := range doc.Blocks {
		if b.Kind != extract.Figure || b.Image != i {
			t.Errorf("block %d: %+v", i, b)
		}
	}
}

func TestImageLimits(t *testing.T) {
	body := `<w:p>` + drawingRun(1, "rId10", "", "") + drawingRun(2, "rId11", "", "") + `</w:p>`

	lim := extract.DefaultLimits()
	lim.MaxImages = 1
	doc, err := run(t, docx(t, body), lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Images) != 1 || !hasWarning(doc, "more than 1 images") {
		t.Errorf("MaxImages=1: %d images, warnings %q", len(doc.Images), doc.Warnings)
	}

	lim = extract.DefaultLimits()
	lim.MaxImageBytes = int64(len(samplePNG(t))) // the JPEG is larger
	doc, err = run(t, docx(t, body), lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Images) != 1 || doc.Images[0].MIME != "image/png" || !hasWarning(doc, "photo.jpeg skipped") {
		t.Errorf("MaxImageBytes: %d images, warnings %q", len(doc.Images), doc.Warnings)
	}
}

func hasWarning(doc *extract.Document, sub string) bool {
	for _, w := range doc.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestSniff(t *testing.T) {
	noDoc := parts(t, "")
	delete(noDoc, "word/document.xml")
	tests := []struct {
		name string
		data []byte
		want bool
	}{
		{"docx", docx(t, para("", "x")), true},
		{"zip without word/document.xml", zipParts(t, noDoc), false},
		{"empty", nil, false},
		{"text", []byte("hello"), false},
		{"zip magic only", []byte("PK\x03\x04 truncated"), false},
		{"ole", []byte(oleMagic + "rest"), false},
	}
	for _, tt := range tests {
		if got := Sniff(tt.data); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestZeroLimitsUseDefaults(t *testing.T) {
	doc, err := run(t, docx(t, para("", "x")), extract.Limits{})
	if err != nil || len(doc.Blocks) != 1 {
		t.Fatalf("zero Limits: %v, %+v", err, doc)
	}
}

func TestInvalidUTF8InName(t *testing.T) {
	data := docx(t, `<w:p>`+drawingRun(1, "rId10", "", "")+`</w:p>`)
	doc, err := Extractor{}.Extract(t.Context(), data, "bad\xff\x01name.docx", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	if !bytes.Contains([]byte(doc.Text), []byte("bad\uFFFDname.docx")) {
		t.Errorf("text %q", doc.Text)
	}
}
