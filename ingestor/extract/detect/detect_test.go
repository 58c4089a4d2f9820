package detect

import (
	"archive/zip"
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

func TestFormatByContent(t *testing.T) {
	tests := []struct {
		name, data string
		want       string
		wantErr    error
	}{
		{"a.pdf", "%PDF-1.7\n...", PDF, nil},
		{"misnamed.txt", "%PDF-1.4\n...", PDF, nil}, // content wins over the name
		{"junk-then-pdf", "\x00\x00garbage%PDF-1.5", PDF, nil},
		{"photo.jpg", "\x89PNG\r\n\x1a\nrest", Image, nil},
		{"x", "\xff\xd8\xff\xe0rest", Image, nil},
		{"page.html", "<p>hi</p>", HTML, nil},
		{"noext", "<!DOCTYPE html><html><body>x</body></html>", HTML, nil},
		{"data.xml", "<html>looks like html but named .xml</html>", Text, nil},
		{"README.md", "# Title", Markdown, nil},
		{"main.go", "package main\n", Code, nil},
		{"script", "#!/usr/bin/env python3\nprint(1)\n", Code, nil},
		{"data.csv", "a,b\n1,2\n", CSV, nil},
		{"data.tsv", "a\tb\n1\t2\n", CSV, nil},
		{"excel.csv", "caf\xe9,1\n", CSV, nil}, // Windows-1252, which the CSV reader decodes
		{"memo.fodt", "<?xml version=\"1.0\"?><office:document/>", ODT, nil},
		{"sheet.fods", "<?xml version=\"1.0\"?><office:document/>", ODS, nil},
		{"config.yaml", "a: 1\n", Text, nil},
		{"notes", "just words", Text, nil},
		{"empty.md", "", "", extract.ErrCorrupt},
		{"binary.txt", "\x00\x01\x02", "", extract.ErrCorrupt},
		{"latin1.md", "caf\xe9", "", extract.ErrCorrupt},
		{"tool.exe", "MZ\x90\x00\x03\x00\x00\x00", "", extract.ErrUnsupported},
		// A zip whose directory cannot be read is what its name says, for
		// that reader to say what is wrong; unnamed, it is corrupt.
		{"sheet.xlsx", "PK\x03\x04\x14\x00\x06\x00", XLSX, nil},
		{"broken.docx", "PK\x03\x04 not a zip", DOCX, nil},
		{"broken", "PK\x03\x04 not a zip", "", extract.ErrCorrupt},
		{"truncated.doc", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "", extract.ErrCorrupt},
	}
	for _, tt := range tests {
		got, err := Format(tt.name, []byte(tt.data))
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Format(%q) error = %v, want %v", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Format(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// TestPDFHeaderOrQuote: a %PDF- header at the start, or after junk, makes a
// PDF whatever the name; under a name that promises text, a header after
// text is quoted and the file is text (docs/formats.md, "Is it a PDF?").
func TestPDFHeaderOrQuote(t *testing.T) {
	real := string(pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"Hello"}}}, nil))
	binaryPDF := "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
	tests := []struct {
		name, data string
		want       string
	}{
		// A real PDF is a PDF whatever its name.
		{"report.pdf", real, PDF},
		{"report.txt", real, PDF},
		{"report.md", real, PDF},
		{"report.go", real, PDF},
		{"report.html", real, PDF},
		{"report", real, PDF},
		{"scan.txt", binaryPDF, PDF},
		// After a little junk, as readers accept it.
		{"junk.pdf", "\x00\x01\x02\x03" + real, PDF},
		{"junk", "garbage bytes" + real, PDF},
		{"junk.txt", "\x00\x00" + real, PDF},
		{"junk.md", "\x1a\x04\x7f" + real, PDF},
		{"macbinary.md", "\x00\x0breport.pdf" + strings.Repeat("\x00", 100) + real, PDF},
		{"junk-latin1.txt", "caf\xe9 " + real, PDF},
		{"bom.md", "\xef\xbb\xbf" + real, PDF},
		{"blank.txt", "\r\n  \n\t" + real, PDF},
		// A text preamble before a PDF whose body is not text: not text either.
		{"saved.txt", "HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n" + binaryPDF, PDF},
		// Text that quotes a header in its body, or after its first line.
		{"notes.md", "# PDF versions\n\nA file starts with `%PDF-1.7` or an older version.\n", Markdown},
		{"notes.txt", "The header is %PDF-1.7, then a binary comment line.\n", Text},
		{"notes.txt", "Example:\n%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", Text},
		{"page.html", "<p>Every PDF starts with <code>%PDF-1.7</code>.</p>", HTML},
		{"main.go", "package main\n\nconst header = \"%PDF-1.7\"\n", Code},
		{"main.go", "package main\n%PDF-1.7\n", Code},
		{"script", "#!/bin/sh\nprintf '%PDF-1.4\\n' > x.pdf\n", Code},
		{"config.yaml", "magic: \"%PDF-\"\n", Text},
		{"log.txt", "\x1b[32mINFO\x1b[0m read %PDF-1.7 header\n", Text},
		{"a.txt", "x%PDF-1.5 " + strings.Repeat("text ", 10), Text},
		// Past the first KiB a header is never one.
		{"late", strings.Repeat("a", 1024) + "%PDF-1.7\n", Text},
		{"late.md", strings.Repeat("a", 1024) + "%PDF-1.7\n", Markdown},
		// PDF object syntax without a header: a PDF only under a name that does not promise text.
		{"headerless.pdf", strings.TrimPrefix(real, "%PDF-1.4\n"), PDF},
		{"headerless", strings.TrimPrefix(real, "%PDF-1.4\n"), PDF},
		{"objects.txt", "1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n", Text},
		{"objects.md", "Objects:\n\n    1 0 obj\n    << /Type /Catalog /Pages 2 0 R >>\n    endobj\n", Markdown},
		{"objects.go", "package x\n\nconst obj = \"1 0 obj << /Type /Page >> endobj\"\n", Code},
	}
	if !strings.HasPrefix(real, "%PDF-1.4\n") {
		t.Fatalf("pdfwrite writes %q first", real[:10])
	}
	for _, tt := range tests {
		got, err := Format(tt.name, []byte(tt.data))
		if err != nil || got != tt.want {
			t.Errorf("Format(%q, %.40q) = %q, %v; want %q", tt.name, tt.data, got, err, tt.want)
		}
		if got == PDF && !pdf.Sniff([]byte(tt.data)) {
			t.Errorf("Format(%q, %.40q) = pdf, which the PDF reader refuses", tt.name, tt.data)
		}
	}
}

