package docx

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

var update = flag.Bool("update", false, "rewrite testdata/rich.golden and the committed fuzz seeds")

// render prints a document's structure, one line per block. Image data
// is left out: PNG and JPEG encoder output may change between Go
// releases, dimensions do not.
func render(doc *extract.Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "format=%s pages=%d title=%q images=%d\n", doc.Format, doc.Pages, doc.Title, len(doc.Images))
	for _, w := range doc.Warnings {
		fmt.Fprintf(&b, "warning %q\n", w)
	}
	for _, bl := range doc.Blocks {
		fmt.Fprintf(&b, "%s level=%d page=%d %q", bl.Kind, bl.Level, bl.Page, doc.Text[bl.Start:bl.End])
		if bl.Kind == extract.Figure {
			img := doc.Images[bl.Image]
			fmt.Fprintf(&b, " image=%d name=%s mime=%s size=%dx%d page=%d", bl.Image, img.Name, img.MIME, img.Width, img.Height, img.Page)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func richDocx(tb testing.TB) []byte {
	p := parts(tb, richBody())
	p["docProps/core.xml"] = []byte(coreXML("Quarterly Report Q3"))
	return zipParts(tb, p)
}

func TestGoldenRich(t *testing.T) {
	doc, err := run(t, richDocx(t), extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := render(doc)
	path := filepath.Join("testdata", "rich.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("structure differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}
