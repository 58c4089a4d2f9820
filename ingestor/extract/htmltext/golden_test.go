package htmltext

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGolden extracts a realistic page and compares its structure, one line
// per block plus the title, with testdata/page.golden.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "page.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc := mustExtract(t, data, extract.DefaultLimits())
	got := "title " + doc.Title + "\n" + strings.Join(render(doc), "\n") + "\n"

	golden := filepath.Join("testdata", "page.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("structure differs from %s (run with -update to accept):\n got:\n%s\nwant:\n%s", golden, got, want)
	}
}