// TestQuotedPDFSyntax: the situations of the repository's files that were
// read as broken PDFs (testdata/quoted reproduces each: Markdown and Go that
// quote a %PDF- header within the first KiB, or PDF object syntax) are text.
func TestQuotedPDFSyntax(t *testing.T) {
	want := map[string]string{
		"formats.md": Markdown, "poppler.go": Code, "pdftest.go": Code, "imagescan_test.go": Code,
		"memlimit_linux_test.go": Code, "detect_test.go": Code, "strata_tools_test.go": Code,
	}
	for name, format := range want {
		data, err := os.ReadFile(filepath.Join("testdata", "quoted", name))
		if err != nil {
			t.Fatal(err)
		}
		if !pdf.Sniff(data) {
			t.Errorf("%s: the fixture no longer looks like a PDF to a header search, so it tests nothing", name)
		}
		if got, err := Format(name, data); err != nil || got != format {
			t.Errorf("Format(%s) = %q, %v; want %q", name, got, err, format)
		}
		// Under a name that promises nothing, content decides: the header or objects make a PDF.
		if got, _ := Format("noext", data); got != PDF {
			t.Errorf("Format(noext) of %s = %q; want pdf", name, got)
		}
	}
}

// zipOf is a zip archive of the named members.
func zipOf(t *testing.T, members map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range slices.Sorted(maps.Keys(members)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(members[name]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestZipFormatByParts: a zip is DOCX, PPTX, XLSX, ODF or EPUB by its
// parts, whatever its name (issue 49 item 5); a zip of none of them is an
// archive, whose members are read (issue 52).
func TestZipFormatByParts(t *testing.T) {
	tests := []struct {
		name    string
		members map[string]string
		want    string
		wantErr error
	}{
		{"report.zip", map[string]string{"[Content_Types].xml": "", "word/document.xml": ""}, DOCX, nil},
		{"deck.docx", map[string]string{"[Content_Types].xml": "", "ppt/presentation.xml": ""}, PPTX, nil},
		{"upload", map[string]string{"[Content_Types].xml": "", "xl/workbook.xml": ""}, XLSX, nil},
		{"a.bin", map[string]string{"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": ""}, ODT, nil},
		{"a.odt", map[string]string{"mimetype": "application/vnd.oasis.opendocument.presentation", "content.xml": ""}, ODP, nil},
		{"a", map[string]string{"mimetype": "application/vnd.oasis.opendocument.spreadsheet\n", "content.xml": ""}, ODS, nil},
		{"book.zip", map[string]string{"mimetype": "application/epub+zip", "META-INF/container.xml": ""}, EPUB, nil},
		{"book", map[string]string{"META-INF/container.xml": ""}, EPUB, nil},
		{"sheet.ods", map[string]string{"content.xml": "", "META-INF/manifest.xml": ""}, ODS, nil},
		{"photos.zip", map[string]string{"a.jpg": "x", "b.txt": "y"}, ZIP, nil},
		{"fake.docx", map[string]string{"notes.txt": "y"}, ZIP, nil},
	}
	for _, tt := range tests {
		got, err := Format(tt.name, zipOf(t, tt.members))
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Format(%q) error = %v, want %v", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Format(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// TestOLEByContent: an OLE file with an EncryptedPackage stream is an
// encrypted Office file whatever its name; another is a legacy one.
func TestOLEByContent(t *testing.T) {
	locked, err := os.ReadFile("testdata/locked.docx")
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := os.ReadFile("testdata/legacy.doc")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"locked.docx", "locked.xlsx", "budget", "a.doc"} {
		if _, err := Format(name, locked); !errors.Is(err, extract.ErrEncrypted) || !strings.Contains(err.Error(), "password") {
			t.Errorf("Format(%q, encrypted package) error = %v, want %v naming the password", name, err, extract.ErrEncrypted)
		}
	}
	for _, name := range []string{"legacy.doc", "legacy.docx"} {
		if _, err := Format(name, legacy); !errors.Is(err, extract.ErrUnsupported) {
			t.Errorf("Format(%q, legacy OLE) error = %v, want %v", name, err, extract.ErrUnsupported)
		}
	}
}

// TestContainersByName: a message and a mailbox are told by their names
// (.eml, .mbox, .mbx), whatever charset their 8-bit parts are in, and a
// zip of no document format is an archive whatever its name.
func TestContainersByName(t *testing.T) {
	latin1 := "From: a@example.com\nSubject: caf\xe9\n\ncaf\xe9 cr\xe8me\n"
	tests := []struct {
		name, data, want string
	}{
		{"mail/launch.eml", latin1, Email},
		{"mail/team.mbox", "From a@example.com Mon Nov  2 09:00:00 2026\n" + latin1, MBOX},
		{"archive.mbx", "From a@example.com Mon Nov  2 09:00:00 2026\n" + latin1, MBOX},
		{"from.txt", "From a@example.com Mon Nov  2 09:00:00 2026\nSubject: x\n\nbody\n", Text},
		{"backup", string(zipOf(t, map[string]string{"notes.txt": "x"})), ZIP},
	}
	for _, tt := range tests {
		if got, err := Format(tt.name, []byte(tt.data)); err != nil || got != tt.want {
			t.Errorf("Format(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
