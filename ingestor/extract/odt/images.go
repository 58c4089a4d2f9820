package odt

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/jpeg" // registers JPEG for image.DecodeConfig
	_ "image/png"  // registers PNG for image.DecodeConfig
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Pictures are draw:image elements in a draw:frame, whose svg:title and
// svg:desc are its alternative text. A PNG or JPEG within the limits is
// kept, with a Figure block right after the block it is in (a paragraph
// is never split by a picture); other pictures (SVG, EMF, over a limit)
// leave their alternative text in the paragraph, as "[image: ...]", as the
// HTML reader does. Pictures in headers and footers (logos) leave only
// their text.

const (
	pngMagic  = "\x89PNG\r\n\x1a\n"
	jpegMagic = "\xff\xd8\xff"
)

// drawing is an open draw:frame.
type drawing struct {
	title, desc string
	images      []imageRef
}

// imageRef is a picture of a frame: a part of the zip, or the bytes a
// flat file holds in office:binary-data.
type imageRef struct {
	href string
	data []byte
}

// alt is the frame's alternative text: its title and description.
func (d *drawing) alt() string {
	title, desc := oneLine(d.title, maxLabelBytes), oneLine(d.desc, maxLabelBytes)
	switch {
	case title == "" || title == desc:
		return desc
	case desc == "":
		return title
	}
	return title + ": " + desc
}

// pending is a picture met inside a block, emitted right after it.
type pending struct {
	img  extract.Image
	desc string
	page int
}

func (w *walker) drawing() *drawing {
	if len(w.drawings) == 0 {
		return nil
	}
	return w.drawings[len(w.drawings)-1]
}

// binaryData reads office:binary-data, a flat file's picture in base64,
// when it is no larger than an image may be; a larger one is skipped
// without being held.
func (w *walker) binaryData() error {
	d := w.drawing()
	if d == nil || len(d.images) == 0 || w.headers > 0 {
		return w.t.skip()
	}
	max := int(min(w.x.lim.MaxImageBytes, 1<<30))/3*4 + 8
	s, err := w.t.text(max + 1)
	if err != nil {
		return err
	}
	if len(s) > max {
		w.x.warn("image skipped: more than %d bytes", w.x.lim.MaxImageBytes)
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s))
	if err != nil {
		w.x.warn("image skipped: its base64 data is broken: %v", err)
		return nil
	}
	d.images[len(d.images)-1].data = data
	return nil
}

// endDrawing closes a draw:frame: its pictures are loaded and queued
// behind the block they are in; what is not kept leaves its text.
func (w *walker) endDrawing() error {
	d := w.drawing()
	if d == nil {
		return nil
	}
	w.drawings = w.drawings[:len(w.drawings)-1]
	alt := d.alt()
	kept := false
	if w.headers == 0 {
		for _, ref := range d.images {
			img, desc, ok, err := w.x.loadImage(ref, alt)
			if err != nil {
				return err
			}
			if ok {
				kept = true
				w.deferred = append(w.deferred, pending{img, desc, w.figurePage()})
			}
		}
	}
	if !kept && alt != "" {
		if err := w.altText(alt); err != nil {
			return err
		}
	}
	if len(w.frames) == 0 && w.inBody {
		return w.flush()
	}
	return nil
}

// figurePage is the page of a picture: that of the block it is in, or
// where the flow is for a picture anchored to the page.
func (w *walker) figurePage() int {
	if len(w.frames) > 0 && w.frames[0].started {
		return w.frames[0].page
	}
	if len(w.frames) == 0 && len(w.drawings) == 0 {
		return w.x.pages.laidOut()
	}
	return w.x.pages.current()
}

// altText puts the text of a picture not kept where the picture was.
func (w *walker) altText(alt string) error {
	s := "[image: " + alt + "]"
	switch f := w.top(); {
	case f == nil && w.inBody:
		return w.x.add(extract.Paragraph, 0, s, w.x.pages.laidOut())
	case f == nil:
	case f.kind == paragraphFrame:
		// Apart from the text around it, as the HTML reader writes it.
		w.content(f)
		f.space = true
		f.appendExact(s)
		f.space = true
		return w.x.countText(len(s))
	case f.kind == tableFrame:
		f.addToCell(s)
	default:
		f.lines = append(f.lines, s)
	}
	return nil
}

// flush adds the pictures queued behind the block just emitted.
func (w *walker) flush() error {
	for _, p := range w.deferred {
		if err := w.x.addImage(p); err != nil {
			return err
		}
	}
	w.deferred = w.deferred[:0]
	return nil
}

