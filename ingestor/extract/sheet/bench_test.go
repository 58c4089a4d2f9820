package sheet

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/strata-kb/strata/ingestor/extract"
)

// benchRows is the size of the generated workbooks the benchmarks read.
const benchRows = 20000

var (
	benchOnce                 sync.Once
	benchXLSX, benchODS, bCSV []byte
)

// benchFiles makes the same 20,000-row sheet as XLSX (excelize's stream
// writer: shared strings, a date, a percentage and a number format),
// ODS and CSV.
func benchFiles(tb testing.TB) (xlsx, ods, csv []byte) {
	benchOnce.Do(func() {
		benchXLSX = benchWorkbook(tb, benchRows)
		var content, text strings.Builder
		text.WriteString("Id,Customer,City,Ordered,Discount,Amount,Note\n")
		for i := range benchRows {
			row := benchRow(i)
			fmt.Fprintf(&content, `<table:table-row><table:table-cell office:value-type="float" office:value="%d"><text:p>%d</text:p></table:table-cell>`+
				`<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>`+
				`<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>`+
				`<table:table-cell office:value-type="date" office:date-value="2024-03-%02d"><text:p>2024-03-%02d</text:p></table:table-cell>`+
				`<table:table-cell office:value-type="percentage" office:value="%g"><text:p>%g%%</text:p></table:table-cell>`+
				`<table:table-cell office:value-type="float" office:value="%.2f"><text:p>%.2f</text:p></table:table-cell>`+
				`<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell></table:table-row>`,
				i, i, row.customer, row.city, row.day, row.day, row.discount, row.discount*100, row.amount, row.amount, row.note)
			fmt.Fprintf(&text, "%d,%s,%s,2024-03-%02d,%g%%,%.2f,%s\n", i, row.customer, row.city, row.day, row.discount*100, row.amount, row.note)
		}
		header := `<table:table-row>`
		for _, h := range []string{"Id", "Customer", "City", "Ordered", "Discount", "Amount", "Note"} {
			header += `<table:table-cell office:value-type="string"><text:p>` + h + `</text:p></table:table-cell>`
		}
		header += `</table:table-row>`
		benchODS = odsFile(tb, odsSheet("Orders", "", header+content.String()), "")
		bCSV = []byte(text.String())
	})
	return benchXLSX, benchODS, bCSV
}

type benchValues struct {
	customer, city, note string
	day                  int
	discount, amount     float64
}

func benchRow(i int) benchValues {
	cities := []string{"Lisbon", "Oslo", "Kyoto", "Lima", "Accra", "Perth", "Quebec"}
	return benchValues{
		customer: fmt.Sprintf("Customer %d", i%997),
		city:     cities[i%len(cities)],
		note:     fmt.Sprintf("order %d shipped by sea, two crates, signed on arrival", i),
		day:      1 + i%28,
		discount: float64(i%20) / 100,
		amount:   float64(i%5000) * 1.25,
	}
}

// benchWorkbook makes a workbook of rows orders (benchRow) under a header.
func benchWorkbook(tb testing.TB, rows int) []byte {
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		tb.Fatal(err)
	}
	dateStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 14})
	pctStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 10})
	amountStyle, _ := f.NewStyle(&excelize.Style{NumFmt: 4})
	if err := sw.SetRow("A1", []any{"Id", "Customer", "City", "Ordered", "Discount", "Amount", "Note"}); err != nil {
		tb.Fatal(err)
	}
	for i := range rows {
		row := benchRow(i)
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		err := sw.SetRow(cell, []any{
			i, row.customer, row.city,
			excelize.Cell{StyleID: dateStyle, Value: time.Date(2024, 3, row.day, 0, 0, 0, 0, time.UTC)},
			excelize.Cell{StyleID: pctStyle, Value: row.discount},
			excelize.Cell{StyleID: amountStyle, Value: row.amount},
			row.note,
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkXLSX reads the same generated workbook with this extractor
// (strata) and with excelize's own streaming reader alone (f.Rows and
// Columns over every row, nothing else): the ratio of the two is the
// extractor's overhead. Both report MB/s of uncompressed XML, and the
// process's CPU time per read (cpu-ms/op), which other work on a shared
// machine disturbs less than the wall clock.
func BenchmarkXLSX(b *testing.B) {
	data, _, _ := benchFiles(b)
	size := uncompressed(b, data)
	b.Run("strata", func(b *testing.B) {
		b.SetBytes(size)
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := (XLSX{}).Extract(context.Background(), data, "bench.xlsx", extract.DefaultLimits()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("excelize", func(b *testing.B) {
		b.SetBytes(size)
		defer reportCPU(b)()
		for b.Loop() {
			f, err := excelize.OpenReader(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			rows, err := f.Rows("Sheet1")
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
				if _, err := rows.Columns(); err != nil {
					b.Fatal(err)
				}
			}
			rows.Close()
			f.Close()
		}
	})
}

// reportCPU starts measuring the process's CPU time; the function it
// returns reports it per operation.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkODS reports MB/s of uncompressed XML.
func BenchmarkODS(b *testing.B) {
	_, data, _ := benchFiles(b)
	b.SetBytes(uncompressed(b, data))
	for b.Loop() {
		if _, err := (ODS{}).Extract(context.Background(), data, "bench.ods", extract.DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtract reads the same 20,000-row sheet in each format,
// reporting MB/s of uncompressed XML (for CSV, of the file).
func BenchmarkExtract(b *testing.B) {
	xlsx, ods, csv := benchFiles(b)
	for _, tt := range []struct {
		name string
		e    extract.Extractor
		data []byte
		size int64
	}{
		{"xlsx", XLSX{}, xlsx, uncompressed(b, xlsx)},
		{"ods", ODS{}, ods, uncompressed(b, ods)},
		{"csv", CSV{}, csv, int64(len(csv))},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(tt.size)
			for b.Loop() {
				if _, err := tt.e.Extract(context.Background(), tt.data, "bench."+tt.name, extract.DefaultLimits()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
