package sheet

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// inventory is what the LibreOffice fixture (workbook.fods and its .ods
// and .xlsx conversions) reads as: a section per sheet, each sheet's
// number its page, the header row's cells naming every value after it;
// values as displayed (a date, percentages, grouped numbers, formulas by
// their cached results); the merged Owner/Due cell once, under Owner; the
// hidden sheet marked.
var inventory = []block{
	{extract.Heading, 1, 1, "Summary"},
	{extract.Table, 0, 1, "Region, Units, Notes"},
	{extract.Table, 0, 1, "Region: North, Units: 120, Notes: Stable demand"},
	{extract.Table, 0, 1, "Region: South, Units: 80"},
	{extract.Heading, 1, 2, "Inventory"},
	{extract.Table, 0, 2, "Item, Owner, Due, Share, Qty, Price, Total"},
	{extract.Table, 0, 2, "Item: Widget, Owner: sheetcellmarker, Due: 2024-03-15, Share: 12.5%, Qty: 4, Price: 2.50, Total: 10.00"},
	{extract.Table, 0, 2, "Item: Gadget, Owner: Shared by the whole team, Share: 50.0%, Qty: 3, Price: 1,234.50, Total: 3,703.50"},
	{extract.Heading, 1, 3, "Secret"},
	{extract.Heading, 2, 3, "(hidden)"},
	{extract.Table, 0, 3, "Key, Value"},
	{extract.Table, 0, 3, "Key: vault, Value: hiddensheetmarker"},
}

func TestXLSXWorkbook(t *testing.T) {
	doc := extractOK(t, XLSX{}, xlsxProfile, readFile(t, "workbook.xlsx"), "workbook.xlsx")
	if got := blocks(doc); !slices.Equal(got, inventory) {
		t.Errorf("blocks:\n%+v\nwant\n%+v", got, inventory)
	}
	if doc.Title != "Quarterly inventory" || doc.Pages != 3 || len(doc.Warnings) != 0 {
		t.Errorf("title %q, %d pages, warnings %q", doc.Title, doc.Pages, doc.Warnings)
	}
	if doc.Metadata["subject"].Text != "Spreadsheet fixture" {
		t.Errorf("metadata %v", doc.Metadata)
	}
}

// TestXLSXExcelizeWorkbook reads the workbook excelize writes: the title
// row above the header is written on its own; a custom date format, a
// percentage and a boolean as displayed; the merged Owner cell once; the
// formula by its cached value (999), not recalculated (200); rich text
// joined; a sheet without a header row named by column letters.
func TestXLSXExcelizeWorkbook(t *testing.T) {
	doc := extractOK(t, XLSX{}, xlsxProfile, excelizeWorkbook(t), "excelize.xlsx")
	want := []block{
		{extract.Heading, 1, 1, "Report"},
		{extract.Table, 0, 1, "Sales 2024"},
		{extract.Table, 0, 1, "Region, Units, Share, Owner, Since, Active"},
		{extract.Table, 0, 1, "Region: North, Units: 120, Share: 25%, Owner: excelizemarker, Since: 31 Jan 2024, Active: TRUE"},
		{extract.Table, 0, 1, "Region: South, Units: 80, Share: 50%, Owner: Shared owner"},
		{extract.Table, 0, 1, "Region: Total (all), Units: 999"},
		{extract.Heading, 1, 2, "Numbers"},
		{extract.Table, 0, 2, "A: 1, B: 2.5, C: 3"},
		{extract.Table, 0, 2, "B: 4, C: five"},
		{extract.Heading, 1, 3, "Hidden"},
		{extract.Heading, 2, 3, "(hidden)"},
		{extract.Table, 0, 3, "Key, Value"},
		{extract.Table, 0, 3, "Key: vault, Value: hiddenexcelizemarker"},
	}
	if got := blocks(doc); !slices.Equal(got, want) {
		t.Errorf("blocks:\n%+v\nwant\n%+v", got, want)
	}
	if doc.Title != "Excelize fixture" || doc.Pages != 3 {
		t.Errorf("title %q, %d pages", doc.Title, doc.Pages)
	}
	if got := doc.Metadata["keywords"].List; !slices.Equal(got, []string{"sheets", "tests"}) {
		t.Errorf("keywords %q", got)
	}
	if got := doc.Metadata["created"].Text; got != "2024-01-02T03:04:05Z" {
		t.Errorf("created %q", got)
	}
}

// TestMaxPages: sheets past MaxPages are not read, with a warning; the
// document still counts every sheet.
func TestMaxPages(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxPages = 2
	for _, tt := range []struct {
		e    extract.Extractor
		name string
	}{{XLSX{}, "workbook.xlsx"}, {ODS{}, "workbook.ods"}, {ODS{}, "workbook.fods"}} {
		doc, err := tt.e.Extract(context.Background(), readFile(t, tt.name), tt.name, lim)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := blocks(doc); !slices.Equal(got, inventory[:8]) {
			t.Errorf("%s: blocks %+v", tt.name, got)
		}
		if doc.Pages != 3 || len(doc.Warnings) != 1 || doc.Warnings[0] != "1 of 3 sheets not read: more than MaxPages (2)" {
			t.Errorf("%s: %d pages, warnings %q", tt.name, doc.Pages, doc.Warnings)
		}
	}
}

