package picture

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/png"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/tiff"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/ocr"
)

// tiffHostile are broken TIFFs, made from a good one.
func tiffHostile(t *testing.T) []extracttest.Sample {
	good := encode(t, "tiff", 40, 30) // little-endian, first directory after the pixels
	first := int(binary.LittleEndian.Uint32(good[4:]))
	next := first + 2 + 12*int(binary.LittleEndian.Uint16(good[first:]))
	patch := func(at int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[at:], v)
		return b
	}
	return []extracttest.Sample{
		{Name: "header-only.tiff", Data: []byte("II*\x00"), Want: extract.ErrCorrupt},
		{Name: "no-directory.tiff", Data: []byte("MM\x00*\x00\x00\x00\x00"), Want: extract.ErrCorrupt},
		{Name: "directory-outside.tiff", Data: patch(4, 1<<30), Want: extract.ErrCorrupt},
		{Name: "bigtiff.tiff", Data: []byte("II+\x00\x08\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00"), Want: extract.ErrUnsupported},
		// The chain of pages loops back to the first, or leaves the file.
		{Name: "loop.tiff", Data: patch(next, uint32(first))},
		{Name: "chain-outside.tiff", Data: patch(next, 1<<30)},
		// The second page's directory is the first byte of the pixels.
		{Name: "junk-page.tiff", Data: patch(next, 8)},
	}
}

func TestConformanceTIFF(t *testing.T) {
	for _, c := range []struct {
		name string
		lim  extract.Limits
	}{{"OCR off", extract.DefaultLimits()}, {"OCR on", withOCR(fakeOCR{})}} {
		t.Run(c.name, func(t *testing.T) {
			known := map[string]string{}
			if c.lim.OCR != nil {
				known["zero limits"] = "zero Limits have no OCR: the text in the pictures is not read"
			}
			extracttest.RunConformance(t, extracttest.Harness{
				Extractor: Extractor{},
				Profile:   tiffProfile,
				Limits:    c.lim,
				Samples: []extracttest.Sample{
					{Name: "fax.tiff", Data: read(t, "fax.tiff")},
					{Name: "gray-be.tiff", Data: read(t, "gray-be.tiff")},
					{Name: "chart.tif", Data: encode(t, "tiff", 64, 48)},
				},
				Hostile: tiffHostile(t),
				Known:   known,
			})
		})
	}
}

// recordingOCR remembers the pictures it is handed.
type recordingOCR struct {
	mu   sync.Mutex
	imgs [][]byte
}

func (r *recordingOCR) Recognize(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
	r.mu.Lock()
	r.imgs = append(r.imgs, bytes.Clone(img))
	r.mu.Unlock()
	return fakeOCR{}.Recognize(ctx, img)
}

func decodeGray(t *testing.T, data []byte, decode func(r *bytes.Reader) (image.Image, error)) []byte {
	t.Helper()
	img, err := decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	g := image.NewGray(img.Bounds())
	for y := range img.Bounds().Dy() {
		for x := range img.Bounds().Dx() {
			g.Set(x, y, img.At(x, y))
		}
	}
	return g.Pix
}

// TestTIFFPages: each page of a fax is a page of the document: its picture
// as PNG, then its text; OCR is handed each page alone.
func TestTIFFPages(t *testing.T) {
	data := read(t, "fax.tiff")
	rec := &recordingOCR{}
	doc, err := Extractor{}.Extract(t.Context(), data, "in/fax.tiff", withOCR(rec))
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, tiffProfile)
	var got []string
	for _, b := range doc.Blocks {
		got = append(got, strings.Join([]string{b.Kind.String(), string(rune('0' + b.Page)), doc.Text[b.Start:b.End]}, " "))
		if (b.Kind == extract.Paragraph) != (b.Confidence > 0) {
			t.Errorf("block %+v: confidence", b)
		}
	}
	want := []string{
		"image 1 Image fax.tiff page 1 of 2 (TIFF, 1654x827)",
		"paragraph 1 Read from a tiff picture of 1654x827 pixels.",
		"paragraph 1 A second paragraph.",
		"image 2 Image fax.tiff page 2 of 2 (TIFF, 1654x827)",
		"paragraph 2 Read from a tiff picture of 1654x827 pixels.",
		"paragraph 2 A second paragraph.",
	}
	if !slices.Equal(got, want) || doc.Pages != 2 || len(doc.Warnings) != 0 {
		t.Fatalf("blocks\n%s\nwant\n%s\npages %d, warnings %q", strings.Join(got, "\n"), strings.Join(want, "\n"), doc.Pages, doc.Warnings)
	}
	if len(rec.imgs) != 2 || len(doc.Images) != 2 {
		t.Fatalf("%d pictures handed to OCR, %d kept", len(rec.imgs), len(doc.Images))
	}
	for i, img := range rec.imgs {
		if _, pages, err := ifds(img, binary.LittleEndian, 10); err != nil || pages != 1 {
			t.Errorf("OCR was handed %d pages as page %d (%v)", pages, i+1, err)
		}
		// What OCR read is what was kept, and the pages differ.
		kept := doc.Images[i]
		if kept.Name != "fax-page-"+string(rune('1'+i))+".png" || kept.Page != i+1 ||
			!bytes.Equal(decodeGray(t, img, func(r *bytes.Reader) (image.Image, error) { return tiff.Decode(r) }),
				decodeGray(t, kept.Data, func(r *bytes.Reader) (image.Image, error) { return png.Decode(r) })) {
			t.Errorf("page %d: kept %s on page %d is not the picture OCR read", i+1, kept.Name, kept.Page)
		}
	}
	if bytes.Equal(rec.imgs[0], rec.imgs[1]) {
		t.Error("both pages handed to OCR are the same")
	}
}

