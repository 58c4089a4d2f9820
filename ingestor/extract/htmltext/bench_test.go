package htmltext

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

// readabilityPages are Mozilla Readability's test pages (source.html and the
// expected.html that Readability.js extracts from it), shipped in the
// module's zip: STRATA_READABILITY_PAGES, or found in the module cache.
func readabilityPages(b *testing.B) []string {
	dir := os.Getenv("STRATA_READABILITY_PAGES")
	if dir == "" {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "codeberg.org/readeck/go-readability/v2").Output()
		if err != nil {
			b.Fatalf("locate go-readability's test pages (set STRATA_READABILITY_PAGES): %v", err)
		}
		dir = filepath.Join(strings.TrimSpace(string(out)), "test-pages")
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*", "expected.html"))
	if len(pages) == 0 {
		b.Fatalf("no test pages in %s", dir)
	}
	for i, p := range pages {
		pages[i] = filepath.Dir(p)
	}
	return pages
}

// words are the lowercased words of s, counted.
func words(s string) map[string]int {
	m := map[string]int{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		m[strings.ToLower(w)]++
	}
	return m
}

// overlap is how many words a and b share, counted.
func overlap(a, b map[string]int) (shared, na, nb int) {
	for w, n := range a {
		shared += min(n, b[w])
		na += n
	}
	for _, n := range b {
		nb += n
	}
	return shared, na, nb
}

// BenchmarkMainContent measures, word for word on every test page, how much
// of the article Readability.js extracts a content rule keeps (recall) and
// how much of what it keeps is that article (precision), for the landmark
// rule alone and with Readability; both averaged over pages.
func BenchmarkMainContent(b *testing.B) {
	pages := readabilityPages(b)
	// The expected articles' words, read with the landmark rule (an article
	// fragment is all content), once, outside the timed loops.
	expected := make([]map[string]int, len(pages))
	sources := make([][]byte, len(pages))
	landmarksOnly = true
	for i, dir := range pages {
		want, err := os.ReadFile(filepath.Join(dir, "expected.html"))
		if err != nil {
			b.Fatal(err)
		}
		doc, err := Extractor{}.Extract(context.Background(), want, dir, extract.DefaultLimits())
		if err != nil {
			b.Fatalf("%s expected: %v", dir, err)
		}
		expected[i] = words(doc.Text)
		if sources[i], err = os.ReadFile(filepath.Join(dir, "source.html")); err != nil {
			b.Fatal(err)
		}
	}
	landmarksOnly = false
	for _, rule := range []struct {
		name      string
		landmarks bool
	}{{"landmarks", true}, {"readability", false}} {
		b.Run(rule.name, func(b *testing.B) {
			landmarksOnly = rule.landmarks
			defer func() { landmarksOnly = false }()
			var recall, precision float64
			var bytes int64
			for b.Loop() {
				recall, precision, bytes = 0, 0, 0
				for i, dir := range pages {
					bytes += int64(len(sources[i]))
					doc, err := Extractor{}.Extract(context.Background(), sources[i], dir, extract.DefaultLimits())
					if err != nil {
						b.Fatalf("%s: %v", dir, err)
					}
					shared, got, exp := overlap(words(doc.Text), expected[i])
					if exp > 0 {
						recall += float64(shared) / float64(exp)
					}
					if got > 0 {
						precision += float64(shared) / float64(got)
					}
				}
			}
			n := float64(len(pages))
			b.SetBytes(bytes) // one pass over every page
			b.ReportMetric(recall/n, "recall")
			b.ReportMetric(precision/n, "precision")
			b.ReportMetric(float64(len(pages)), "pages")
		})
	}
}
