package epub

import (
	"archive/zip"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func TestConformance(t *testing.T) {
	rich := newBook(`<h1>Own Title</h1><p>One.</p>`, `<p>Two.</p><h1>Inner</h1><table><tr><td>a</td><td>b</td></tr></table>`, `<pre>code
  block</pre>`)
	var hostile []extracttest.Sample
	for _, h := range hostileBooks(t) {
		hostile = append(hostile, extracttest.Sample{Name: h.name + ".epub", Data: h.data, Want: h.want})
	}
	big := bigBook(8, 16<<10)
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples: []extracttest.Sample{
			{Name: "harbour-epub3.epub", Data: fixture(t, "harbour-epub3.epub")},
			{Name: "harbour-epub2.epub", Data: fixture(t, "harbour-epub2.epub")},
			{Name: "libreoffice-report.epub", Data: fixture(t, "libreoffice-report.epub")},
			{Name: "rich.epub", Data: rich.zip(t)},
			{Name: "stored.epub", Data: zipBook(t, rich, zip.Store)},
		},
		Big:       &extracttest.Sample{Name: "big.epub", Data: big.zip(t)},
		Container: true,
		Hostile:   hostile,
	})
}
