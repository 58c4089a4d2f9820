package detect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// TestRegistryReadsEachFormat: a real file of each reader's format,
// uploaded under a name that says nothing, is read by that reader.
func TestRegistryReadsEachFormat(t *testing.T) {
	r := NewRegistry(nil)
	for _, tt := range []struct{ file, format string }{
		{"../slides/testdata/deck.pptx", PPTX},
		{"../slides/testdata/deck.odp", ODP},
		{"../epub/testdata/harbour-epub3.epub", EPUB},
		{"../docx/testdata/trailing.docx", DOCX},
		{"../odt/testdata/report.odt", ODT},
		{"../sheet/testdata/workbook.xlsx", XLSX},
		{"../sheet/testdata/workbook.ods", ODS},
	} {
		data, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := r.Extract(context.Background(), data, "upload-"+filepath.Base(tt.file)+".bin", extract.DefaultLimits())
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if doc.Format != tt.format || len(doc.Blocks) == 0 {
			t.Errorf("%s: format %q with %d blocks, want %q with some", tt.file, doc.Format, len(doc.Blocks), tt.format)
		}
	}
}

// TestFormatCapsBoundTextFormats: 12 MiB of one-character paragraphs, under
// the text limit, would hold 3 million blocks (about 170 MB): the text
// format's cap stops it while it is read, with the budget in the reason,
// while the same budget reads the same bytes as paragraphs of 100 bytes.
func TestFormatCapsBoundTextFormats(t *testing.T) {
	r := NewRegistry(nil)
	lim := extract.DefaultLimits()
	tiny := strings.Repeat("a\n\n", 4<<20)
	_, err := r.Extract(context.Background(), []byte(tiny), "notes.txt", lim)
	if !errors.Is(err, extract.ErrTooLarge) || !strings.Contains(err.Error(), "64 MiB") || !strings.Contains(err.Error(), "-max-file-bytes") {
		t.Fatalf("3M paragraphs: %v, want ErrTooLarge naming the 64 MiB cap", err)
	}
	normal := strings.Repeat(strings.Repeat("b", 98)+"\n\n", 120_000)
	if _, err := r.Extract(context.Background(), []byte(normal), "notes.txt", lim); err != nil {
		t.Fatalf("12 MB in paragraphs of 100 bytes: %v", err)
	}
}

// TestFormatCapsFollowTheTextLimit: with -max-text-bytes raised to 32 MiB
// a text format's cap is 128 MiB, so the same 12 MiB of one-character
// paragraphs that the default refuses (about 224 MiB of blocks) still is,
// and the cap named is the raised one.
func TestFormatCapsFollowTheTextLimit(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 32 << 20
	_, err := NewRegistry(nil).Extract(context.Background(), []byte(strings.Repeat("a\n\n", 4<<20)), "notes.txt", lim)
	if !errors.Is(err, extract.ErrTooLarge) || !strings.Contains(err.Error(), "128 MiB") {
		t.Fatalf("with a 32 MiB text limit: %v, want ErrTooLarge naming a 128 MiB cap", err)
	}
}

// TestRegistryReadsContainersMembersAsDocuments: a container's members are
// read by their own formats' readers through the registry into documents
// of their own, nested as the containers are (a message in a zip, its
// attachment in the message), and none of their text is in a container's.
func TestRegistryReadsContainersMembersAsDocuments(t *testing.T) {
	docx, err := os.ReadFile("../docx/testdata/trailing.docx")
	if err != nil {
		t.Fatal(err)
	}
	eml := "From: a@example.com\r\nSubject: Notes\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nThe body: regbodymarker.\r\n" +
		"--b\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=notes.txt\r\n\r\nThe notes: regnotesmarker.\r\n--b--\r\n"
	data := zipOf(t, map[string]string{"mail/launch.eml": eml, "report.docx": string(docx)})
	doc, err := NewRegistry(nil).Extract(context.Background(), data, "bundle.zip", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ format, marker string }
	got := map[string]want{}
	var walk func(prefix string, d *extract.Document)
	walk = func(prefix string, d *extract.Document) {
		for _, m := range d.Members {
			got[prefix+m.Path] = want{m.Doc.Format, m.Doc.Text}
			walk(prefix+m.Path+"//", m.Doc)
		}
	}
	walk("", doc)
	for path, w := range map[string]want{
		"mail/launch.eml":            {Email, "regbodymarker"},
		"mail/launch.eml//notes.txt": {Text, "regnotesmarker"},
		"report.docx":                {DOCX, "docxfootnotemarker"},
	} {
		if g, ok := got[path]; !ok || g.format != w.format || !strings.Contains(g.marker, w.marker) {
			t.Errorf("member %s: %v %q, want %s with %s", path, ok, extract.Truncate(g.marker, 200), w.format, w.marker)
		}
	}
	if len(got) != 3 {
		t.Errorf("members %v, want 3", got)
	}
	for _, marker := range []string{"regbodymarker", "regnotesmarker", "docxfootnotemarker"} {
		if strings.Contains(doc.Text, marker) {
			t.Errorf("%s is in the archive's text", marker)
		}
	}
	if strings.Contains(got["mail/launch.eml"].marker, "regnotesmarker") {
		t.Error("the attachment's text is in the message's")
	}
}
