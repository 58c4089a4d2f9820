package htmltext

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// TestReadabilityPages: on pages from Readability's test set the extractor
// keeps the article's words (recall) and little else (precision), where the
// landmark rule alone keeps the sidebars, share bars and comments too.
func TestReadabilityPages(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "readability", "*", "source.html"))
	if len(dirs) < 5 {
		t.Fatalf("want the 5 test pages in testdata/readability, found %d", len(dirs))
	}
	var gained float64
	for _, src := range dirs {
		dir := filepath.Dir(src)
		read := func(name string, landmarks bool) map[string]int {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			landmarksOnly = landmarks
			defer func() { landmarksOnly = false }()
			doc, err := Extractor{}.Extract(context.Background(), data, name, extract.DefaultLimits())
			if err != nil {
				t.Fatalf("%s/%s: %v", dir, name, err)
			}
			return words(doc.Text)
		}
		want := read("expected.html", true)
		shared, got, exp := overlap(read("source.html", false), want)
		recall, precision := float64(shared)/float64(exp), float64(shared)/float64(got)
		lshared, lgot, _ := overlap(read("source.html", true), want)
		landmarkPrecision := float64(lshared) / float64(lgot)
		t.Logf("%-20s recall %.3f precision %.3f (landmarks alone: precision %.3f)", filepath.Base(dir), recall, precision, landmarkPrecision)
		if recall < 0.95 || precision < 0.9 {
			t.Errorf("%s: recall %.3f, precision %.3f; want at least 0.95 and 0.9", dir, recall, precision)
		}
		gained += precision - landmarkPrecision
	}
	if gained <= 0 {
		t.Errorf("Readability gained no precision over the landmark rule on these pages")
	}
}
