package sheet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/strata-kb/strata/ingestor/extract"
)

// TestCSVFixtures: LibreOffice's CSV and TSV of the Inventory sheet read
// as that sheet does (but for the merged cell, which CSV does not keep),
// on no page, without a heading.
func TestCSVFixtures(t *testing.T) {
	want := []string{
		"Item, Owner, Due, Share, Qty, Price, Total",
		"Item: Widget, Owner: sheetcellmarker, Due: 2024-03-15, Share: 12.5%, Qty: 4, Price: 2.50, Total: 10.00",
		"Item: Gadget, Owner: Shared by the whole team, Share: 50.0%, Qty: 3, Price: 1,234.50, Total: 3,703.50",
	}
	for _, name := range []string{"inventory.csv", "inventory.tsv"} {
		doc := extractOK(t, CSV{}, csvProfile, readFile(t, name), name)
		if got := texts(doc); !slices.Equal(got, want) {
			t.Errorf("%s: got %q\nwant %q", name, got, want)
		}
		for _, b := range doc.Blocks {
			if b.Kind != extract.Table || b.Page != 0 {
				t.Errorf("%s: block %+v", name, b)
			}
		}
		if doc.Pages != 0 || doc.Format != "csv" {
			t.Errorf("%s: %d pages, format %q", name, doc.Pages, doc.Format)
		}
	}
}

// TestCSVDelimiters: a tab for .tsv, Excel's sep= line, else the
// separator that splits the first lines most consistently; quoted fields
// keep their separators and line breaks.
func TestCSVDelimiters(t *testing.T) {
	for _, tt := range []struct {
		name, data string
		want       []string
	}{
		{"a.csv", "Name,City\n\"Smith, J.\",\"New\nYork\"\n", []string{"Name, City", "Name: Smith, J., City: New York"}},
		{"a.tsv", "Name\tNote\nx\ty, z\n", []string{"Name, Note", "Name: x, Note: y, z"}},
		{"tabs.csv", "Name\tNote\nx\ty, z\nw\tv\n", []string{"Name, Note", "Name: x, Note: y, z", "Name: w, Note: v"}},
		{"semi.csv", "Name;Price\nx;1,50\ny;2,75\n", []string{"Name, Price", "Name: x, Price: 1,50", "Name: y, Price: 2,75"}},
		{"sep.csv", "sep=|\r\nName|Note\r\nx|a;b,c\r\n", []string{"Name, Note", "Name: x, Note: a;b,c"}},
		{"one.csv", "just one column\nvalue\n", []string{"just one column", "just one column: value"}},
		{"lazy.csv", "Name,Note\nx,say \"hi\" now\n", []string{"Name, Note", "Name: x, Note: say \"hi\" now"}},
	} {
		doc := extractOK(t, CSV{}, csvProfile, []byte(tt.data), tt.name)
		if got := texts(doc); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCSVEncodings: a UTF-8 byte-order mark is dropped, UTF-16 with one
// is decoded, invalid UTF-8 is Windows-1252, a NUL byte is binary.
func TestCSVEncodings(t *testing.T) {
	utf16le := func(s string, bigEndian bool) []byte {
		out := []byte{0xff, 0xfe}
		if bigEndian {
			out = []byte{0xfe, 0xff}
		}
		for _, u := range utf16.Encode([]rune(s)) {
			if bigEndian {
				out = append(out, byte(u>>8), byte(u))
			} else {
				out = append(out, byte(u), byte(u>>8))
			}
		}
		return out
	}
	want := []string{"Name, Città", "Name: €uro, Città: Zürich"}
	for name, data := range map[string][]byte{
		"bom.csv":     []byte("\xef\xbb\xbfName,Città\n€uro,Zürich\n"),
		"utf16le.csv": utf16le("Name\tCittà\n€uro\tZürich\n", false),
		"utf16be.csv": utf16le("Name,Città\n€uro,Zürich\n", true),
		"cp1252.csv":  []byte("Name,Citt\xe0\n\x80uro,Z\xfcrich\n"),
	} {
		doc := extractOK(t, CSV{}, csvProfile, data, name)
		if got := texts(doc); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	if _, err := (CSV{}).Extract(context.Background(), []byte("a,b\n\x00"), "nul.csv", extract.DefaultLimits()); !errors.Is(err, extract.ErrCorrupt) {
		t.Errorf("NUL: %v", err)
	}
}

// TestCSVRecordWiderThanASheet: a record of more fields than a sheet has
// columns (a file that lost its line ends) goes on in further rows; its
// last field is read, and a warning says so.
func TestCSVRecordWiderThanASheet(t *testing.T) {
	var b strings.Builder
	for i := range maxColumns + 500 {
		fmt.Fprintf(&b, "v%d,", i)
	}
	b.WriteString("lastfieldmarker")
	doc, err := CSV{}.Extract(context.Background(), []byte(b.String()), "one-line.csv", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Text, "lastfieldmarker") || !strings.Contains(doc.Text, "v16383") || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "went on in rows") {
		t.Fatalf("last field read: %v; warnings %q", strings.Contains(doc.Text, "lastfieldmarker"), doc.Warnings)
	}
}