// loadImage reads a picture and describes it. ok is false when it is
// skipped: a repeat, over a limit, missing, or not PNG or JPEG. Only a
// timeout or the expansion limit is an error; a bad picture never costs
// the document.
func (x *extraction) loadImage(ref imageRef, alt string) (img extract.Image, desc string, ok bool, err error) {
	if err := x.checkCtx(); err != nil {
		return img, "", false, err
	}
	id := ref.href
	if ref.data != nil {
		id = fmt.Sprintf("binary-data %d", len(x.seen))
	}
	if id == "" || x.seen[id] {
		return img, "", false, nil // a picture repeated is kept once
	}
	x.seen[id] = true
	if x.lim.MaxImages < 0 || x.images >= x.lim.MaxImages {
		x.imagesOverMax++
		return img, "", false, nil
	}
	data := ref.data
	if data == nil {
		if data, ok = x.readImage(ref.href); !ok {
			return img, "", false, nil
		}
	} else if int64(len(data)) > x.lim.MaxImageBytes {
		x.warn("image skipped: %d bytes, over the %d byte limit", len(data), x.lim.MaxImageBytes)
		return img, "", false, nil
	}
	mime, label, ext, ok := imageKind(data)
	if !ok {
		return img, "", false, nil // SVG, EMF, WMF: its text stays
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "png" && format != "jpeg") {
		x.warn("image %s skipped: unreadable %s: %v", id, label, err)
		return img, "", false, nil
	}
	x.images++
	img = extract.Image{
		Name:   fmt.Sprintf("image-%d.%s", x.images, ext),
		MIME:   mime,
		Data:   data,
		Width:  cfg.Width,
		Height: cfg.Height,
	}
	desc = fmt.Sprintf("Image %d (%s, %dx%d) in %s", x.images, label, cfg.Width, cfg.Height, x.name)
	if alt != "" {
		desc += ": " + alt
	}
	return img, desc, true, nil
}

// imageKind identifies PNG and JPEG by content.
func imageKind(head []byte) (mime, label, ext string, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte(pngMagic)):
		return "image/png", "PNG", "png", true
	case bytes.HasPrefix(head, []byte(jpegMagic)):
		return "image/jpeg", "JPEG", "jpg", true
	}
	return "", "", "", false
}

// readImage reads a picture part of the zip within MaxImageBytes. The
// href is relative to the package root ("Pictures/x.png"); one that
// leaves the zip, or an external link, is not read.
func (x *extraction) readImage(href string) ([]byte, bool) {
	if x.zip == nil {
		return nil, false // a flat file's links point outside it
	}
	name, ok := partName(href)
	if !ok {
		return nil, false
	}
	f := x.zip.files[name]
	if f == nil {
		x.warn("image %s skipped: not in the archive", name)
		return nil, false
	}
	if f.UncompressedSize64 > uint64(x.lim.MaxImageBytes) {
		x.warn("image %s skipped: %d bytes, over the %d byte limit", name, f.UncompressedSize64, x.lim.MaxImageBytes)
		return nil, false
	}
	p, err := x.zip.open(f)
	if err != nil {
		x.warn("image %s skipped: %v", name, err)
		return nil, false
	}
	defer p.Close()
	// The magic bytes first, so a large picture of another kind is never
	// decompressed.
	head := make([]byte, len(pngMagic))
	n, err := io.ReadFull(p, head)
	if _, _, _, ok := imageKind(head[:n]); !ok {
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			x.warn("image %s skipped: %v", name, err)
		}
		return nil, false
	}
	rest, err := io.ReadAll(io.LimitReader(p, x.lim.MaxImageBytes-int64(n)+1))
	if err != nil {
		x.warn("image %s skipped: %v", name, err)
		return nil, false
	}
	if int64(n+len(rest)) > x.lim.MaxImageBytes { // its header lied
		x.warn("image %s skipped: over the %d byte limit", name, x.lim.MaxImageBytes)
		return nil, false
	}
	return append(head[:n], rest...), true
}

// partName turns an xlink:href into a zip name: relative to the package
// root, percent-decoded; false for a URL or a path that leaves the zip.
func partName(href string) (string, bool) {
	href = strings.TrimSpace(href)
	if u, err := url.Parse(href); err != nil || u.Scheme != "" || u.Host != "" {
		return "", false
	}
	if u, err := url.PathUnescape(href); err == nil {
		href = u
	}
	p := path.Clean(strings.TrimPrefix(strings.ReplaceAll(href, "\\", "/"), "./"))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}
