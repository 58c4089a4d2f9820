package picture

import (
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// BenchmarkExtract reads fax.tiff without OCR: each of its two pages
// decoded (CCITT G4) and kept as PNG. Bytes are the TIFF's, which G4
// compresses 350-fold: pages/s says more.
func BenchmarkExtract(b *testing.B) {
	data := read(b, "fax.tiff")
	lim := extract.DefaultLimits()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := (Extractor{}).Extract(b.Context(), data, "fax.tiff", lim); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "pages/s")
}
