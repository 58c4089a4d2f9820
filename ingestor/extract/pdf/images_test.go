package pdf

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// TestPictureOnEveryPage: a picture repeated on every page is kept on each
// page (encoded once), in page order, and no more than lim.MaxImages.
func TestPictureOnEveryPage(t *testing.T) {
	var pages []pdfwrite.Page
	for i := range 5 {
		pages = append(pages, pdfwrite.Page{Lines: []string{fmt.Sprintf("page %d", i+1)}, Image: true})
	}
	data := pdfwrite.Make(pages, nil)
	for _, maxImages := range []int{64, 3} {
		lim := testLimits()
		lim.MaxImages = maxImages
		doc, err := Poppler{}.Extract(context.Background(), data, "logo.pdf", lim)
		if err != nil {
			t.Fatal(err)
		}
		want := min(5, maxImages)
		if len(doc.Images) != want {
			t.Fatalf("max %d: %d images, want %d", maxImages, len(doc.Images), want)
		}
		for i, img := range doc.Images {
			if img.Page != i+1 || img.Name != fmt.Sprintf("page-%d-image-%d.png", i+1, i+1) || img.Width != 64 || img.Height != 64 {
				t.Errorf("max %d: image %d = page %d %q %dx%d", maxImages, i, img.Page, img.Name, img.Width, img.Height)
			}
			if !bytes.Equal(img.Data, doc.Images[0].Data) {
				t.Errorf("max %d: image %d differs from the first", maxImages, i)
			}
		}
	}
}
