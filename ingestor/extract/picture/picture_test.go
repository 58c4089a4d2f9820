package picture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"testing"

	"golang.org/x/image/tiff"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// profile is what every picture document promises: a Figure block for the
// picture, then paragraphs read by OCR.
var profile = extracttest.Profile{
	Format:        "image",
	Kinds:         []extract.Kind{extract.Figure, extract.Paragraph},
	Images:        true,
	CleanText:     true,
	CleanTitle:    true,
	TrimmedBlocks: true,
}

// tiffProfile: a TIFF's pages are the document's pages.
var tiffProfile = func() extracttest.Profile { p := profile; p.Pages = true; return p }()

func encode(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: 200, G: uint8(x), A: 255})
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "tiff":
		err = tiff.Encode(&buf, img, &tiff.Options{Compression: tiff.Deflate})
	default:
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func read(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fakeOCR reads a picture's header and says what it saw, in two
// paragraphs, so tests can tell which picture OCR was handed.
type fakeOCR struct{}

func (fakeOCR) Recognize(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", extract.ErrCorrupt, err)
	}
	return []extract.OCRBlock{
		{Text: fmt.Sprintf("Read from a %s picture of %dx%d pixels.", format, cfg.Width, cfg.Height), Confidence: 91.5},
		{Text: "A second paragraph.", Confidence: 42},
	}, nil
}

func withOCR(o extract.OCR) extract.Limits {
	lim := extract.DefaultLimits()
	lim.OCR = o
	return lim
}

func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name string
		lim  extract.Limits
	}{{"OCR off", extract.DefaultLimits()}, {"OCR on", withOCR(fakeOCR{})}} {
		t.Run(c.name, func(t *testing.T) {
			known := map[string]string{"MaxImages": "an image file is one image"}
			if c.lim.OCR != nil {
				known["zero limits"] = "zero Limits have no OCR: the text in the picture is not read"
			}
			extracttest.RunConformance(t, extracttest.Harness{
				Extractor: Extractor{},
				Profile:   profile,
				Limits:    c.lim,
				Samples: []extracttest.Sample{
					{Name: "diagram.png", Data: encode(t, "png", 40, 30)},
					{Name: "photos/holiday.jpg", Data: encode(t, "jpeg", 64, 48)},
					{Name: "scan.png", Data: read(t, "scan.png")},
				},
				Hostile: []extracttest.Sample{
					{Name: "gif.png", Data: []byte("GIF89a\x01\x00\x01\x00"), Want: extract.ErrUnsupported},
					{Name: "header-only.png", Data: []byte("\x89PNG\r\n\x1a\n"), Want: extract.ErrCorrupt},
					// A header claiming 2^31-1 pixels square: only the header is read.
					{Name: "huge.png", Data: append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x7f\xff\xff\xff\x7f\xff\xff\xff\x08\x02\x00\x00\x00"), make([]byte, 64)...)},
				},
				Known: known,
			})
		})
	}
}

func TestDescription(t *testing.T) {
	data := encode(t, "png", 40, 30)
	doc, err := Extractor{}.Extract(t.Context(), data, "docs/diagram.png", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	if doc.Text != "Image diagram.png (PNG, 40x30)" || doc.Title != "diagram.png" || len(doc.Images) != 1 || doc.Images[0].Name != "diagram.png" {
		t.Fatalf("document %q, title %q, images %+v", doc.Text, doc.Title, doc.Images)
	}
}

// TestOCROff: without OCR a scan is still its picture, with a warning that
// its text is not read.
func TestOCROff(t *testing.T) {
	data := read(t, "scan.png")
	doc, err := Extractor{}.Extract(t.Context(), data, "scan.png", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	if doc.Text != "Image scan.png (PNG, 1654x827)" || len(doc.Warnings) != 1 || doc.Warnings[0] != "text in pictures is not read: OCR is off" {
		t.Fatalf("document %q, warnings %q", doc.Text, doc.Warnings)
	}
}

// TestOCRParagraphs: the picture, then one paragraph per OCR paragraph,
// with its confidence.
func TestOCRParagraphs(t *testing.T) {
	data := encode(t, "jpeg", 64, 48)
	doc, err := Extractor{}.Extract(t.Context(), data, "photo.jpg", withOCR(fakeOCR{}))
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, data, profile)
	want := []struct {
		kind extract.Kind
		text string
		conf float64
	}{
		{extract.Figure, "Image photo.jpg (JPEG, 64x48)", 0},
		{extract.Paragraph, "Read from a jpeg picture of 64x48 pixels.", 91.5},
		{extract.Paragraph, "A second paragraph.", 42},
	}
	if len(doc.Blocks) != len(want) || len(doc.Warnings) != 0 {
		t.Fatalf("blocks %+v, warnings %q", doc.Blocks, doc.Warnings)
	}
	for i, w := range want {
		b := doc.Blocks[i]
		if b.Kind != w.kind || doc.Text[b.Start:b.End] != w.text || b.Confidence != w.conf || b.Page != 0 {
			t.Errorf("block %d: %v %q %v page %d, want %v %q %v", i, b.Kind, doc.Text[b.Start:b.End], b.Confidence, b.Page, w.kind, w.text, w.conf)
		}
	}
}

// ocrFunc is an extract.OCR made of a function.
type ocrFunc func(ctx context.Context, img []byte) ([]extract.OCRBlock, error)

func (f ocrFunc) Recognize(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
	return f(ctx, img)
}

// TestOCRFails: OCR missing or failing leaves the picture, and says why.
func TestOCRFails(t *testing.T) {
	data := encode(t, "png", 40, 30)
	for err, want := range map[error]string{
		fmt.Errorf("%w: tesseract not found in PATH: install tesseract-ocr", extract.ErrNoOCR): "text in pictures is not read: tesseract not found in PATH: install tesseract-ocr",
		fmt.Errorf("%w: tesseract: exit status 1: Error in pixReadMem", extract.ErrCorrupt):    "text in pictures is not read: OCR failed: corrupt or unreadable file: tesseract: exit status 1: Error in pixReadMem",
	} {
		doc, xerr := Extractor{}.Extract(t.Context(), data, "a.png", withOCR(ocrFunc(func(context.Context, []byte) ([]extract.OCRBlock, error) { return nil, err })))
		if xerr != nil {
			t.Fatal(xerr)
		}
		extracttest.Verify(t, doc, data, profile)
		if len(doc.Blocks) != 1 || doc.Blocks[0].Kind != extract.Figure || len(doc.Warnings) != 1 || doc.Warnings[0] != want {
			t.Errorf("%v: blocks %+v, warnings %q; want the figure and %q", err, doc.Blocks, doc.Warnings, want)
		}
	}
}

// TestOCRTextLimit: text read by OCR counts against MaxTextBytes.
func TestOCRTextLimit(t *testing.T) {
	lim := withOCR(fakeOCR{})
	lim.MaxTextBytes = 60
	doc, err := Extractor{}.Extract(t.Context(), encode(t, "png", 40, 30), "a.png", lim)
	if !errors.Is(err, extract.ErrTooLarge) || doc != nil {
		t.Fatalf("%v, %v; want ErrTooLarge", doc, err)
	}
}

// TestOCRCancelled: the file's time running out during OCR ends the extraction.
func TestOCRCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	hang := ocrFunc(func(ctx context.Context, _ []byte) ([]extract.OCRBlock, error) {
		cancel()
		<-ctx.Done()
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
	})
	doc, err := Extractor{}.Extract(ctx, encode(t, "png", 40, 30), "a.png", withOCR(hang))
	if doc != nil || !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("%v, %v; want ErrTimeout", doc, err)
	}
}
