package slides

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// stored rewrites a zip with every entry stored, so that the fuzzer's
// mutations reach the XML instead of breaking deflate streams.
func stored(tb testing.TB, data []byte) []byte {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := io.Copy(w, r); err != nil {
			tb.Fatal(err)
		}
		r.Close()
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// fuzzLimits are small so the fuzzer finds limit edges quickly.
func fuzzLimits() extract.Limits {
	return extract.Limits{
		Timeout:         10 * time.Second,
		MaxTextBytes:    64 << 10,
		MaxUncompressed: 4 << 20,
		MaxImages:       4,
		MaxImageBytes:   64 << 10,
		MaxPages:        50,
	}
}

// FuzzExtract runs both extractors on every input: seeded with the
// testdata decks (stored), small built decks and broken archives.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"deck.pptx", "deck.odp", "pptxgenjs.pptx"} {
		data := readFile(f, name)
		f.Add(stored(f, data))
		f.Add(data[:len(data)*2/3])
	}
	f.Add(stored(f, picturesDeck(f)))
	f.Add(stored(f, bigPPTX(f, 2)))
	f.Add(stored(f, bigODP(f, 2)))
	f.Add([]byte{})
	f.Add([]byte(oleMagic))
	f.Add([]byte("PK\x03\x04\x14\x00\x00\x00\x08\x00junk"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Extraction must stop by itself within lim.Timeout. A loop that
		// ignores it would hang the fuzzer silently; crash instead, so the
		// input is saved.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(2 * fuzzLimits().Timeout):
				panic("Extract ignored its timeout")
			}
		}()
		for _, e := range []struct {
			x      extract.Extractor
			format string
		}{{PPTX{}, "pptx"}, {ODP{}, "odp"}} {
			doc, err := e.x.Extract(context.Background(), data, "fuzz."+e.format, fuzzLimits())
			if err != nil {
				if !extracttest.Classified(err) || doc != nil {
					t.Fatalf("%s: unclassified error or a document with it: %v", e.format, err)
				}
				continue
			}
			extracttest.Verify(t, doc, data, profileOf(e.format))
			if err := extracttest.CheckLimits(doc, fuzzLimits()); err != nil {
				t.Fatalf("%s: %v", e.format, err)
			}
		}
	})
}
