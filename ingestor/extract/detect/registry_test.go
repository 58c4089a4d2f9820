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
