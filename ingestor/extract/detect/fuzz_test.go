package detect

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// fuzzNames are the names a fuzzed file is detected under: no extension,
// .pdf, and names that promise text.
var fuzzNames = []string{"file", "file.pdf", "file.md", "file.go", "file.txt", "file.html", "file.yaml"}

// FuzzFormat checks, for any bytes under each name, that detection answers
// a known format or a typed error without panicking; that a file starting
// with %PDF- is a PDF whatever its name; that every PDF it sends on is one
// the PDF reader accepts; and that the same bytes after a line of text,
// under a name that promises text, are never a PDF when the result is text
// (a text file that quotes PDF syntax is text).
func FuzzFormat(f *testing.F) {
	f.Add([]byte("%PDF-1.7\n..."))
	f.Add([]byte("\x00\x00garbage%PDF-1.5"))
	f.Add([]byte("# Title\n\nA `%PDF-1.7` header.\n"))
	f.Add([]byte("1 0 obj\n<< /Type /Catalog >>\nendobj\n"))
	f.Add([]byte("#!/bin/sh\necho %PDF-1.4\n"))
	f.Add(pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"Hello"}}}, nil))
	if quoted, err := filepath.Glob(filepath.Join("testdata", "quoted", "*")); err == nil {
		for _, p := range quoted {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	formats := map[string]bool{PDF: true, DOCX: true, HTML: true, Markdown: true, Text: true, Code: true, Image: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range fuzzNames {
			got, err := Format(name, data)
			switch {
			case err != nil && !errors.Is(err, extract.ErrCorrupt) && !errors.Is(err, extract.ErrUnsupported):
				t.Fatalf("Format(%s): untyped error %v", name, err)
			case err == nil && !formats[got]:
				t.Fatalf("Format(%s) = unknown format %q", name, got)
			case err == nil && got == PDF && !pdf.Sniff(data):
				t.Fatalf("Format(%s) = pdf, which the PDF reader refuses", name)
			case bytes.HasPrefix(data, []byte("%PDF-")) && got != PDF:
				t.Fatalf("Format(%s) of a file starting with %%PDF- = %q, %v", name, got, err)
			}
			if again, err2 := Format(name, data); again != got || (err == nil) != (err2 == nil) {
				t.Fatalf("Format(%s) is not deterministic: %q then %q", name, got, again)
			}
		}
		quoted := append([]byte("Quoted: "), data...)
		if !cleanText(quoted) {
			return
		}
		for _, name := range fuzzNames[2:] {
			if got, err := Format(name, quoted); got == PDF || err != nil {
				t.Fatalf("Format(%s) of text quoting PDF syntax = %q, %v; want text", name, got, err)
			}
		}
	})
}

// cleanText: valid UTF-8 with no control character but tab, line feed,
// form feed and carriage return.
func cleanText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\f' && c != '\r') || c == 0x7f {
			return false
		}
	}
	return utf8.Valid(b)
}
