package slides

import (
	"archive/zip"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// xmlBytes is the uncompressed size of the XML parts of a zip.
func xmlBytes(tb testing.TB, data []byte) int64 {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".xml") || strings.HasSuffix(f.Name, ".rels") {
			n += int64(f.UncompressedSize64)
		}
	}
	return n
}

// BenchmarkExtract reports MB/s of uncompressed XML: decks of 300 slides
// of text and tables, and the LibreOffice decks.
func BenchmarkExtract(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"big.pptx", bigPPTX(b, 300)},
		{"big.odp", bigODP(b, 300)},
		{"deck.pptx", readFile(b, "deck.pptx")},
		{"deck.odp", readFile(b, "deck.odp")},
	} {
		e, _ := extractorFor(c.name)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(xmlBytes(b, c.data))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Extract(context.Background(), c.data, c.name, extract.DefaultLimits()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
