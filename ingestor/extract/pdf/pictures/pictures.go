// Package pictures reads the raster pictures a PDF's pages draw from the
// file's structure (parsed with pdfcpu): each page's content is searched
// only for the names of the XObjects it draws, never laid out. pdfimages
// interprets every page a second time, which costs as much as pdftotext
// itself (docs/bench/ingest.md); this reader costs the file's parse.
//
// It reads what most files hold (JPEG as it is, and 8-bit gray or RGB and
// 1-bit masks behind Flate, LZW or run-length filters) and returns
// ErrUnsupported for anything else, so that the caller can fall back to
// pdfimages for that file: JPEG 2000, JBIG2, CCITT, indexed or CMYK colour,
// decode arrays, inline pictures and pictures in annotations.
//
// It parses hostile files: run it in a child process under a memory and
// time limit (cmd/strata-pdf-pictures), not in a long-lived server.
package pictures

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // DecodeConfig of embedded JPEGs
	"image/png"
	"regexp"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// ErrUnsupported: the file draws a picture this reader does not decode.
var ErrUnsupported = errors.New("picture not readable without pdfimages")

// MaxPixels: a larger picture (beyond 4096x4096) is not kept, as with pdfimages.
const MaxPixels = 16 << 20

// MinSide: smaller pictures (icons, rules, masks of a glyph) carry nothing.
const MinSide = 32

// Limits bound what Read reads and returns.
type Limits struct {
	MaxPages      int   // pages read, from the first
	MaxPictures   int   // pictures returned
	MaxImageBytes int64 // a picture's encoded size
}

// Picture is one picture drawn on a page, JPEG as the file holds it or PNG.
type Picture struct {
	Page          int
	MIME          string
	Data          []byte
	Width, Height int
}

// maxFormDepth bounds forms drawn inside forms (and cycles).
const maxFormDepth = 8

// Read returns the pictures the first lim.MaxPages pages draw, in page
// order and, within a page, in the order the page names them: the same
// pictures pdfimages -j -p writes, a picture's soft mask or mask after it.
func Read(data []byte, lim Limits) (pics []Picture, err error) {
	defer func() {
		if r := recover(); r != nil { // pdfcpu panics on some broken files
			pics, err = nil, fmt.Errorf("parse: %v", r)
		}
	}()
	model.ConfigPath = "disable" // no configuration directory to create
	conf := model.NewDefaultConfiguration()
	ctx, err := pdfcpu.Read(bytes.NewReader(data), conf)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if err := ctx.EnsurePageCount(); err != nil {
		return nil, fmt.Errorf("page count: %w", err)
	}
	r := &reader{x: ctx.XRefTable, lim: lim, done: map[int]*Picture{}}
	for page := 1; page <= min(ctx.PageCount, lim.MaxPages) && !r.full(); page++ {
		if err := r.page(page); err != nil {
			return nil, fmt.Errorf("page %d: %w", page, err)
		}
	}
	return r.out, nil
}

type reader struct {
	x    *model.XRefTable
	lim  Limits
	out  []Picture
	done map[int]*Picture // by object number; nil: not kept
	png  pngBuffer        // the PNG compressor's buffers, reused: allocating them cost more than encoding a small picture
}

// pngBuffer keeps one png.EncoderBuffer (Read encodes one picture at a time).
type pngBuffer struct{ b *png.EncoderBuffer }

func (p *pngBuffer) Get() *png.EncoderBuffer  { return p.b }
func (p *pngBuffer) Put(b *png.EncoderBuffer) { p.b = b }

func (r *reader) full() bool { return len(r.out) >= r.lim.MaxPictures }

func (r *reader) page(n int) error {
	d, _, inherited, err := r.x.PageDict(n, false)
	if err != nil {
		return err
	}
	if err := r.checkAnnotations(d); err != nil {
		return err
	}
	res, err := r.x.DereferenceDict(d["Resources"])
	if err != nil {
		return fmt.Errorf("resources: %w", err)
	}
	if res == nil && inherited != nil {
		res = inherited.Resources
	}
	content, err := r.x.PageContent(d, n)
	if err != nil {
		if errors.Is(err, model.ErrNoContent) {
			return nil
		}
		return fmt.Errorf("content: %w", err)
	}
	return r.draws(n, content, res, map[int]bool{})
}

// checkAnnotations: pdfimages also draws the pages' annotations, which may
// show pictures; this reader leaves such files to it.
func (r *reader) checkAnnotations(page types.Dict) error {
	annots, err := r.x.DereferenceArray(page["Annots"])
	if err != nil || len(annots) == 0 {
		return nil
	}
	for _, a := range annots {
		ad, err := r.x.DereferenceDict(a)
		if err != nil || ad == nil {
			continue
		}
		if ap, _ := r.x.DereferenceDict(ad["AP"]); len(ap) > 0 {
			return fmt.Errorf("%w: an annotation with its own appearance", ErrUnsupported)
		}
	}
	return nil
}

