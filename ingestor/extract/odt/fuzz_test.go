package odt

import (
	"archive/zip"
	"context"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// FuzzExtract: no input makes the extractor panic, hang or fail with an
// error callers cannot classify, and every document it returns keeps the
// invariants. Seeds are the real files and stored (uncompressed) ones,
// so mutations reach the XML.
func FuzzExtract(f *testing.F) {
	f.Add(fixture(f, "report.odt"))
	f.Add(fixture(f, "report.fodt"))
	f.Add(richDoc(f).zipWith(f, zip.Store))
	paged := newDoc("")
	paged["content.xml"] = []byte(contentXML(`<style:style style:name="P1" style:family="paragraph"><style:paragraph-properties fo:break-after="page"/></style:style>`,
		`<text:p text:style-name="P1">One</text:p>`+p("<text:soft-page-break/>Two")+`<table:table><table:table-row table:number-rows-repeated="3"><table:table-cell table:number-columns-repeated="2">`+p("c")+`</table:table-cell></table:table-row></table:table>`, true))
	f.Add(paged.zipWith(f, zip.Store))
	f.Add([]byte{})
	f.Add([]byte("PK\x03\x04junk"))
	lim := extract.Limits{Timeout: 10 * time.Second, MaxTextBytes: 64 << 10, MaxUncompressed: 1 << 20, MaxImages: 4, MaxImageBytes: 64 << 10, MaxPages: 8}
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
		doc, err := Extractor{}.Extract(context.Background(), data, "fuzz.odt", lim)
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, data, profileFor(doc))
		if err := extracttest.CheckLimits(doc, lim); err != nil {
			t.Fatal(err)
		}
	})
}