// TestMaxTextBytes: text over the limit fails as soon as it is over,
// naming the limit, whatever the format.
func TestMaxTextBytes(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 100
	for _, tt := range []struct {
		e    extract.Extractor
		name string
	}{{XLSX{}, "workbook.xlsx"}, {ODS{}, "workbook.ods"}, {CSV{}, "inventory.csv"}} {
		doc, err := tt.e.Extract(context.Background(), readFile(t, tt.name), tt.name, lim)
		if !errors.Is(err, extract.ErrTooLarge) || doc != nil || !strings.Contains(err.Error(), "MaxTextBytes (100 bytes)") {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// TestSheetNames: a sheet is named by its heading, one line of at most
// 256 bytes; two names that differ only in case are both headed but not
// read (excelize would read either for both); a name excelize refuses
// is headed, not read, with a warning.
func TestSheetNames(t *testing.T) {
	parts := xlsxParts(`<row r="1">`+inline("A1", "one")+`</row>`, `<row r="1">`+inline("A1", "two")+`</row>`,
		`<row r="1">`+inline("A1", "three")+`</row>`, `<row r="1">`+inline("A1", "four")+`</row>`)
	wb := parts["xl/workbook.xml"]
	wb = strings.Replace(wb, `name="Sheet1"`, `name="Same"`, 1)
	wb = strings.Replace(wb, `name="Sheet2"`, `name="SAME"`, 1)
	wb = strings.Replace(wb, `name="Sheet3"`, `name="`+strings.Repeat("long ", 100)+`"`, 1)
	parts["xl/workbook.xml"] = wb
	doc := extractOK(t, XLSX{}, xlsxProfile, zipParts(t, parts, false), "names.xlsx")
	long := strings.TrimSpace(strings.Repeat("long ", 52)[:256])
	want := []string{"Same", "SAME", long, "Sheet4", "four"}
	if got := texts(doc); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if len(doc.Warnings) != 3 || !strings.Contains(doc.Warnings[0], "another sheet has the same name") {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// TestUnescape: a long shared string (the guard's placeholder path)
// reads as excelize reads a short one, _xHHHH_ escapes included.
func TestUnescape(t *testing.T) {
	escaped := "a_x000D_b_x005F_x0041_c_xD800_d_x004_e_x0041_"
	pad := strings.Repeat(".", longString)
	parts := xlsxParts(`<row r="1">` + inline("A1", "Short") + inline("B1", "Long") + `</row>` +
		`<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2" t="s"><v>1</v></c></row>`)
	parts["xl/sharedStrings.xml"] = sstXML(escaped, escaped+pad)
	doc := extractOK(t, XLSX{}, xlsxProfile, zipParts(t, parts, false), "escapes.xlsx")
	short := "a b_x0041_cd_x004_eA" // \r is white space in a row
	if got, want := texts(doc), []string{"Sheet1", "Short, Long", "Short: " + short + ", Long: " + short + pad}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestScanPart: what the guard counts as excelize's rows and cells.
func TestScanPart(t *testing.T) {
	for _, tt := range []struct {
		xml    string
		widest int
	}{
		{`<row><c/><c/></row><row><c/></row>`, 2},
		{`<x:row><x:c r="A1"/><x:c>1</x:c></x:row>`, 2},
		{`<row><c/></row><c/><c/>`, 3}, // cells after a row are read into it
		{`<c/><c/><row/>`, 2},
		{`<row><c/><!-- <row> --><c/><![CDATA[<row>]]><c/><?p <row>?><c/></row>`, 4},
		{`<row><cols/><col/><c/></row>`, 1},
	} {
		if got, _ := scanPart([]byte(tt.xml)); got != tt.widest {
			t.Errorf("%s: %d cells, want %d", tt.xml, got, tt.widest)
		}
	}
	text := strings.Repeat("_x0041_", 1000) + strings.Repeat("&amp;", 1000)
	_, cost := scanPart([]byte(`<sst><si><t>` + text + `</t></si></sst><row><c t="inlineStr"><is><t>` + text + `</t></is></c><c/></row>`))
	if span := int64(len(`is><t>` + text + `</t></is></c><`)); cost != 2000*span {
		t.Errorf("cost %d, want %d (the inline string's alone)", cost, 2000*span)
	}
}

// TestCostlyEscapes: a cell excelize would take terabytes of copying to
// unescape is refused.
func TestCostlyEscapes(t *testing.T) {
	text := strings.Repeat("_x0041_", 1<<17)
	data := zipParts(t, xlsxParts(`<row r="1">`+inline("A1", text)+`</row>`), false)
	if _, err := (XLSX{}).Extract(context.Background(), data, "escapes.xlsx", extract.DefaultLimits()); !errors.Is(err, extract.ErrCorrupt) {
		t.Errorf("got %v, want ErrCorrupt", err)
	}
}
