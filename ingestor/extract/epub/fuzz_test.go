package epub

import (
	"archive/zip"
	"context"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// FuzzExtract: no input makes the extractor panic, hang or fail with an
// error callers cannot classify, and every document it returns keeps
// the invariants. Seeds are the real books and stored (uncompressed)
// ones, so mutations reach the XML.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"harbour-epub3.epub", "harbour-epub2.epub", "libreoffice-report.epub"} {
		f.Add(fixture(f, name))
	}
	rich := newBook(`<h1>Own</h1><p>One.</p>`, `<p>Two.</p><h1>Inner</h1><table><tr><td>a</td></tr></table>`)
	f.Add(zipBook(f, rich, zip.Store))
	f.Add(zipBook(f, newBook(`<p>x</p>`), zip.Store))
	f.Add([]byte{})
	f.Add([]byte("PK\x03\x04junk"))
	lim := extract.Limits{Timeout: 10 * time.Second, MaxTextBytes: 64 << 10, MaxUncompressed: 1 << 20, MaxPages: 8}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Extraction must stop by itself within lim.Timeout; crash
		// instead of hanging the fuzzer, so the input is saved.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(2 * lim.Timeout):
				panic("Extract ignored its timeout")
			}
		}()
		doc, err := Extractor{}.Extract(context.Background(), data, "fuzz.epub", lim)
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, data, profile)
		if err := extracttest.CheckLimits(doc, lim); err != nil {
			t.Fatal(err)
		}
	})
}