var (
	// drawn is a Do operator with its operand: the name of an XObject.
	drawn = regexp.MustCompile(`/([^\s/\[\]()<>{}%]+)\s*Do\b`)
	// inline is an inline picture's dictionary, from BI to ID.
	inline = regexp.MustCompile(`(?s)\bBI\b(.{0,1000}?)\bID\b`)
	// inlineSide reads /W or /Width and /H or /Height in an inline dictionary.
	inlineSide = regexp.MustCompile(`/(W|Width|H|Height)\s+(\d+)`)
)

// draws reads the pictures content draws, with res its resources; forms
// holds the forms being read (a form drawing itself is read once).
func (r *reader) draws(page int, content []byte, res types.Dict, forms map[int]bool) error {
	if err := checkInline(content); err != nil {
		return err
	}
	xobjects, err := r.x.DereferenceDict(res["XObject"])
	if err != nil || len(xobjects) == 0 {
		return nil // nothing to draw: pdfimages finds nothing either
	}
	for _, m := range drawn.FindAllSubmatch(content, -1) {
		if r.full() {
			return nil
		}
		obj, ok := xobjects[string(m[1])]
		if !ok {
			continue
		}
		ref, isRef := obj.(types.IndirectRef)
		sd, _, err := r.x.DereferenceStreamDict(obj)
		if err != nil || sd == nil || !isRef {
			continue
		}
		objNr := ref.ObjectNumber.Value()
		switch subtype(sd) {
		case "Image":
			if err := r.picture(page, objNr, sd); err != nil {
				return err
			}
		case "Form":
			if forms[objNr] || len(forms) >= maxFormDepth {
				continue
			}
			if err := sd.DecodeWithLimit(64 << 20); err != nil {
				return fmt.Errorf("form %d: %w", objNr, err)
			}
			formRes, _ := r.x.DereferenceDict(sd.Dict["Resources"])
			if formRes == nil {
				formRes = res
			}
			forms[objNr] = true
			err := r.draws(page, sd.Content, formRes, forms)
			delete(forms, objNr)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// checkInline refuses content with an inline picture large enough to keep.
func checkInline(content []byte) error {
	if !bytes.Contains(content, []byte("BI")) {
		return nil
	}
	for _, m := range inline.FindAllSubmatch(content, -1) {
		w, h := 0, 0
		for _, kv := range inlineSide.FindAllSubmatch(m[1], -1) {
			v, _ := strconv.Atoi(string(kv[2]))
			if kv[1][0] == 'W' {
				w = v
			} else {
				h = v
			}
		}
		if w >= MinSide && h >= MinSide {
			return fmt.Errorf("%w: an inline picture of %dx%d", ErrUnsupported, w, h)
		}
	}
	return nil
}

func subtype(sd *types.StreamDict) string {
	if st := sd.Subtype(); st != nil {
		return *st
	}
	return ""
}

// picture adds the picture objNr draws and then its soft mask or mask.
func (r *reader) picture(page, objNr int, sd *types.StreamDict) error {
	if err := r.keep(page, objNr, sd); err != nil {
		return err
	}
	for _, key := range []string{"SMask", "Mask"} {
		ref, ok := sd.Dict[key].(types.IndirectRef)
		if !ok || r.full() {
			continue // a Mask array is a colour key, not a picture
		}
		mask, _, err := r.x.DereferenceStreamDict(ref)
		if err != nil || mask == nil {
			continue
		}
		if err := r.keep(page, ref.ObjectNumber.Value(), mask); err != nil {
			return err
		}
	}
	return nil
}

// keep decodes one picture (once per object) and adds it for page when it
// is worth keeping.
func (r *reader) keep(page, objNr int, sd *types.StreamDict) error {
	p, seen := r.done[objNr]
	if !seen {
		var err error
		if p, err = r.decode(sd); err != nil {
			return fmt.Errorf("picture %d: %w", objNr, err)
		}
		r.done[objNr] = p
	}
	if p != nil && !r.full() {
		kept := *p
		kept.Page = page
		r.out = append(r.out, kept)
	}
	return nil
}

// decode returns the picture sd holds, or nil when it is too small, too
// large, or over lim.MaxImageBytes encoded.
func (r *reader) decode(sd *types.StreamDict) (*Picture, error) {
	w, h := r.intEntry(sd.Dict, "Width"), r.intEntry(sd.Dict, "Height")
	if w < MinSide || h < MinSide || w > 1<<16 || h > 1<<16 || w*h > MaxPixels {
		return nil, nil
	}
	var filters []string
	for _, f := range sd.FilterPipeline {
		filters = append(filters, f.Name)
	}
	if len(filters) == 1 && filters[0] == "DCTDecode" {
		if int64(len(sd.Raw)) > r.lim.MaxImageBytes {
			return nil, nil
		}
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(sd.Raw)); err != nil || cfg.Width < MinSide || cfg.Height < MinSide {
			return nil, nil // pdfimages writes it, and Strata drops it as unreadable
		}
		return &Picture{MIME: "image/jpeg", Data: sd.Raw, Width: w, Height: h}, nil
	}
	for _, f := range filters {
		switch f {
		case "FlateDecode", "LZWDecode", "RunLengthDecode", "ASCIIHexDecode", "ASCII85Decode":
		default:
			return nil, fmt.Errorf("%w: filter %s", ErrUnsupported, f)
		}
	}
	kind, err := r.raster(sd)
	if err != nil {
		return nil, err
	}
	rowBytes := (w*kind.bits*kind.comps + 7) / 8
	raw, err := sd.DecodeLengthWithLimit(-1, int64(rowBytes+1)*int64(h)+4096)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(raw) < rowBytes*h {
		return nil, fmt.Errorf("%w: %d bytes of pixels, want %d", ErrUnsupported, len(raw), rowBytes*h)
	}
	img := kind.image(raw, w, h, rowBytes)
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &r.png}).Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if int64(buf.Len()) > r.lim.MaxImageBytes {
		return nil, nil
	}
	return &Picture{MIME: "image/png", Data: buf.Bytes(), Width: w, Height: h}, nil
}

