// Package pdftest holds the PDF pictures the readers' tests read: every
// kind a PDF may hold, and whether a reader keeps it. (The PDFs themselves
// are written by package pdfwrite.)
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// NamedPicture is one kind of picture a PDF may hold.
type NamedPicture struct {
	Name    string
	Picture pdfwrite.Picture
	// Kept: a reader keeps it (at least 32x32 and a format worth reading).
	Kept bool
}

// PictureKinds are the kinds of pictures the picture reader must read as
// pdfimages does, or leave to it: raw and compressed gray and RGB, PNG
// predictors, ICC profiles, stencil masks either way round, soft masks,
// pictures inside forms, JPEG, 8-bit palettes, inline pictures, and kinds
// it does not decode (CMYK, 4-bit), each 40x36 or so with a pattern, so
// that pixels can be compared. Unsupported lists the latter.
func PictureKinds() []NamedPicture {
	const w, h = 40, 36
	gray, rgb, bits := make([]byte, w*h), make([]byte, 3*w*h), make([]byte, (w+7)/8*h)
	for y := range h {
		for x := range w {
			gray[y*w+x] = byte(x*6 + y*3)
			rgb[3*(y*w+x)], rgb[3*(y*w+x)+1], rgb[3*(y*w+x)+2] = byte(x*6), byte(y*7), byte(x*y)
			if (x/4+y/4)%2 == 0 {
				bits[y*((w+7)/8)+x/8] |= 0x80 >> (x % 8)
			}
		}
	}
	size := fmt.Sprintf("/Width %d /Height %d", w, h)
	upRows := make([]byte, 0, (w+1)*h) // PNG "Up" predictor on every row
	for y := range h {
		upRows = append(upRows, 2)
		for x := range w {
			prev := byte(0)
			if y > 0 {
				prev = gray[(y-1)*w+x]
			}
			upRows = append(upRows, gray[y*w+x]-prev)
		}
	}
	smask := &pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", Data: deflate(gray)}
	return []NamedPicture{
		{"rgb-raw", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceRGB /BitsPerComponent 8", Data: rgb}, true},
		{"gray-flate", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", Data: deflate(gray)}, true},
		{"gray-flate-png-predictor", pdfwrite.Picture{Dict: size + fmt.Sprintf(" /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Colors 1 /BitsPerComponent 8 /Columns %d >>", w), Data: deflate(upRows)}, true},
		{"rgb-icc", pdfwrite.Picture{Dict: size + " /BitsPerComponent 8 /Filter /FlateDecode", Data: deflate(rgb), ICC: 3}, true},
		{"gray-1bit", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /FlateDecode", Data: deflate(bits)}, true},
		{"stencil-mask", pdfwrite.Picture{Dict: size + " /ImageMask true /Filter /FlateDecode", Data: deflate(bits)}, true},
		{"stencil-mask-inverted", pdfwrite.Picture{Dict: size + " /ImageMask true /Decode [1 0]", Data: bits}, true},
		{"rgb-with-soft-mask", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode", Data: deflate(rgb), SMask: smask}, true},
		{"gray-in-form", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceGray /BitsPerComponent 8", Data: gray, InForm: true}, true},
		{"jpeg", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", Data: jpegOf(w, h)}, true},
		{"too-small", pdfwrite.Picture{Dict: "/Width 16 /Height 16 /ColorSpace /DeviceGray /BitsPerComponent 8", Data: gray[:256]}, false},
		{"indexed", pdfwrite.Picture{Dict: size + " /ColorSpace [/Indexed /DeviceRGB 1 <ff000000ff00>] /BitsPerComponent 8", Data: bytes.Repeat([]byte{0, 1}, w*h/2)}, true},
		{"indexed-gray-literal-palette", pdfwrite.Picture{Dict: size + " /ColorSpace [/Indexed /DeviceGray 2 (\\000\\177\\377)] /BitsPerComponent 8 /Filter /FlateDecode", Data: deflate(bytes.Repeat([]byte{0, 1, 2}, w*h/3))}, true},
		{"indexed-4bit", pdfwrite.Picture{Dict: size + " /ColorSpace [/Indexed /DeviceRGB 1 <ff000000ff00>] /BitsPerComponent 4", Data: bytes.Repeat([]byte{0x01}, w/2*h)}, true},
		{"inline-gray", pdfwrite.Picture{Dict: fmt.Sprintf("/W %d /H %d /CS /G /BPC 8", w, h), Data: gray, Inline: true}, true},
		{"inline-rgb-flate", pdfwrite.Picture{Dict: fmt.Sprintf("/W %d /H %d /CS /RGB /BPC 8 /F /Fl", w, h), Data: deflate(rgb), Inline: true}, true},
		{"inline-small", pdfwrite.Picture{Dict: "/W 8 /H 8 /CS /G /BPC 8", Data: gray[:64], Inline: true}, false},
		{"inline-cmyk", pdfwrite.Picture{Dict: fmt.Sprintf("/W %d /H %d /CS /CMYK /BPC 8", w, h), Data: bytes.Repeat([]byte{0, 0x80, 0xff, 0}, w*h), Inline: true}, true},
		{"cmyk", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceCMYK /BitsPerComponent 8", Data: bytes.Repeat([]byte{0, 0x80, 0xff, 0}, w*h)}, true},
		{"gray-4bit", pdfwrite.Picture{Dict: size + " /ColorSpace /DeviceGray /BitsPerComponent 4", Data: bytes.Repeat([]byte{0x1f}, w/2*h)}, true},
	}
}

// Unsupported names the PictureKinds the picture reader leaves to pdfimages.
var Unsupported = map[string]bool{"cmyk": true, "gray-4bit": true, "indexed-4bit": true, "inline-cmyk": true}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

func jpegOf(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{byte(x * 6), byte(y * 7), 90, 255})
		}
	}
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	return buf.Bytes()
}
