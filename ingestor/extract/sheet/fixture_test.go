package sheet

import (
	"bytes"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// excelizeWorkbook is the second XLSX fixture, written by excelize: a
// title row above the header, a percentage, a date in a custom format, a
// merged cell, a formula whose cached value is not what recalculation
// gives (so a test can tell the two apart), rich and inline text, a
// boolean; a sheet of numbers only (no header: column letters); a hidden
// sheet; document properties.
func excelizeWorkbook(tb testing.TB) []byte {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(f.SetSheetName("Sheet1", "Report"))
	pct, err := f.NewStyle(&excelize.Style{NumFmt: 9}) // 0%
	must(err)
	date := "d mmm yyyy"
	dateStyle, err := f.NewStyle(&excelize.Style{CustomNumFmt: &date})
	must(err)
	must(f.SetCellValue("Report", "A1", "Sales 2024"))
	must(f.SetSheetRow("Report", "A2", &[]any{"Region", "Units", "Share", "Owner", "Since", "Active"}))
	must(f.SetSheetRow("Report", "A3", &[]any{"North", 120, 0.25, "excelizemarker", time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), true}))
	must(f.SetCellStyle("Report", "C3", "C3", pct))
	must(f.SetCellStyle("Report", "E3", "E3", dateStyle))
	must(f.SetSheetRow("Report", "A4", &[]any{"South", 80, 0.5}))
	must(f.SetCellStyle("Report", "C4", "C4", pct))
	must(f.SetCellValue("Report", "D4", "Shared owner"))
	must(f.MergeCell("Report", "D4", "E4"))
	must(f.SetCellRichText("Report", "A5", []excelize.RichTextRun{{Text: "Total "}, {Text: "(all)", Font: &excelize.Font{Bold: true}}}))
	must(f.SetCellValue("Report", "B5", 999))
	must(f.SetCellFormula("Report", "B5", "B3+B4"))
	_, err = f.NewSheet("Numbers")
	must(err)
	must(f.SetSheetRow("Numbers", "A1", &[]any{1, 2.5, 3}))
	must(f.SetSheetRow("Numbers", "B2", &[]any{4, "five"}))
	_, err = f.NewSheet("Hidden")
	must(err)
	must(f.SetSheetRow("Hidden", "A1", &[]any{"Key", "Value"}))
	must(f.SetSheetRow("Hidden", "A2", &[]any{"vault", "hiddenexcelizemarker"}))
	must(f.SetSheetVisible("Hidden", false))
	must(f.SetDocProps(&excelize.DocProperties{
		Title: "Excelize fixture", Creator: "Strata tests", Keywords: "sheets; tests",
		Created: "2024-01-02T03:04:05Z", Description: "The second XLSX fixture",
	}))
	var buf bytes.Buffer
	must(f.Write(&buf))
	return buf.Bytes()
}
