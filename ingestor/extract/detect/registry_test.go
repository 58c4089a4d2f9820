package detect

import (
	"context"
	"os"
	"path/filepath"
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
