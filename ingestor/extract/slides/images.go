package slides

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

// status is what became of a picture.
type status int

const (
	kept     status = iota
	repeated        // kept before: a logo on every slide is kept once
	skipped         // not kept: a limit, a missing part, another format
)

// imageKind identifies PNG and JPEG by content; the extension of a part
// says nothing reliable about it.
func imageKind(head []byte) (mime, label, ext string, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte(pngMagic)):
		return "image/png", "PNG", "png", true
	case bytes.HasPrefix(head, []byte(jpegMagic)):
		return "image/jpeg", "JPEG", "jpg", true
	}
	return "", "", "", false
}

// loadImage reads the picture in part target, on slide page, and
// describes it. A picture kept has its description in desc; one skipped
// the reason. Only a timeout is an error: a bad picture never costs the
// document.
func (x *extraction) loadImage(target string, page int, alt string) (img extract.Image, desc string, st status, err error) {
	if err := x.checkCtx(); err != nil {
		return img, "", skipped, err
	}
	if why, seen := x.seen[target]; seen {
		if why == "" {
			return img, "", repeated, nil
		}
		return img, why, skipped, nil
	}
	if x.lim.MaxImages < 0 || x.images >= x.lim.MaxImages {
		x.imagesOverMax++ // counted in one warning at the end
		return img, "", skipped, nil
	}
	data, mime, label, ext, why := x.readImage(target)
	if why == "" {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || (format != "png" && format != "jpeg") {
			why = fmt.Sprintf("image %s skipped: unreadable %s: %v", target, label, err)
		} else {
			x.images++
			n := x.images
			img = extract.Image{
				Name:   fmt.Sprintf("slide-%d-image-%d.%s", page, n, ext),
				MIME:   mime,
				Data:   data,
				Width:  cfg.Width,
				Height: cfg.Height,
				Page:   page,
			}
			desc = fmt.Sprintf("Image %d (%s, %dx%d) on slide %d of %s", n, label, cfg.Width, cfg.Height, page, x.name)
			if alt != "" {
				desc += ": " + alt
			}
		}
	}
	x.seen[target] = why
	if why != "" {
		return img, why, skipped, nil
	}
	return img, desc, kept, nil
}

// readImage reads an image part within lim.MaxImageBytes and what is left
// of the expansion budget, or says why not. It checks the magic bytes
// first so a large EMF or SVG is never decompressed.
func (x *extraction) readImage(target string) (data []byte, mime, label, ext, why string) {
	f := x.files[target]
	if f == nil {
		return nil, "", "", "", fmt.Sprintf("image %s skipped: not in the archive", target)
	}
	if f.UncompressedSize64 > uint64(x.lim.MaxImageBytes) {
		return nil, "", "", "", fmt.Sprintf("image %s skipped: %d bytes, over the %d byte limit", target, f.UncompressedSize64, x.lim.MaxImageBytes)
	}
	r, done, err := x.openPart(f, x.lim.MaxImageBytes)
	if err != nil {
		return nil, "", "", "", fmt.Sprintf("image %s skipped: %v", target, err)
	}
	defer done()
	head := make([]byte, len(pngMagic))
	n, err := io.ReadFull(r, head)
	var ok bool
	if mime, label, ext, ok = imageKind(head[:n]); !ok {
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, "", "", "", fmt.Sprintf("image %s skipped: not PNG or JPEG", target)
		}
		return nil, "", "", "", fmt.Sprintf("image %s skipped: %v", target, err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, "", "", "", fmt.Sprintf("image %s skipped: %v", target, err)
	}
	return append(head[:n], rest...), mime, label, ext, ""
}
