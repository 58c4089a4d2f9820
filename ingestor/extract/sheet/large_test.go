package sheet

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// TestAHundredThousandRowWorkbookIsReadToItsLastRow (issue 52 item 4): a
// workbook of 100,000 orders is read whole under the default limits, its
// last row's words under the sheet's heading with the header named, within
// the file budget of its format.
func TestAHundredThousandRowWorkbookIsReadToItsLastRow(t *testing.T) {
	if testing.Short() {
		t.Skip("makes and reads a 100,000-row workbook; skipped with -short")
	}
	const rows = 100_000
	data := benchWorkbook(t, rows)
	lim := extract.DefaultLimits()
	lim.MaxFileBytes = 64 << 20 // the registry's budget for a workbook (detect.FormatCaps)
	doc, err := (XLSX{}).Extract(context.Background(), data, "orders.xlsx", lim)
	if err != nil {
		t.Fatalf("a %d-byte workbook of %d rows: %v", len(data), rows, err)
	}
	last := benchRow(rows - 1).note // "order 99999 shipped by sea, ..."
	at := strings.LastIndex(doc.Text, last)
	if at < 0 {
		t.Fatalf("the last row (%q) is not in the %d bytes of text; warnings %v", last, len(doc.Text), doc.Warnings)
	}
	// The last row's block, and the heading it is under.
	var block, heading *extract.Block
	for i := range doc.Blocks {
		b := &doc.Blocks[i]
		if b.Start > at {
			break
		}
		if b.Kind == extract.Heading {
			heading = b
		}
		block = b
	}
	if heading == nil || !strings.Contains(doc.Text[heading.Start:heading.End], "Sheet1") {
		t.Fatalf("the last row is not under its sheet's heading (%v)", heading)
	}
	if row := doc.Text[block.Start:block.End]; !strings.Contains(row, "Note") || !strings.Contains(row, "99999") {
		t.Errorf("the last row's block does not name the header beside the row: %q", row[:min(len(row), 300)])
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings reading the whole workbook: %v", doc.Warnings)
	}
	if held := extract.Held(doc); held > lim.MaxFileBytes {
		t.Errorf("the workbook holds %d bytes, over its format's budget of %d", held, lim.MaxFileBytes)
	}
	t.Logf("%d rows: %d bytes of XLSX, %d bytes of text, %d blocks, %d bytes held", rows, len(data), len(doc.Text), len(doc.Blocks), extract.Held(doc))
}

// BenchmarkWorkbookSize reads a workbook of about 1 MB of text and one of
// 100,000 rows (about 16 MB) in one run: the time per MB of text of each
// says whether a long sheet costs more than its size.
func BenchmarkWorkbookSize(b *testing.B) {
	lim := extract.DefaultLimits()
	lim.MaxFileBytes = 64 << 20 // the registry's budget for a workbook
	for _, rows := range []int{6000, 100_000} {
		data := benchWorkbook(b, rows)
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			extracttest.BenchPerMB(b, func() (*extract.Document, error) {
				return (XLSX{}).Extract(context.Background(), data, "orders.xlsx", lim)
			})
		})
	}
}
