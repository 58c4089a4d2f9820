package pdf

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pictures"
)

// readPictures runs the picture reader (strata-pdf-pictures) on the PDF,
// under the same limits as poppler's tools. It fails when the file draws a
// picture the reader does not decode; the caller then runs pdfimages.
func (p Poppler) readPictures(ctx context.Context, pdf []byte, pages int, lim extract.Limits) ([]extract.Image, error) {
	maxOut := min(int64(lim.MaxImages)*lim.MaxImageBytes, 512<<20) + 64<<10
	out, err := p.run(ctx, lim, int(maxOut), pdf, p.PictureReader,
		"-max-pages", strconv.Itoa(max(pages, 1)),
		"-max-pictures", strconv.Itoa(lim.MaxImages),
		"-max-image-bytes", strconv.FormatInt(lim.MaxImageBytes, 10))
	if err != nil {
		return nil, err
	}
	pics, err := pictures.ReadFrom(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	imgs := make([]extract.Image, 0, len(pics))
	for _, pic := range pics[:min(len(pics), lim.MaxImages)] {
		imgs = append(imgs, extract.Image{
			Name: fmt.Sprintf("page-%d-image-%d.%s", pic.Page, len(imgs)+1, strings.TrimPrefix(pic.MIME, "image/")),
			MIME: pic.MIME, Data: pic.Data, Width: pic.Width, Height: pic.Height, Page: pic.Page,
		})
	}
	return imgs, nil
}
