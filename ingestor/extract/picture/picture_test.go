package picture

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

var profile = extracttest.Profile{
	Format:        "image",
	Kinds:         []extract.Kind{extract.Figure},
	Images:        true,
	CleanText:     true,
	TrimmedBlocks: true,
}

func encode(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: 200, G: uint8(x), A: 255})
	}
	var buf bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestConformance(t *testing.T) {
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples: []extracttest.Sample{
			{Name: "diagram.png", Data: encode(t, "png", 40, 30)},
			{Name: "photos/holiday.jpg", Data: encode(t, "jpeg", 64, 48)},
		},
		Hostile: []extracttest.Sample{
			{Name: "gif.png", Data: []byte("GIF89a\x01\x00\x01\x00"), Want: extract.ErrUnsupported},
			{Name: "header-only.png", Data: []byte("\x89PNG\r\n\x1a\n"), Want: extract.ErrCorrupt},
			// A header claiming 2^31-1 pixels square: only the header is read.
			{Name: "huge.png", Data: append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x7f\xff\xff\xff\x7f\xff\xff\xff\x08\x02\x00\x00\x00"), make([]byte, 64)...)},
		},
		Known: map[string]string{
			"MaxTextBytes": "an image's text is its one-line description; MaxTextBytes does not apply",
			"MaxImages":    "an image file is one image",
			"cancelled":    "Extract reads only the image header and does not look at the context",
			"deadline":     "Extract reads only the image header and does not look at the context",
		},
	})
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
