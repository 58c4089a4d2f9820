package sheet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func TestConformanceXLSX(t *testing.T) {
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: XLSX{},
		Profile:   xlsxProfile,
		Samples: []extracttest.Sample{
			{Name: "workbook.xlsx", Data: readFile(t, "workbook.xlsx")},
			{Name: "excelize.xlsx", Data: excelizeWorkbook(t)},
			{Name: "stored.xlsx", Data: zipParts(t, xlsxParts(`<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row>`+
				`<row r="2"><c r="A2" t="inlineStr"><is><t>stored</t></is></c></row>`), true)},
		},
		Big:       &extracttest.Sample{Name: "big.xlsx", Data: bigWorkbook(t, 1500)},
		Container: true,
		Hostile:   xlsxHostile(t),
	})
}

func TestConformanceODS(t *testing.T) {
	var big strings.Builder
	for i := range 1500 {
		big.WriteString(`<table:table-row>` + odsCell(fmt.Sprintf("row %d", i)) + odsCell("a value of some length, repeated") + `</table:table-row>`)
	}
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: ODS{},
		Profile:   odsProfile,
		Samples: []extracttest.Sample{
			{Name: "workbook.ods", Data: readFile(t, "workbook.ods")},
			{Name: "workbook.fods", Data: readFile(t, "workbook.fods")},
			{Name: "stored.ods", Data: zipParts(t, map[string]string{"content.xml": odsContent(odsSheet("One", "", `<table:table-row>`+odsCell("stored")+`</table:table-row>`))}, true)},
		},
		Big:       &extracttest.Sample{Name: "big.ods", Data: odsFile(t, odsSheet("Big", "", `<table:table-row>`+odsCell("Name")+odsCell("Value")+`</table:table-row>`+big.String()), "")},
		Container: true,
		Hostile:   odsHostile(t),
	})
}

func TestConformanceCSV(t *testing.T) {
	var big strings.Builder
	big.WriteString("Id,Name,Note\n")
	for i := range 2000 {
		fmt.Fprintf(&big, "%d,name %d,\"a note, with a comma\"\n", i, i)
	}
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: CSV{},
		Profile:   csvProfile,
		Samples: []extracttest.Sample{
			{Name: "inventory.csv", Data: readFile(t, "inventory.csv")},
			{Name: "inventory.tsv", Data: readFile(t, "inventory.tsv")},
			{Name: "semicolons.csv", Data: []byte("sep=;\nName;Amount\nalpha;1,5\n")},
		},
		Big: &extracttest.Sample{Name: "big.csv", Data: []byte(big.String())},
		Hostile: []extracttest.Sample{
			{Name: "binary.csv", Data: []byte("a,b\x00c\n"), Want: extract.ErrCorrupt},
			{Name: "wide.csv", Data: []byte(strings.Repeat("x,", 20000) + "\n")},
			{Name: "quotes.csv", Data: []byte("\"open,\"\"\n\"\"\"\n" + strings.Repeat("\"", 1000))},
		},
	})
}

// bigWorkbook is a workbook of n rows under a header, with text enough
// for the limit checks.
func bigWorkbook(tb testing.TB, n int) []byte {
	tb.Helper()
	var rows strings.Builder
	rows.WriteString(`<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Value</t></is></c></row>`)
	for i := range n {
		r := itoa(i + 2)
		fmt.Fprintf(&rows, `<row r="%s"><c r="A%s" t="inlineStr"><is><t>row %d</t></is></c><c r="B%s"><v>%d</v></c></row>`, r, r, i, r, i*7)
	}
	return zipParts(tb, xlsxParts(rows.String()), false)
}
