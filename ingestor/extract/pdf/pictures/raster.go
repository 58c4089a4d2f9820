package pictures

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// decode returns the picture sd holds, or nil when it is too small, too
// large, or over lim.MaxImageBytes encoded.
func (r *reader) decode(sd *types.StreamDict) (*Picture, error) {
	w, h := r.intEntry(sd.Dict, "Width"), r.intEntry(sd.Dict, "Height")
	if !worthKeeping(w, h) {
		return nil, nil
	}
	var filters []string
	for _, f := range sd.FilterPipeline {
		filters = append(filters, f.Name)
	}
	if len(filters) == 1 && filters[0] == "DCTDecode" {
		return r.jpeg(sd.Raw, w, h), nil
	}
	for _, f := range filters {
		switch f {
		case "FlateDecode", "LZWDecode", "RunLengthDecode", "ASCIIHexDecode", "ASCII85Decode":
		default:
			return nil, fmt.Errorf("%w: filter %s", ErrUnsupported, f)
		}
	}
	mask, _ := r.x.DereferenceBoolean(sd.Dict["ImageMask"], model.V10)
	decode, _ := r.x.DereferenceArray(sd.Dict["Decode"])
	kind, err := r.raster(mask != nil && mask.Value(), len(decode) > 0, sd.Dict["ColorSpace"], r.intEntry(sd.Dict, "BitsPerComponent"))
	if err != nil {
		return nil, err
	}
	rowBytes := kind.rowBytes(w)
	raw, err := sd.DecodeLengthWithLimit(-1, int64(rowBytes+1)*int64(h)+4096)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return r.encode(kind, raw, w, h)
}

// worthKeeping: at least MinSide on each side and at most MaxPixels.
func worthKeeping(w, h int) bool {
	return w >= MinSide && h >= MinSide && w <= 1<<16 && h <= 1<<16 && w*h <= MaxPixels
}

