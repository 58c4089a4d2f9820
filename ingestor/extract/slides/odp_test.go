package slides

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// TestODPHidden: a page is hidden by presentation:visibility on its
// drawing-page style or on itself.
func TestODPHidden(t *testing.T) {
	styles := `<style:style style:name="dp9" style:family="drawing-page">` +
		`<style:drawing-page-properties presentation:visibility="hidden"/></style:style>` +
		`<style:style style:name="dp1" style:family="drawing-page"><style:drawing-page-properties presentation:visibility="visible"/></style:style>`
	content := odpContent(styles,
		odpPage(`draw:style-name="dp1"`, frame("title", 1, 1, "Shown")),
		odpPage(`draw:style-name="dp9"`, frame("title", 1, 1, "By style"), frame("", 1, 3, "styled body")),
		odpPage(`presentation:visibility="hidden"`, frame("", 1, 3, "attribute body")),
	)
	doc := mustRun(t, "hidden.odp", odp(t, content, nil))
	want := []string{"1 heading1: Shown", "2 heading1: By style", "2 heading2: (hidden)", "2 paragraph0: styled body",
		"3 heading1: Slide 3", "3 heading2: (hidden)", "3 paragraph0: attribute body"}
	if got := lines(doc); !slices.Equal(got, want) {
		t.Errorf("blocks\n%q\nwant\n%q", got, want)
	}
}

// TestODPShapes: groups where their top left member is, text in shapes
// other than frames, ODF's spaces, tabs and line breaks, notes beside
// their page's thumbnail and number, links around shapes, comments left
// out.
func TestODPShapes(t *testing.T) {
	page := odpPage("",
		`<draw:g>`+frame("", 5, 8, "group lower")+frame("", 5, 6, "group upper")+`</draw:g>`,
		`<draw:custom-shape svg:x="1cm" svg:y="2cm" svg:width="1cm" svg:height="1cm"><text:p>in a `+
			`<text:span>shape</text:span><text:s text:c="3"/>spaced<text:tab/>tabbed<text:line-break/>broken`+
			`<office:annotation xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"><text:p>a comment</text:p></office:annotation></text:p>`+
			`<draw:enhanced-geometry/></draw:custom-shape>`,
		`<draw:a xlink:href="http://example.com">`+frame("", 1, 10, "linked box")+`</draw:a>`,
		frame("page-number", 1, 14, "<number>"),
		frame("title", 1, 0.5, "Shapes"),
		`<presentation:notes><draw:page-thumbnail svg:x="1cm" svg:y="1cm" presentation:class="page"/>`+
			frame("notes", 1, 12, "note text")+frame("page-number", 1, 20, "9")+`</presentation:notes>`,
	)
	doc := mustRun(t, "shapes.odp", odp(t, odpContent("", page), nil))
	want := []string{"1 heading1: Shapes", "1 paragraph0: in a shape   spaced\ttabbed\nbroken",
		"1 paragraph0: group upper", "1 paragraph0: group lower", "1 paragraph0: linked box",
		"1 heading2: Notes", "1 paragraph0: note text"}
	if got := lines(doc); !slices.Equal(got, want) {
		t.Errorf("blocks\n%q\nwant\n%q", got, want)
	}
}

// TestODPFrameAlternatives: a frame's first text box or table is read and
// its other representations not; of pictures, the first readable one.
func TestODPFrameAlternatives(t *testing.T) {
	page := odpPage("",
		`<draw:frame svg:x="1cm" svg:y="1cm"><table:table><table:table-row><table:table-cell><text:p>cell</text:p></table:table-cell>`+
			`<table:covered-table-cell/><table:table-cell><text:p>last</text:p></table:table-cell></table:table-row></table:table>`+
			`<draw:image xlink:href="Pictures/preview.png"/></draw:frame>`,
		`<draw:frame svg:x="1cm" svg:y="2cm"><draw:image xlink:href="Pictures/drawing.svg"/><draw:image xlink:href="Pictures/fallback.png"/>`+
			`<svg:title>vector</svg:title><svg:desc>with a fallback</svg:desc></draw:frame>`,
		`<draw:frame svg:x="1cm" svg:y="3cm"><draw:object xlink:href="./Object 1"/><draw:image xlink:href="./ObjectReplacements/Object 1"/>`+
			`<svg:desc>chart replacement</svg:desc></draw:frame>`,
		`<draw:frame svg:x="1cm" svg:y="4cm"><draw:image xlink:href="http://example.com/x.png"/><svg:desc>external picture</svg:desc></draw:frame>`,
	)
	png := pngBytes(t, 3, 2)
	doc := mustRun(t, "frames.odp", odp(t, odpContent("", page), map[string]string{
		"Pictures/preview.png":        string(png),
		"Pictures/drawing.svg":        `<svg xmlns="http://www.w3.org/2000/svg"/>`,
		"Pictures/fallback.png":       string(pngBytes(t, 4, 4)),
		"ObjectReplacements/Object 1": string(pngBytes(t, 5, 5)),
	}))
	want := []string{"1 heading1: Slide 1", "1 table0: cell |  | last",
		"1 image0: Image 1 (PNG, 4x4) on slide 1 of frames.odp: vector: with a fallback",
		"1 image0: Image 2 (PNG, 5x5) on slide 1 of frames.odp: chart replacement",
		"1 paragraph0: external picture"}
	if got := lines(doc); !slices.Equal(got, want) {
		t.Errorf("blocks\n%q\nwant\n%q", got, want)
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings %q: a fallback read is no problem", doc.Warnings)
	}
}

// TestODPEncrypted: a password-protected ODP says so in its manifest.
func TestODPEncrypted(t *testing.T) {
	manifest := `<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">` +
		`<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/></manifest:file-entry></manifest:manifest>`
	data := odp(t, "\x8f\x01binary", map[string]string{"META-INF/manifest.xml": manifest})
	if _, err := run(t, "locked.odp", data, extract.DefaultLimits()); !errors.Is(err, extract.ErrEncrypted) {
		t.Errorf("got %v, want ErrEncrypted", err)
	}
}

// TestSniff tells the formats apart by content.
func TestSniff(t *testing.T) {
	pptx, odpData := readFile(t, "deck.pptx"), readFile(t, "deck.odp")
	if !SniffPPTX(pptx) || SniffPPTX(odpData) || !SniffODP(odpData) || SniffODP(pptx) || SniffODP([]byte("PK\x03\x04")) {
		t.Error("SniffPPTX/SniffODP mistake a deck")
	}
	docx := zipParts(t, map[string]string{"word/document.xml": "<w:document/>"})
	if SniffPPTX(docx) || SniffODP(docx) {
		t.Error("a DOCX is taken for a deck")
	}
	odt := zipParts(t, map[string]string{"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": "<x/>"})
	if SniffODP(odt) {
		t.Error("an ODT is taken for an ODP")
	}
	if !strings.HasPrefix(string(odpData[30:38]), "mimetype") {
		t.Error("the fixture's mimetype is not its first entry")
	}
}
