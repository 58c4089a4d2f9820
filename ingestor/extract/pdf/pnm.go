package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"strconv"
)

// decodePNM reads the binary PNM files pdfimages writes for every image that
// is not a JPEG (P4 bitmap, P5 gray, P6 RGB, 8 bits): pdfimages' own PNG
// encoding cost it four times its reading of the file, and Go encodes the few
// images Strata keeps faster (png.BestSpeed).
func decodePNM(data []byte) (image.Image, error) {
	kind, w, h, raster, err := pnmHeader(data)
	if err != nil {
		return nil, err
	}
	r := image.Rect(0, 0, w, h)
	switch kind {
	case '6':
		img := image.NewNRGBA(r)
		for i, p := 0, 0; i < w*h; i, p = i+1, p+3 {
			img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = raster[p], raster[p+1], raster[p+2], 0xff
		}
		return img, nil
	case '5':
		img := image.NewGray(r)
		copy(img.Pix, raster)
		return img, nil
	default: // '4': rows of bits, 1 is black
		img := image.NewGray(r)
		stride := (w + 7) / 8
		for y := range h {
			for x := range w {
				if raster[y*stride+x/8]&(0x80>>(x%8)) == 0 {
					img.SetGray(x, y, color.Gray{Y: 0xff})
				}
			}
		}
		return img, nil
	}
}

// pnmHeader parses the header and checks the raster's length.
func pnmHeader(data []byte) (kind byte, w, h int, raster []byte, err error) {
	if len(data) < 2 || data[0] != 'P' || (data[1] != '4' && data[1] != '5' && data[1] != '6') {
		return 0, 0, 0, nil, errors.New("pnm: not a binary P4, P5 or P6 file")
	}
	kind, rest := data[1], data[2:]
	fields := 3
	if kind == '4' {
		fields = 2 // a bitmap has no maximum value
	}
	var vals []int
	for len(vals) < fields {
		rest = skipSpaceAndComments(rest)
		n := 0
		for n < len(rest) && n < 10 && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		v, perr := strconv.Atoi(string(rest[:n]))
		if n == 0 || perr != nil {
			return 0, 0, 0, nil, errors.New("pnm: bad header")
		}
		vals, rest = append(vals, v), rest[n:]
	}
	if len(rest) == 0 || !isSpace(rest[0]) {
		return 0, 0, 0, nil, errors.New("pnm: bad header")
	}
	rest = rest[1:]
	w, h = vals[0], vals[1]
	if w <= 0 || h <= 0 || w > 1<<16 || h > 1<<16 || (fields == 3 && vals[2] != 255) {
		return 0, 0, 0, nil, fmt.Errorf("pnm: unsupported %dx%d image (max value %v)", w, h, vals[2:])
	}
	need := w * h
	switch kind {
	case '6':
		need *= 3
	case '4':
		need = (w + 7) / 8 * h
	}
	if len(rest) < need {
		return 0, 0, 0, nil, fmt.Errorf("pnm: %d raster bytes, want %d", len(rest), need)
	}
	return kind, w, h, rest[:need], nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func skipSpaceAndComments(b []byte) []byte {
	for len(b) > 0 {
		switch {
		case isSpace(b[0]):
			b = b[1:]
		case b[0] == '#':
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				b = b[i+1:]
			} else {
				b = nil
			}
		default:
			return b
		}
	}
	return b
}
