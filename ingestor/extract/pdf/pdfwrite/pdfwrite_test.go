package pdfwrite

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// TestMakeTitledCrossReference checks that every entry of the cross-reference
// table points at its object and startxref at the table, as a reader
// that does not repair files needs.
func TestMakeTitledCrossReference(t *testing.T) {
	b := MakeTitled("Chaos (test) file", []Page{{Lines: []string{"The zq001v000001 token marks this version.", `a \ backslash`}}, {Lines: []string{"page two"}}}, nil)
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no startxref at the end:\n%s", b)
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(b[xref:], []byte("xref\n0 ")) {
		t.Fatalf("startxref %d does not point at the table", xref)
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n `).FindAllSubmatch(b[xref:], -1)
	if len(entries) != 8 { // catalog, pages, font, 2 x (content, page), info
		t.Fatalf("%d objects in the table, want 8", len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(b[off:], []byte(want)) {
			t.Errorf("entry %d points at %q, want %q", i+1, b[off:min(off+12, len(b))], want)
		}
	}
	for _, want := range []string{`/Title (Chaos \(test\) file)`, `(The zq001v000001 token marks this version.) Tj`, `(a \\ backslash) Tj`, "/Count 2"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("no %q in the PDF", want)
		}
	}
}