// rasterKind is a layout of pixels this reader turns into an image.
type rasterKind struct {
	comps, bits int
	// blackIsOne: a 1-bit sample of 1 is black (a stencil mask).
	blackIsOne bool
}

func (k rasterKind) image(raw []byte, w, h, rowBytes int) image.Image {
	r := image.Rect(0, 0, w, h)
	switch {
	case k.comps == 3:
		img := image.NewRGBA(r)
		for y := range h {
			row, pix := raw[y*rowBytes:], img.Pix[y*img.Stride:]
			for x := range w {
				pix[4*x], pix[4*x+1], pix[4*x+2], pix[4*x+3] = row[3*x], row[3*x+1], row[3*x+2], 0xff
			}
		}
		return img
	case k.bits == 8:
		img := image.NewGray(r)
		for y := range h {
			copy(img.Pix[y*img.Stride:y*img.Stride+w], raw[y*rowBytes:])
		}
		return img
	default:
		img := image.NewGray(r)
		for y := range h {
			row := raw[y*rowBytes:]
			for x := range w {
				one := row[x/8]&(0x80>>(x%8)) != 0
				if one != k.blackIsOne {
					img.SetGray(x, y, color.Gray{Y: 0xff})
				}
			}
		}
		return img
	}
}

// raster says how sd's pixels are laid out, or that this reader does not read them.
func (r *reader) raster(sd *types.StreamDict) (rasterKind, error) {
	decode, _ := r.x.DereferenceArray(sd.Dict["Decode"])
	if b, _ := r.x.DereferenceBoolean(sd.Dict["ImageMask"], model.V10); b != nil && b.Value() {
		// pdfimages writes a stencil mask's samples as they are, 1 black,
		// whatever its Decode array says (which of them are painted).
		return rasterKind{comps: 1, bits: 1, blackIsOne: true}, nil
	}
	if len(decode) > 0 {
		return rasterKind{}, fmt.Errorf("%w: a decode array", ErrUnsupported)
	}
	comps, err := r.components(sd.Dict["ColorSpace"])
	if err != nil {
		return rasterKind{}, err
	}
	bits := r.intEntry(sd.Dict, "BitsPerComponent")
	switch {
	case bits == 8 && (comps == 1 || comps == 3), bits == 1 && comps == 1:
		return rasterKind{comps: comps, bits: bits}, nil
	}
	return rasterKind{}, fmt.Errorf("%w: %d components of %d bits", ErrUnsupported, comps, bits)
}

// components is the number of colour components of a gray or RGB colour
// space (an ICC profile's alternate is read as the device space it names).
func (r *reader) components(cs types.Object) (int, error) {
	o, err := r.x.Dereference(cs)
	if err != nil {
		return 0, fmt.Errorf("colour space: %w", err)
	}
	switch v := o.(type) {
	case types.Name:
		switch v {
		case "DeviceGray", "G":
			return 1, nil
		case "DeviceRGB", "RGB":
			return 3, nil
		}
	case types.Array:
		if len(v) == 0 {
			break
		}
		name, _ := v[0].(types.Name)
		switch name {
		case "CalGray":
			return 1, nil
		case "CalRGB":
			return 3, nil
		case "ICCBased":
			if len(v) < 2 {
				break
			}
			profile, _, err := r.x.DereferenceStreamDict(v[1])
			if err != nil || profile == nil {
				break
			}
			if n := r.intEntry(profile.Dict, "N"); n == 1 || n == 3 {
				return n, nil
			}
		}
		return 0, fmt.Errorf("%w: colour space %s", ErrUnsupported, name)
	}
	return 0, fmt.Errorf("%w: colour space %v", ErrUnsupported, o)
}

func (r *reader) intEntry(d types.Dict, key string) int {
	i, err := r.x.DereferenceInteger(d[key])
	if err != nil || i == nil {
		return 0
	}
	return i.Value()
}
