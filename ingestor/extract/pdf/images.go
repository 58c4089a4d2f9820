package pdf

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"image"
	_ "image/jpeg" // register the decoder for embedded JPEGs
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-kb/strata/ingestor/extract"
)

// maxParallelImages bounds the pictures of one file decoded at once (each up
// to maxImagePixels, about 64 MiB decoded).
const maxParallelImages = 4

// pngBuffers lets PNG encodings reuse their compressor: allocating one per
// picture cost more than encoding a small one.
var pngBuffers = &pngPool{}

type pngPool struct{ sync.Pool }

func (p *pngPool) Get() *png.EncoderBuffer {
	b, _ := p.Pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *pngPool) Put(b *png.EncoderBuffer) { p.Pool.Put(b) }

// images extracts embedded raster images page by page: with the picture
// reader when there is one (pictures.go), else, or for a file it declines,
// with pdfimages: JPEGs as they are, the others as PNM (pdfimages -j), which
// Strata encodes as PNG itself for the images it keeps.
func (p Poppler) images(ctx context.Context, pdf []byte, pages int, lim extract.Limits) ([]extract.Image, error) {
	if lim.MaxImages <= 0 {
		return nil, nil
	}
	if p.PictureReader != "" {
		imgs, err := p.readPictures(ctx, pdf, pages, lim)
		if err == nil || ctx.Err() != nil {
			return imgs, err
		}
		// A picture it does not decode, or a file it cannot parse: pdfimages
		// reads the file as before.
	}
	dir, err := os.MkdirTemp(p.ScratchDir, "strata-pdf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	prefix := filepath.Join(dir, "img")
	if _, err := p.run(ctx, lim, 1<<20, pdf, "pdfimages", "-j", "-p", "-q", "-l", strconv.Itoa(max(pages, 1)), stdinPDF, prefix); err != nil {
		return nil, err
	}
	names, err := filepath.Glob(prefix + "-*")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []extract.Image
	// Encoding a picture as PNG costs more than pdfimages spent on it, and
	// pdftotext is done by now: encode a few at a time, in page order, until
	// lim.MaxImages are kept. At most maxParallelImages, so that a large
	// machine does not hold dozens of decoded pictures per file at once.
	seen := &seenImages{byDigest: map[[sha256.Size]byte]*extract.Image{}}
	batch := max(1, min(runtime.GOMAXPROCS(0), maxParallelImages))
	for from := 0; from < len(names) && len(out) < lim.MaxImages && ctx.Err() == nil; from += batch {
		part := names[from:min(from+batch, len(names))]
		imgs := make([]extract.Image, len(part))
		kept := make([]bool, len(part))
		var wg sync.WaitGroup
		for i, n := range part {
			wg.Go(func() { imgs[i], kept[i] = keepImage(n, lim, seen) })
		}
		wg.Wait()
		for i, n := range part {
			if !kept[i] || len(out) >= lim.MaxImages {
				continue
			}
			img := imgs[i]
			// pdfimages -p names files img-<page>-<n>.<ext>.
			parts := strings.Split(strings.TrimPrefix(filepath.Base(n), "img-"), "-")
			img.Page, _ = strconv.Atoi(parts[0])
			img.Name = fmt.Sprintf("page-%d-image-%d.%s", img.Page, len(out)+1, strings.TrimPrefix(img.MIME, "image/"))
			out = append(out, img)
		}
	}
	return out, nil
}

// seenImages remembers the pictures decoded so far by the digest of their
// file: one drawn on every page (a logo, a margin band) is written once per
// page, and is encoded once (TAMReview.pdf: 2 pictures on 23 pages).
type seenImages struct {
	mu       sync.Mutex
	byDigest map[[sha256.Size]byte]*extract.Image // nil: not worth keeping
}

// keepImage reads one file pdfimages wrote, if it is worth keeping: at least
// 32x32 (icons, masks and rules carry nothing), at most maxImagePixels, and
// under lim.MaxImageBytes as JPEG or PNG.
func keepImage(path string, lim extract.Limits, seen *seenImages) (extract.Image, bool) {
	st, err := os.Stat(path)
	if err != nil || st.Size() > 3*maxImagePixels+64 || (strings.HasSuffix(path, ".jpg") && st.Size() > lim.MaxImageBytes) {
		return extract.Image{}, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return extract.Image{}, false
	}
	sum := sha256.Sum256(data)
	seen.mu.Lock()
	known, ok := seen.byDigest[sum]
	seen.mu.Unlock()
	if ok {
		if known == nil {
			return extract.Image{}, false
		}
		return *known, true
	}
	img, keep := decodeImage(path, data, lim)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if keep {
		seen.byDigest[sum] = &img
	} else {
		seen.byDigest[sum] = nil
	}
	return img, keep
}

// decodeImage checks one image file and encodes a PNM one as PNG.
func decodeImage(path string, data []byte, lim extract.Limits) (extract.Image, bool) {
	if strings.HasSuffix(path, ".jpg") {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width < 32 || cfg.Height < 32 {
			return extract.Image{}, false
		}
		return extract.Image{MIME: "image/" + format, Data: data, Width: cfg.Width, Height: cfg.Height}, true
	}
	_, w, h, _, err := pnmHeader(data)
	if err != nil || w < 32 || h < 32 || w*h > maxImagePixels {
		return extract.Image{}, false
	}
	decoded, err := decodePNM(data)
	if err != nil {
		return extract.Image{}, false
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: pngBuffers}).Encode(&buf, decoded); err != nil || int64(buf.Len()) > lim.MaxImageBytes {
		return extract.Image{}, false
	}
	return extract.Image{MIME: "image/png", Data: buf.Bytes(), Width: w, Height: h}, true
}