// jpeg keeps a JPEG as the file holds it, if it is one and fits.
func (r *reader) jpeg(data []byte, w, h int) *Picture {
	if int64(len(data)) > r.lim.MaxImageBytes {
		return nil
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width < MinSide || cfg.Height < MinSide {
		return nil // pdfimages writes it, and Strata drops it as unreadable
	}
	return &Picture{MIME: "image/jpeg", Data: data, Width: w, Height: h}
}

// encode turns w x h pixels laid out as kind into a PNG picture.
func (r *reader) encode(kind rasterKind, raw []byte, w, h int) (*Picture, error) {
	rowBytes := kind.rowBytes(w)
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
	// palette maps an 8-bit index to paletteComps bytes (an Indexed space).
	palette      []byte
	paletteComps int
}

func (k rasterKind) rowBytes(w int) int { return (w*k.bits*k.comps + 7) / 8 }

func (k rasterKind) image(raw []byte, w, h, rowBytes int) image.Image {
	r := image.Rect(0, 0, w, h)
	switch {
	case k.palette != nil && k.paletteComps == 3:
		img := image.NewRGBA(r)
		for y := range h {
			row, pix := raw[y*rowBytes:], img.Pix[y*img.Stride:]
			for x := range w {
				i := min(int(row[x]), len(k.palette)/3-1) * 3
				pix[4*x], pix[4*x+1], pix[4*x+2], pix[4*x+3] = k.palette[i], k.palette[i+1], k.palette[i+2], 0xff
			}
		}
		return img
	case k.palette != nil:
		img := image.NewGray(r)
		for y := range h {
			row, pix := raw[y*rowBytes:], img.Pix[y*img.Stride:]
			for x := range w {
				pix[x] = k.palette[min(int(row[x]), len(k.palette)-1)]
			}
		}
		return img
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

// raster says how a picture's pixels are laid out, or that this reader
// does not read them: a stencil mask, or bits per component in a colour
// space; a decode array other than a mask's is not read.
func (r *reader) raster(mask, hasDecode bool, cs types.Object, bits int) (rasterKind, error) {
	if mask {
		// pdfimages writes a stencil mask's samples as they are, 1 black,
		// whatever its Decode array says (which of them are painted).
		return rasterKind{comps: 1, bits: 1, blackIsOne: true}, nil
	}
	if hasDecode {
		return rasterKind{}, fmt.Errorf("%w: a decode array", ErrUnsupported)
	}
	space, err := r.colourSpace(cs, true)
	if err != nil {
		return rasterKind{}, err
	}
	switch {
	case space.palette != nil && bits == 8:
		return rasterKind{comps: 1, bits: 8, palette: space.palette, paletteComps: space.comps}, nil
	case space.palette == nil && (bits == 8 && (space.comps == 1 || space.comps == 3) || bits == 1 && space.comps == 1):
		return rasterKind{comps: space.comps, bits: bits}, nil
	}
	return rasterKind{}, fmt.Errorf("%w: %d components of %d bits (indexed: %v)", ErrUnsupported, space.comps, bits, space.palette != nil)
}

// colourSpace is a gray or RGB space (comps 1 or 3), or an 8-bit palette
// of such colours.
type colourSpace struct {
	comps   int
	palette []byte // Indexed: comps bytes per index
}

// colourSpace reads cs (an ICC profile's colours are read as the device
// space of as many components); indexed allows an Indexed space.
func (r *reader) colourSpace(cs types.Object, indexed bool) (colourSpace, error) {
	o, err := r.x.Dereference(cs)
	if err != nil {
		return colourSpace{}, fmt.Errorf("colour space: %w", err)
	}
	switch v := o.(type) {
	case types.Name:
		switch v {
		case "DeviceGray", "G", "CalGray":
			return colourSpace{comps: 1}, nil
		case "DeviceRGB", "RGB", "CalRGB":
			return colourSpace{comps: 3}, nil
		}
	case types.Array:
		if len(v) == 0 {
			break
		}
		name, _ := v[0].(types.Name)
		switch name {
		case "CalGray":
			return colourSpace{comps: 1}, nil
		case "CalRGB":
			return colourSpace{comps: 3}, nil
		case "ICCBased":
			if len(v) < 2 {
				break
			}
			profile, _, err := r.x.DereferenceStreamDict(v[1])
			if err != nil || profile == nil {
				break
			}
			if n := r.intEntry(profile.Dict, "N"); n == 1 || n == 3 {
				return colourSpace{comps: n}, nil
			}
		case "Indexed", "I":
			if indexed && len(v) == 4 {
				return r.indexed(v)
			}
		}
		return colourSpace{}, fmt.Errorf("%w: colour space %s", ErrUnsupported, name)
	}
	return colourSpace{}, fmt.Errorf("%w: colour space %v", ErrUnsupported, o)
}

// indexed reads [/Indexed base hival lookup]: the palette of hival+1 colours.
func (r *reader) indexed(v types.Array) (colourSpace, error) {
	base, err := r.colourSpace(v[1], false)
	if err != nil {
		return colourSpace{}, err
	}
	hival := -1
	if i, err := r.x.DereferenceInteger(v[2]); err == nil && i != nil {
		hival = i.Value()
	}
	if hival < 0 || hival > 255 {
		return colourSpace{}, fmt.Errorf("%w: indexed colour space of %d colours", ErrUnsupported, hival+1)
	}
	var lookup []byte
	switch l := v[3].(type) {
	case types.HexLiteral:
		lookup, err = l.Bytes()
	case types.StringLiteral:
		lookup, err = types.Unescape(l.Value())
	case types.IndirectRef:
		var sd *types.StreamDict
		if sd, _, err = r.x.DereferenceStreamDict(l); err == nil && sd != nil {
			lookup, err = sd.DecodeLengthWithLimit(-1, 1<<20)
		} else if err == nil {
			var s types.Object
			if s, err = r.x.Dereference(l); err == nil {
				if str, ok := s.(types.StringLiteral); ok {
					lookup, err = types.Unescape(str.Value())
				} else if hex, ok := s.(types.HexLiteral); ok {
					lookup, err = hex.Bytes()
				}
			}
		}
	}
	if err != nil || len(lookup) < (hival+1)*base.comps {
		return colourSpace{}, fmt.Errorf("%w: palette of %d bytes for %d colours (%v)", ErrUnsupported, len(lookup), hival+1, err)
	}
	return colourSpace{comps: base.comps, palette: lookup[:(hival+1)*base.comps]}, nil
}

func (r *reader) intEntry(d types.Dict, key string) int {
	i, err := r.x.DereferenceInteger(d[key])
	if err != nil || i == nil {
		return 0
	}
	return i.Value()
}
