package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOfficeFilesAndScans uploads files made by real tools (testdata/formats,
// README there): a deck, a workbook, a DOCX with a header, footer and
// footnote, an e-book, a PDF whose second page is a scan and a picture of
// text; an agent's search then finds a marker from each place a person
// would look, and its hit names the slide, sheet, chapter or page and the
// section there (issue 49 item 8).
func TestOfficeFilesAndScans(t *testing.T) {
	h := start(t)
	for _, name := range []string{"deck.pptx", "workbook.xlsx", "trailing.docx", "harbour-epub3.epub", "mixed.pdf", "scan.png"} {
		data, err := os.ReadFile(filepath.Join("testdata", "formats", name))
		if err != nil {
			t.Fatal(err)
		}
		h.put("acme/office/"+name, string(data))
	}
	h.settle()
	for _, tt := range []struct {
		query, path string
		page        int
		citation    string // the hit's citation contains it
		ocr         bool   // read by OCR: the hit carries its confidence
	}{
		{"slidebodymarker", "office/deck.pptx", 1, `office/deck.pptx, slide 1, section "Strata deck intro"`, false},
		{"slidenotesmarker", "office/deck.pptx", 1, `slide 1, section "Strata deck intro > Notes"`, false},
		{"slidetablemarker", "office/deck.pptx", 2, `slide 2, section "Figures and tables"`, false},
		{"hiddenslidemarker", "office/deck.pptx", 3, `slide 3, section "Backup slide > (hidden)"`, false},
		{"sheetcellmarker", "office/workbook.xlsx", 2, "office/workbook.xlsx, sheet 2", false},
		{"docxheadermarker", "office/trailing.docx", 2, `section "Header"`, false},
		{"docxfootermarker", "office/trailing.docx", 2, `section "Footer"`, false},
		{"docxfootnotemarker", "office/trailing.docx", 2, `section "Footnotes"`, false},
		{"epubchaptermarker", "office/harbour-epub3.epub", 3, `office/harbour-epub3.epub, chapter 3, section "The Letter"`, false},
		{"marmalade", "office/mixed.pdf", 2, "office/mixed.pdf, page 2", true},
		// The picture holds the text of mixed.pdf's first page: the search
		// is kept to the picture, as an agent would keep it to a folder.
		{"ledger", "office/scan.png", 0, "office/scan.png", true},
	} {
		args := map[string]any{"query": tt.query, "project_reference": "acme", "alpha": 0}
		if tt.path == "office/scan.png" {
			args["path_prefix"] = tt.path
		}
		out, errText := h.call("hybrid_search", args)
		hits := results(out)
		if errText != "" || len(hits) == 0 {
			t.Errorf("%s: no hit: %v %s", tt.query, out, errText)
			continue
		}
		top := hits[0]
		page, _ := top["page_start"].(float64)
		conf, _ := top["ocr_confidence"].(float64)
		switch {
		case top["document_path"] != tt.path || !strings.Contains(strings.ToLower(fmt.Sprint(top["content"])), tt.query):
			t.Errorf("%s: top hit is %v: %q", tt.query, top["document_path"], top["content"])
		case int(page) != tt.page || !strings.Contains(fmt.Sprint(top["citation"]), tt.citation):
			t.Errorf("%s: page %v, citation %q; want page %d and a citation with %q", tt.query, top["page_start"], top["citation"], tt.page, tt.citation)
		case tt.ocr != (conf > 0) || conf > 100:
			t.Errorf("%s: ocr_confidence %v (read by OCR: %v)", tt.query, top["ocr_confidence"], tt.ocr)
		}
	}
	// The second sheet's row reads on its own, with its header.
	out, _ := h.call("hybrid_search", map[string]any{"query": "sheetcellmarker", "project_reference": "acme", "alpha": 0})
	if hits := results(out); len(hits) == 0 || !strings.Contains(fmt.Sprint(hits[0]["content"]), "Owner: sheetcellmarker") {
		t.Errorf("the workbook's row is not written with its header: %v", hits)
	}
}