func TestTIFFLimits(t *testing.T) {
	data := read(t, "fax.tiff")
	for _, c := range []struct {
		name    string
		set     func(*extract.Limits)
		figures int
		texts   int
		warning string
	}{
		{"MaxPages", func(l *extract.Limits) { l.MaxPages = 1 }, 1, 2, "only the first 1 of 2 pages were read"},
		{"MaxOCRPages", func(l *extract.Limits) { l.MaxOCRPages = 1 }, 2, 2, "text in pictures is not read: OCR reads at most 1 per file (page 2)"},
		{"MaxImages", func(l *extract.Limits) { l.MaxImages = 1 }, 1, 4, "a page's picture is not kept: over the limit of 1 pictures (MaxImages) (page 2)"},
		{"MaxImageBytes", func(l *extract.Limits) { l.MaxImageBytes = 100 }, 0, 4, "a page's picture is not kept: its PNG is over 100 bytes (MaxImageBytes) (pages 1, 2)"},
	} {
		lim := withOCR(fakeOCR{})
		c.set(&lim)
		doc, err := Extractor{}.Extract(t.Context(), data, "fax.tiff", lim)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		extracttest.Verify(t, doc, data, tiffProfile)
		figures, texts := 0, 0
		for _, b := range doc.Blocks {
			if b.Kind == extract.Figure {
				figures++
			} else {
				texts++
			}
		}
		if figures != c.figures || texts != c.texts || doc.Pages != 2 || !slices.Equal(doc.Warnings, []string{c.warning}) {
			t.Errorf("%s: %d figures, %d paragraphs, %d pages, warnings %q; want %d, %d, 2, %q", c.name, figures, texts, doc.Pages, doc.Warnings, c.figures, c.texts, c.warning)
		}
	}
}

// TestTIFFHugePage: a page too big to decode is left out, said so.
func TestTIFFHugePage(t *testing.T) {
	data := encode(t, "tiff", 40, 30)
	first := int(binary.LittleEndian.Uint32(data[4:]))
	for i := range int(binary.LittleEndian.Uint16(data[first:])) {
		e := data[first+2+12*i:]
		if tag := binary.LittleEndian.Uint16(e); tag == 256 || tag == 257 { // width, length
			binary.LittleEndian.PutUint32(e[8:], 20000)
		}
	}
	doc, err := Extractor{}.Extract(t.Context(), data, "huge.tiff", withOCR(fakeOCR{}))
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, tiffProfile)
	if len(doc.Blocks) != 0 || !slices.Equal(doc.Warnings, []string{"a page is not read: over 40 megapixels (page 1)"}) {
		t.Fatalf("blocks %+v, warnings %q", doc.Blocks, doc.Warnings)
	}
}

// tesseract is the real OCR reader. The test task installs tesseract-ocr:
// its absence fails the test unless STRATA_NO_OCR=1 says that this machine
// has none on purpose.
func tesseract(t *testing.T) extract.OCR {
	t.Helper()
	tess, err := ocr.New(ocr.Config{})
	if err != nil {
		if os.Getenv("STRATA_NO_OCR") == "1" {
			t.Skipf("STRATA_NO_OCR=1: OCR is not tested on this machine (%v)", err)
		}
		t.Fatalf("%v (set STRATA_NO_OCR=1 to skip the tests that need tesseract)", err)
	}
	return tess
}

// TestTesseractReadsFax: the fax's two pages read by Tesseract (CCITT G4
// pages handed to it one by one), each text on its page.
func TestTesseractReadsFax(t *testing.T) {
	if os.Getenv("STRATA_OCR_TESTS") != "all" {
		t.Skip("go tool task test OCRs two pages, in the end-to-end TestOfficeFilesAndScans; go tool task test-ocr (STRATA_OCR_TESTS=all) reads this one too")
	}
	lim := withOCR(tesseract(t))
	data := read(t, "fax.tiff")
	doc, err := Extractor{}.Extract(t.Context(), data, "fax.tiff", lim)
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, tiffProfile)
	found := map[string]int{}
	for _, b := range doc.Blocks {
		for _, w := range []string{"ledger", "quokka"} {
			if b.Kind == extract.Paragraph && strings.Contains(doc.Text[b.Start:b.End], w) {
				found[w] = b.Page
				if b.Confidence < 50 {
					t.Errorf("%q read with confidence %v", w, b.Confidence)
				}
			}
		}
	}
	if found["ledger"] != 1 || found["quokka"] != 2 || len(doc.Warnings) != 0 {
		t.Fatalf("found %v, warnings %q in\n%s", found, doc.Warnings, doc.Text)
	}
}

func TestSniff(t *testing.T) {
	for data, want := range map[string]bool{"II*\x00": true, "MM\x00*": true, "II+\x00": false, "MM\x00+": false, "\x89PNG\r\n\x1a\n": true, "\xff\xd8\xff": true, "II": false} {
		if Sniff([]byte(data)) != want {
			t.Errorf("Sniff(%q) = %v", data, !want)
		}
	}
	if _, err := (Extractor{}).Extract(t.Context(), []byte("II+\x00"), "big.tiff", extract.DefaultLimits()); !errors.Is(err, extract.ErrUnsupported) {
		t.Errorf("BigTIFF: %v", err)
	}
}
