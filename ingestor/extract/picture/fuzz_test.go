package picture

import (
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// FuzzExtract: any bytes give a valid document or a classified error; a
// TIFF's page chain and directories are the fuzzer's to break.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"fax.tiff", "gray-be.tiff"} {
		f.Add(read(f, name))
	}
	f.Add(encode(f, "png", 8, 8))
	f.Add(encode(f, "tiff", 8, 8))
	f.Add([]byte("MM\x00*\x00\x00\x00\x08\x00\x01\x01\x00\x00\x03\x00\x00\x00\x01\x00\x10\x00\x00\x00\x00\x00\x08"))
	lim := withOCR(fakeOCR{})
	lim.MaxImageBytes = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Extractor{}.Extract(t.Context(), data, "fuzz.tiff", lim)
		if err != nil {
			if doc != nil || !extracttest.Classified(err) {
				t.Fatalf("%v (document %v)", err, doc != nil)
			}
			return
		}
		p := profile
		if isTIFF(data) {
			p = tiffProfile
		}
		if cerr := extracttest.Check(doc, data, p); cerr != nil {
			t.Fatal(cerr)
		}
	})
}
