package detect

import (
	"errors"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
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
		{"data.csv", "a,b\n1,2\n", Text, nil},
		{"config.yaml", "a: 1\n", Text, nil},
		{"notes", "just words", Text, nil},
		{"empty.md", "", "", extract.ErrCorrupt},
		{"binary.txt", "\x00\x01\x02", "", extract.ErrCorrupt},
		{"latin1.md", "caf\xe9", "", extract.ErrCorrupt},
		{"tool.exe", "MZ\x90\x00\x03\x00\x00\x00", "", extract.ErrUnsupported},
		{"sheet.xlsx", "PK\x03\x04\x14\x00\x06\x00", "", extract.ErrUnsupported},
		{"broken.docx", "PK\x03\x04 not a zip", DOCX, nil},
		{"old.doc", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "", extract.ErrUnsupported},
		{"locked.docx", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", DOCX, nil},
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
