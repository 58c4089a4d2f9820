package docx

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // registers JPEG for image.DecodeConfig
	_ "image/png"  // registers PNG for image.DecodeConfig
	"io"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	pngMagic  = "\x89PNG\r\n\x1a\n"
	jpegMagic = "\xff\xd8\xff"
)

// imageKind identifies PNG and JPEG by content; the extension of a
// part says nothing reliable about it.
func imageKind(head []byte) (mime, label, ext string, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte(pngMagic)):
		return "image/png", "PNG", "png", true
	case bytes.HasPrefix(head, []byte(jpegMagic)):
		return "image/jpeg", "JPEG", "jpg", true
	}
	return "", "", "", false
}

// loadImage reads the picture in part target and describes it. ok is
// false when it is skipped: a repeat, over a limit, missing, or not a
// PNG/JPEG. Only a timeout is an error; a bad picture never costs the
// document.
func (x *extraction) loadImage(target, alt string) (img extract.Image, desc string, ok bool, err error) {
	if err := x.checkCtx(); err != nil {
		return img, "", false, err
	}
	if x.seen[target] {
		return img, "", false, nil // a logo repeated on every page is kept once
	}
	x.seen[target] = true
	if x.lim.MaxImages < 0 || x.images >= x.lim.MaxImages {
		x.imagesOverMax++
		return img, "", false, nil
	}
	data, mime, label, ext, ok := x.readImage(target)
	if !ok {
		return img, "", false, nil
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "png" && format != "jpeg") {
		x.warn("image %s skipped: unreadable %s: %v", target, label, err)
		return img, "", false, nil
	}
	x.images++
	n := x.images
	img = extract.Image{
		Name:   fmt.Sprintf("image-%d.%s", n, ext),
		MIME:   mime,
		Data:   data,
		Width:  cfg.Width,
		Height: cfg.Height,
	}
	desc = fmt.Sprintf("Image %d (%s, %dx%d) in %s", n, label, cfg.Width, cfg.Height, x.name)
	if alt = oneLine(alt, maxLabelBytes); alt != "" {
		desc += ": " + alt
	}
	return img, desc, true, nil
}

// readImage reads an image part within lim.MaxImageBytes and what is
// left of the expansion budget. It checks the magic bytes first so a
// large EMF or TIFF is never decompressed.
func (x *extraction) readImage(target string) (data []byte, mime, label, ext string, ok bool) {
	f := x.files[target]
	if f == nil {
		x.warn("image %s skipped: not in the archive", target)
		return nil, "", "", "", false
	}
	if f.UncompressedSize64 > uint64(x.lim.MaxImageBytes) {
		x.warn("image %s skipped: %d bytes, over the %d byte limit", target, f.UncompressedSize64, x.lim.MaxImageBytes)
		return nil, "", "", "", false
	}
	if f.UncompressedSize64 > uint64(max(x.imageBudget, 0)) {
		x.warn("image %s skipped: archive expansion limit of %d bytes reached", target, x.lim.MaxUncompressed)
		return nil, "", "", "", false
	}
	rc, cr, err := x.openPart(f, min(x.lim.MaxImageBytes, x.imageBudget))
	if err != nil {
		x.warn("image %s skipped: %v", target, err)
		return nil, "", "", "", false
	}
	defer rc.Close()
	defer func() { x.imageBudget -= cr.n }()

	head := make([]byte, len(pngMagic))
	n, err := io.ReadFull(cr, head)
	if mime, label, ext, ok = imageKind(head[:n]); !ok {
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			x.warn("image %s skipped: not PNG or JPEG", target)
		} else {
			x.warn("image %s skipped: %v", target, err)
		}
		return nil, "", "", "", false
	}
	rest, err := io.ReadAll(cr)
	if err != nil {
		x.warn("image %s skipped: %v", target, err)
		return nil, "", "", "", false
	}
	return append(head[:n], rest...), mime, label, ext, true
}
