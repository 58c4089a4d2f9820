package slides

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// pngBytes is a w x h PNG.
func pngBytes(tb testing.TB, w, h int) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// picturesDeck has a logo on two slides, an EMF with alt text, a second
// PNG and an external picture.
func picturesDeck(tb testing.TB) []byte {
	rels := relElem("rId1", "image", "../media/logo.png") + relElem("rId2", "image", "../media/chart.emf") +
		relElem("rId3", "image", "../media/photo.png") +
		`<Relationship Id="rId4" Type="` + relType + `image" Target="http://example.com/a.png" TargetMode="External"/>`
	d := deck{
		slides: []string{
			slideXML("", title("One"), pic("rId1", "the logo", 0, 10), pic("rId2", "an EMF chart", 0, 20), pic("rId3", "a photo", 0, 30)),
			slideXML("", title("Two"), pic("rId1", "the logo", 0, 10), pic("rId4", "linked picture", 0, 20)),
		},
		rels: map[int]string{1: rels, 2: rels},
		extra: map[string]string{
			"ppt/media/logo.png":  string(pngBytes(tb, 8, 8)),
			"ppt/media/chart.emf": "\x01\x00\x00\x00EMF data",
			"ppt/media/photo.png": string(pngBytes(tb, 6, 3)),
		},
	}
	return d.zip(tb)
}

// TestPictures: PNG and JPEG pictures are kept once with their alt text
// in their figure; another format, or a picture over a limit, leaves its
// alt text as a paragraph.
func TestPictures(t *testing.T) {
	doc := mustRun(t, "pictures.pptx", picturesDeck(t))
	want := []string{"1 heading1: One",
		"1 image0: Image 1 (PNG, 8x8) on slide 1 of pictures.pptx: the logo",
		"1 paragraph0: an EMF chart",
		"1 image0: Image 2 (PNG, 6x3) on slide 1 of pictures.pptx: a photo",
		"2 heading1: Two", "2 paragraph0: linked picture"}
	if got := lines(doc); !slices.Equal(got, want) {
		t.Errorf("blocks\n%q\nwant\n%q", got, want)
	}
	if len(doc.Images) != 2 || doc.Images[0].Name != "slide-1-image-1.png" {
		t.Errorf("images %+v", doc.Images)
	}
	if !slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, "chart.emf skipped: not PNG or JPEG") }) {
		t.Errorf("warnings %q", doc.Warnings)
	}

	lim := extract.DefaultLimits()
	lim.MaxImages = 1
	doc, err := run(t, "pictures.pptx", picturesDeck(t), lim)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := find(t, doc, "a photo"); b.Kind != extract.Paragraph || len(doc.Images) != 1 {
		t.Errorf("over MaxImages: the photo is a %s, %d images", b.Kind, len(doc.Images))
	}
	if !slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, "more than 1 images") }) {
		t.Errorf("warnings %q", doc.Warnings)
	}

	lim = extract.DefaultLimits()
	lim.MaxImageBytes = 10
	doc, err = run(t, "pictures.pptx", picturesDeck(t), lim)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := find(t, doc, "a photo"); b.Kind != extract.Paragraph || len(doc.Images) != 0 {
		t.Errorf("over MaxImageBytes: the photo is a %s, %d images", b.Kind, len(doc.Images))
	}
}
