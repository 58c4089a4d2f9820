package sheet

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// withEntry is the archive of parts (deflated) plus one entry whose
// content is n bytes of r, written streaming so a test never holds them.
func withEntry(tb testing.TB, parts map[string]string, name string, r io.Reader, n int64) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed) // fast enough for 100 MB of zeros
	})
	for _, k := range sortedKeys(parts) {
		w, err := zw.Create(k)
		if err != nil {
			tb.Fatal(err)
		}
		io.WriteString(w, parts[k])
	}
	w, err := zw.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.CopyN(w, r, n); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// withRawEntry is the archive of parts plus an entry named name whose
// header declares size bytes and whose data is the deflated content, as
// is: a header that lies.
func withRawEntry(tb testing.TB, parts map[string]string, name string, content []byte, size uint64) []byte {
	tb.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	fw.Write(content)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, k := range sortedKeys(parts) {
		w, _ := zw.Create(k)
		io.WriteString(w, parts[k])
	}
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(content),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: size,
	})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(comp.Bytes())
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// random is n bytes no compressor shrinks.
func random(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// named is the data of the sample called name.
func named(tb testing.TB, samples []extracttest.Sample, name string) []byte {
	tb.Helper()
	for _, s := range samples {
		if s.Name == name {
			return s.Data
		}
	}
	tb.Fatalf("no sample %s", name)
	return nil
}

// truncated is the first half of a testdata file.
func truncated(tb testing.TB, name string) []byte {
	data := readFile(tb, name)
	return data[:len(data)/2]
}

// badChecksum changes one byte of the first stored entry's data, so only
// its checksum can tell.
func badChecksum(tb testing.TB, stored []byte) []byte {
	tb.Helper()
	i := bytes.Index(stored, []byte("<?xml"))
	if i < 0 {
		tb.Fatal("no stored XML")
	}
	out := bytes.Clone(stored)
	out[i+2] = 'X' // <?Xml: a byte a checksum sees
	return out
}

// oleFile is an OLE header followed by a stream name in UTF-16LE.
func oleFile(stream string) []byte {
	data := append([]byte(oleMagic), make([]byte, 504)...)
	data = append(data, utf16le(stream)...)
	return append(data, make([]byte, 64)...)
}

const (
	// laughs defines the billion-laughs entities; a reader that expanded
	// them would make gigabytes of "lol".
	laughs = `<!DOCTYPE x [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">` +
		`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">` +
		`<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>`
	// external is an external entity; a reader that resolved it would
	// read a local file.
	external = `<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>`
)

// inline is an inline-string cell.
func inline(ref, text string) string {
	return `<c r="` + ref + `" t="inlineStr"><is><t>` + text + `</t></is></c>`
}

// ampWorkbook is a workbook whose one shared string of a megabyte is
// referred to by every cell of two rows of 16,384 cells: excelize alone
// would copy it into every cell, 16 GB per row. The string is random
// letters and the sheet under a megabyte, so no zip-bomb check refuses
// them first.
func ampWorkbook(tb testing.TB) []byte {
	row := `<row>` + strings.Repeat(`<c t="s"><v>0</v></c>`, maxColumns) + `</row>`
	parts := xlsxParts(strings.Repeat(row, 2))
	letters := random(1 << 20)
	for i := range letters {
		letters[i] = 'a' + letters[i]%26
	}
	parts["xl/sharedStrings.xml"] = sstXML(string(letters))
	return zipParts(tb, parts, false)
}

func xlsxHostile(tb testing.TB) []extracttest.Sample {
	good := xlsxParts(`<row r="1">` + inline("A1", "Name") + `</row><row r="2">` + inline("A2", "value") + `</row>`)
	laughing := xlsxParts(`<row r="1">` + inline("A1", "&lol9;") + `</row>`)
	laughing["xl/worksheets/sheet1.xml"] = strings.Replace(laughing["xl/worksheets/sheet1.xml"], "?>", "?>"+laughs, 1)
	laughingSST := xlsxParts(`<row r="1"><c r="A1" t="s"><v>0</v></c></row>`)
	laughingSST["xl/sharedStrings.xml"] = strings.Replace(sstXML("&lol9;"), "?>", "?>"+laughs, 1)
	xxe := xlsxParts(`<row r="1">` + inline("A1", "&xxe;") + `</row>`)
	xxe["xl/worksheets/sheet1.xml"] = strings.Replace(xxe["xl/worksheets/sheet1.xml"], "?>", "?>"+external, 1)
	malformed := xlsxParts(`<row r="1">` + inline("A1", "open") + `</row>`)
	malformed["xl/workbook.xml"] = `<workbook><sheets><sheet name="x"`
	return []extracttest.Sample{
		{Name: "bomb-ratio.xlsx", Data: withEntry(tb, good, "xl/media/bomb.bin", zeros{}, 100<<20), Want: extract.ErrTooLarge},
		{Name: "bomb-size.xlsx", Data: withRawEntry(tb, good, "xl/media/big.bin", random(2<<20), 300<<20), Want: extract.ErrTooLarge},
		{Name: "lying.xlsx", Data: withRawEntry(tb, good, "xl/worksheets/sheet2.xml", bytes.Repeat([]byte("<row/>"), 1<<20), 100), Want: extract.ErrTooLarge},
		{Name: "checksum.xlsx", Data: badChecksum(tb, zipParts(tb, good, true)), Want: extract.ErrCorrupt},
		{Name: "truncated.xlsx", Data: truncated(tb, "workbook.xlsx"), Want: extract.ErrCorrupt},
		{Name: "amplified.xlsx", Data: ampWorkbook(tb), Want: extract.ErrTooLarge},
		{Name: "wide.xlsx", Data: zipParts(tb, xlsxParts(`<row r="1">`+inline("A1", "x")+`</row>`+strings.Repeat(`<c r="A1"><v>1</v></c>`, maxColumns+1)), false), Want: extract.ErrCorrupt},
		{Name: "billion-rows.xlsx", Data: zipParts(tb, xlsxParts(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData>`+
			`<row r="1">`+inline("A1", "first")+`</row><row r="1048576">`+inline("XFD1048576", "last")+`</row></sheetData></worksheet>`), false)},
		{Name: "past-last-row.xlsx", Data: zipParts(tb, xlsxParts(`<row r="99999999999">`+inline("A1", "x")+`</row>`), false)},
		{Name: "laughs.xlsx", Data: zipParts(tb, laughing, false)},
		{Name: "laughs-sst.xlsx", Data: zipParts(tb, laughingSST, false), Want: extract.ErrCorrupt},
		{Name: "xxe.xlsx", Data: zipParts(tb, xxe, false)},
		{Name: "malformed.xlsx", Data: zipParts(tb, malformed, false), Want: extract.ErrCorrupt},
		{Name: "no-workbook.xlsx", Data: zipParts(tb, map[string]string{"a.xml": "<a/>"}, false), Want: extract.ErrCorrupt},
		{Name: "encrypted.xlsx", Data: oleFile("EncryptionInfo"), Want: extract.ErrEncrypted},
		{Name: "legacy.xls", Data: oleFile("Workbook"), Want: extract.ErrUnsupported},
	}
}

func odsHostile(tb testing.TB) []extracttest.Sample {
	content := odsContent(odsSheet("S", "", `<table:table-row>`+odsCell("x")+`</table:table-row>`))
	laughing := strings.Replace(odsContent(odsSheet("S", "", `<table:table-row>`+odsCell("&lol9;")+`</table:table-row>`)), "?>", "?>"+laughs, 1)
	xxe := strings.Replace(odsContent(odsSheet("S", "", `<table:table-row>`+odsCell("&xxe;")+`</table:table-row>`)), "?>", "?>"+external, 1)
	deep := odsContent(odsSheet("S", "", `<table:table-row><table:table-cell><text:p>`+strings.Repeat("<text:span>", 2000)+
		strings.Repeat("</text:span>", 2000)+`</text:p></table:table-cell></table:table-row>`))
	manifest := `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml">` +
		`<manifest:encryption-data/></manifest:file-entry></manifest:manifest>`
	return []extracttest.Sample{
		{Name: "bomb-ratio.ods", Data: withEntry(tb, nil, "content.xml", zeros{}, 100<<20), Want: extract.ErrTooLarge},
		{Name: "bomb-size.ods", Data: withRawEntry(tb, nil, "content.xml", random(2<<20), 300<<20), Want: extract.ErrTooLarge},
		{Name: "lying.ods", Data: withRawEntry(tb, nil, "content.xml", []byte(odsContent(strings.Repeat(odsSheet("S", "", ""), 1<<16))), 100), Want: extract.ErrTooLarge},
		{Name: "billion-rows.ods", Data: odsFile(tb, billionSheet(), "")},
		{Name: "billion-values.ods", Data: odsFile(tb, odsSheet("S", "", `<table:table-row table:number-rows-repeated="1000000000">`+
			`<table:table-cell table:number-columns-repeated="1000000000" office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row>`), ""), Want: extract.ErrTooLarge},
		{Name: "laughs.ods", Data: zipParts(tb, map[string]string{"content.xml": laughing}, false), Want: extract.ErrCorrupt},
		{Name: "xxe.ods", Data: zipParts(tb, map[string]string{"content.xml": xxe}, false), Want: extract.ErrCorrupt},
		{Name: "deep.ods", Data: zipParts(tb, map[string]string{"content.xml": deep}, false), Want: extract.ErrCorrupt},
		{Name: "encrypted.ods", Data: zipParts(tb, map[string]string{"content.xml": content, "META-INF/manifest.xml": manifest}, false), Want: extract.ErrEncrypted},
		{Name: "text.ods", Data: zipParts(tb, map[string]string{"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": content}, false), Want: extract.ErrUnsupported},
		{Name: "no-content.ods", Data: zipParts(tb, map[string]string{"meta.xml": "<a/>"}, false), Want: extract.ErrCorrupt},
		{Name: "no-sheets.fods", Data: []byte(`<?xml version="1.0"?><office:document ` + odsNS + `><office:body/></office:document>`), Want: extract.ErrCorrupt},
		{Name: "legacy.ods", Data: oleFile("Workbook"), Want: extract.ErrUnsupported},
		{Name: "truncated.ods", Data: truncated(tb, "workbook.ods"), Want: extract.ErrCorrupt},
		{Name: "truncated.fods", Data: truncated(tb, "workbook.fods"), Want: extract.ErrCorrupt},
		{Name: "malformed.ods", Data: zipParts(tb, map[string]string{"content.xml": strings.Replace(content, "</text:p>", "", 1)}, false), Want: extract.ErrCorrupt},
	}
}

// billionSheet claims a billion rows of a billion empty cells, then
// holds one value.
func billionSheet() string {
	return odsSheet("Huge", "", `<table:table-column table:number-columns-repeated="1000000000"/>`+
		`<table:table-row table:number-rows-repeated="1000000000"><table:table-cell table:number-columns-repeated="1000000000"/></table:table-row>`+
		`<table:table-row><table:covered-table-cell table:number-columns-repeated="3"/>`+odsCell("after a billion rows")+`</table:table-row>`)
}

// TestHostileXLSX checks what each hostile workbook must give, and that
// it is cheap: within a few seconds.
func TestHostileXLSX(t *testing.T) {
	for _, s := range xlsxHostile(t) {
		t.Run(s.Name, func(t *testing.T) {
			start := time.Now()
			doc, err := XLSX{}.Extract(context.Background(), s.Data, s.Name, extract.DefaultLimits())
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			checkHostile(t, doc, err, s, xlsxProfile)
		})
	}
}

func TestHostileODS(t *testing.T) {
	for _, s := range odsHostile(t) {
		t.Run(s.Name, func(t *testing.T) {
			start := time.Now()
			doc, err := ODS{}.Extract(context.Background(), s.Data, s.Name, extract.DefaultLimits())
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			checkHostile(t, doc, err, s, odsProfile)
		})
	}
}

func checkHostile(t *testing.T, doc *extract.Document, err error, s extracttest.Sample, p extracttest.Profile) {
	t.Helper()
	switch {
	case s.Want != nil && !errors.Is(err, s.Want):
		t.Fatalf("got %v; want %v", err, s.Want)
	case err != nil && !extracttest.Classified(err):
		t.Fatalf("unclassified error %v", err)
	case err != nil:
		t.Log(err)
	default:
		if cerr := extracttest.Check(doc, s.Data, p); cerr != nil {
			t.Fatal(cerr)
		}
		if strings.Contains(doc.Text, "lollol") || strings.Contains(doc.Text, "root:") {
			t.Fatalf("an entity was expanded: %q", doc.Text)
		}
		t.Logf("%q, warnings %q", texts(doc), doc.Warnings)
	}
}

// TestBillionRowsXLSX: a sheet naming its last row 1,048,576 (and a
// dimension of the whole grid) is read in well under a second, both
// values in place.
func TestBillionRowsXLSX(t *testing.T) {
	data := named(t, xlsxHostile(t), "billion-rows.xlsx")
	start := time.Now()
	doc := extractOK(t, XLSX{}, xlsxProfile, data, "billion-rows.xlsx")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	want := []string{"Sheet1", "first", "XFD: last"}
	if got := texts(doc); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestBillionRowsODS: a billion empty repeated rows and columns cost
// nothing; the value after them is in the column after the covered cells.
func TestBillionRowsODS(t *testing.T) {
	start := time.Now()
	doc := extractOK(t, ODS{}, odsProfile, odsFile(t, billionSheet(), ""), "huge.ods")
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	if got, want := texts(doc), []string{"Huge", "after a billion rows"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRepeatedValuesODS: a value repeated across columns and rows is
// written in each, bounded by the sheet's last column, and the text limit
// stops a billion rows of it early.
func TestRepeatedValuesODS(t *testing.T) {
	rows := `<table:table-row>` + odsCell("Name") + odsCell("Kind") + `</table:table-row>` +
		`<table:table-row table:number-rows-repeated="3"><table:table-cell table:number-columns-repeated="2" office:value-type="string"><text:p>same</text:p></table:table-cell></table:table-row>`
	doc := extractOK(t, ODS{}, odsProfile, odsFile(t, odsSheet("R", "", rows), ""), "r.ods")
	want := []string{"R", "Name, Kind", "Name: same, Kind: same", "Name: same, Kind: same", "Name: same, Kind: same"}
	if got := texts(doc); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1 << 20
	data := named(t, odsHostile(t), "billion-values.ods")
	start := time.Now()
	_, err := ODS{}.Extract(context.Background(), data, "billion-values.ods", lim)
	if !errors.Is(err, extract.ErrTooLarge) || !strings.Contains(err.Error(), "MaxTextBytes (1048576 bytes)") {
		t.Errorf("got %v, want ErrTooLarge naming MaxTextBytes", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

// TestSharedStringAmplification: a megabyte shared string in every cell
// of rows of 16,384 cells fails as too large while its memory stays near
// what it writes (excelize alone would copy 16 GB into the first row).
func TestSharedStringAmplification(t *testing.T) {
	data := ampWorkbook(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := XLSX{}.Extract(context.Background(), data, "amp.xlsx", extract.DefaultLimits())
	runtime.ReadMemStats(&after)
	if !errors.Is(err, extract.ErrTooLarge) || !strings.Contains(err.Error(), "MaxTextBytes") {
		t.Fatalf("got %v, want ErrTooLarge for the text", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 400<<20 {
		t.Errorf("allocated %d MB", alloc>>20)
	}
}

// TestLongSharedStrings: long shared strings, behind placeholders while
// excelize reads, are back in place in what is written, wherever a cell
// refers to them, text that looks like a placeholder included.
func TestLongSharedStrings(t *testing.T) {
	long := strings.Repeat("long text ", 20)
	parts := xlsxParts(`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>` +
		`<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>3</v></c></row>` +
		`<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3" t="s"><v>2</v></c></row>`)
	parts["xl/sharedStrings.xml"] = sstXML("Note", "Other", long, "\uE0009\uE001 is not a placeholder")
	doc := extractOK(t, XLSX{}, xlsxProfile, zipParts(t, parts, false), "long.xlsx")
	want := []string{"Sheet1", "Note, Other", "Note: " + strings.TrimSpace(long) + ", Other: \uE0009\uE001 is not a placeholder",
		"Note: \uE0009\uE001 is not a placeholder, Other: " + strings.TrimSpace(long)}
	if got := texts(doc); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestLongNumberFormat: a number format longer than Excel allows is read
// as General, with a warning.
func TestLongNumberFormat(t *testing.T) {
	parts := xlsxParts(`<row r="1"><c r="A1" s="1"><v>7</v></c></row>`)
	parts["xl/styles.xml"] = `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
		`<numFmts count="1"><numFmt numFmtId="164" formatCode="&quot;` + strings.Repeat("y", 5000) + `&quot;0"/></numFmts>` +
		`<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="164" applyNumberFormat="1"/></cellXfs></styleSheet>`
	doc := extractOK(t, XLSX{}, xlsxProfile, zipParts(t, parts, false), "format.xlsx")
	if got, want := texts(doc), []string{"Sheet1", "A: 7"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "read as General") {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// TestRowSteps: sheets that each name row 1,048,576 stop being read once
// the workbook has named maxRowSteps rows, with a warning, in seconds.
func TestRowSteps(t *testing.T) {
	sheets := make([]string, 20)
	for i := range sheets {
		sheets[i] = `<row r="1048576">` + inline("A1048576", "end") + `</row>`
	}
	start := time.Now()
	doc := extractOK(t, XLSX{}, xlsxProfile, zipParts(t, xlsxParts(sheets...), false), "steps.xlsx")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if len(doc.Warnings) != 2 || !strings.Contains(doc.Warnings[0], "sheet 17 (Sheet17) read in part") ||
		!strings.Contains(doc.Warnings[1], "3 sheets after sheet 17 not read") {
		t.Errorf("warnings %q", doc.Warnings)
	}
	if doc.Pages != 20 || doc.Blocks[len(doc.Blocks)-1].Page != 17 {
		t.Errorf("%d pages, last block on page %d", doc.Pages, doc.Blocks[len(doc.Blocks)-1].Page)
	}
}

// TestPastLastRow: a row numbered past the last a sheet can have ends
// the sheet with a warning.
func TestPastLastRow(t *testing.T) {
	doc := extractOK(t, XLSX{}, xlsxProfile, named(t, xlsxHostile(t), "past-last-row.xlsx"), "past.xlsx")
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "rows past row 1048576 not read") {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// TestMaxUncompressed: an archive expanding past the limit is refused
// before anything is decompressed, the error naming the limit.
func TestMaxUncompressed(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 4096
	for _, tt := range []struct {
		e    extract.Extractor
		name string
	}{{XLSX{}, "workbook.xlsx"}, {ODS{}, "workbook.ods"}} {
		_, err := tt.e.Extract(context.Background(), readFile(t, tt.name), tt.name, lim)
		if !errors.Is(err, extract.ErrTooLarge) || !strings.Contains(err.Error(), "MaxUncompressed (4096 bytes)") {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// TestCancelledMidSheet: a long sheet stops at the next context check.
func TestCancelledMidSheet(t *testing.T) {
	for _, tt := range []struct {
		e    extract.Extractor
		data []byte
	}{{XLSX{}, bigWorkbook(t, 5000)}, {CSV{}, []byte(strings.Repeat("a,b\n", 5000))}} {
		ctx := &countdown{Context: context.Background(), n: 10}
		if _, err := tt.e.Extract(ctx, tt.data, "long", extract.DefaultLimits()); !errors.Is(err, extract.ErrTimeout) {
			t.Errorf("%T: got %v, want ErrTimeout", tt.e, err)
		}
	}
}

// countdown reports cancellation after Err has been called n times.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}
