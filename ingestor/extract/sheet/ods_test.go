package sheet

import (
	"slices"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// TestODSWorkbook: the LibreOffice fixture reads as its XLSX conversion
// does, from the archive and from the flat file.
func TestODSWorkbook(t *testing.T) {
	for _, name := range []string{"workbook.ods", "workbook.fods"} {
		doc := extractOK(t, ODS{}, odsProfile, readFile(t, name), name)
		if got := blocks(doc); !slices.Equal(got, inventory) {
			t.Errorf("%s: blocks:\n%+v\nwant\n%+v", name, got, inventory)
		}
		if doc.Title != "Quarterly inventory" || doc.Pages != 3 || len(doc.Warnings) != 0 {
			t.Errorf("%s: title %q, %d pages, warnings %q", name, doc.Title, doc.Pages, doc.Warnings)
		}
		if doc.Metadata["author"].Text != "Strata tests" || doc.Metadata["subject"].Text != "Spreadsheet fixture" {
			t.Errorf("%s: metadata %v", name, doc.Metadata)
		}
	}
}

// TestODSCells: what a cell's value is: its paragraphs' text (spaces,
// tabs and line breaks as one space), without comments or shapes;
// without text, its office:value by type; covered (merged) cells are no
// value but hold their column; value types other than string keep a row
// from being the header.
func TestODSCells(t *testing.T) {
	rows := `<table:table-row><table:table-cell office:value-type="float" office:value="1"><text:p>1</text:p></table:table-cell>` + odsCell("Name") + `</table:table-row>` +
		`<table:table-row>` + odsCell("x") +
		`<table:table-cell office:value-type="string"><text:p>two<text:s text:c="3"/>words<text:tab/>and<text:line-break/>lines</text:p>` +
		`<text:p>second <text:span>paragraph</text:span> <text:a xlink:href="http://example.com">link</text:a></text:p>` +
		`<office:annotation><text:p>a comment</text:p></office:annotation><draw:frame><draw:text-box><text:p>a shape</text:p></draw:text-box></draw:frame></table:table-cell>` +
		`</table:table-row>` +
		`<table:table-row><table:table-cell table:number-columns-spanned="2" office:value-type="string"><text:p>merged</text:p></table:table-cell>` +
		`<table:covered-table-cell office:value-type="string"><text:p>hidden by the merge</text:p></table:covered-table-cell>` +
		`<table:table-cell office:value-type="currency" office:value="9.5" office:currency="EUR"/>` +
		`<table:table-cell office:value-type="boolean" office:boolean-value="true"/>` +
		`<table:table-cell office:value-type="date" office:date-value="2024-02-29"/>` +
		`<table:table-cell office:value-type="string" office:string-value="attribute text"/></table:table-row>`
	data := zipParts(t, map[string]string{"content.xml": `<?xml version="1.0"?><office:document-content ` + odsNS +
		` xmlns:xlink="http://www.w3.org/1999/xlink"><office:body><office:spreadsheet>` + odsSheet("Cells", "", rows) +
		`</office:spreadsheet></office:body></office:document-content>`}, false)
	doc := extractOK(t, ODS{}, odsProfile, data, "cells.ods")
	want := []string{"Cells", "A: 1, B: Name", "A: x, B: two words and lines second paragraph link",
		"A: merged, C: 9.5 EUR, D: true, E: 2024-02-29, F: attribute text"}
	if got := texts(doc); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestODSStructure: rows in header-row, row-group and rows elements are
// rows; hidden sheets are marked; a sheet without rows is its heading.
func TestODSStructure(t *testing.T) {
	sheets := odsSheet("Grouped", "",
		`<table:table-header-rows><table:table-row>`+odsCell("Head")+odsCell("Tail")+`</table:table-row></table:table-header-rows>`+
			`<table:table-row-group><table:table-rows><table:table-row>`+odsCell("a")+odsCell("b")+`</table:table-row></table:table-rows></table:table-row-group>`) +
		odsSheet("Empty", "", `<table:table-column/><table:table-row table:number-rows-repeated="5"><table:table-cell/></table:table-row>`) +
		odsSheet("Away", "ta2", `<table:table-row>`+odsCell("shh")+`</table:table-row>`)
	doc := extractOK(t, ODS{}, odsProfile, odsFile(t, sheets, ""), "structure.ods")
	want := []block{
		{extract.Heading, 1, 1, "Grouped"},
		{extract.Table, 0, 1, "Head, Tail"},
		{extract.Table, 0, 1, "Head: a, Tail: b"},
		{extract.Heading, 1, 2, "Empty"},
		{extract.Heading, 1, 3, "Away"},
		{extract.Heading, 2, 3, "(hidden)"},
		{extract.Table, 0, 3, "shh"},
	}
	if got := blocks(doc); !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestODSMeta: the title, and properties: dc:creator over
// meta:initial-creator, every meta:keyword, the dates.
func TestODSMeta(t *testing.T) {
	meta := `<meta:initial-creator>First</meta:initial-creator><dc:creator>Last</dc:creator><dc:title>  A   title </dc:title>` +
		`<meta:keyword>one</meta:keyword><meta:keyword>two</meta:keyword><meta:creation-date>2024-05-06T07:08:09</meta:creation-date>` +
		`<dc:date>not a date</dc:date>`
	doc := extractOK(t, ODS{}, odsProfile, odsFile(t, odsSheet("S", "", `<table:table-row>`+odsCell("x")+`</table:table-row>`), meta), "meta.ods")
	if doc.Title != "A title" {
		t.Errorf("title %q", doc.Title)
	}
	m := doc.Metadata
	if m["author"].Text != "Last" || !slices.Equal(m["keywords"].List, []string{"one", "two"}) || m["created"].Text != "2024-05-06T07:08:09Z" {
		t.Errorf("metadata %v", m)
	}
	if _, ok := m["modified"]; ok || len(doc.Warnings) != 1 {
		t.Errorf("a date that is none: metadata %v, warnings %q", m, doc.Warnings)
	}
}
