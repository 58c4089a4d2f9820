package pictures

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

var (
	// inlineStart is an inline picture's dictionary, from BI to ID.
	inlineStart = regexp.MustCompile(`(?s)\bBI\b(.{0,1000}?)\bID\b`)
	// inlineEntry is one key and value of it.
	inlineEntry = regexp.MustCompile(`(?s)/([A-Za-z]+)\s*(\[[^\]]*\]|<<.*?>>|/[^\s/\[\]<>()]+|[-+.\d]+|true|false)`)
	// inlineEnd is the EI operator after a picture's data.
	inlineEnd = regexp.MustCompile(`\sEI(\s|$)`)
)

// inlinePicture is what an inline picture's dictionary says.
type inlinePicture struct {
	w, h, bits      int
	mask, hasDecode bool
	colourSpace     string // a name (/G, /RGB, a resource) or an array
	filter          string
	decodeParms     bool
}

func parseInline(dict []byte) inlinePicture {
	var p inlinePicture
	for _, m := range inlineEntry.FindAllSubmatch(dict, -1) {
		v := string(m[2])
		n, _ := strconv.Atoi(v)
		switch string(m[1]) {
		case "W", "Width":
			p.w = n
		case "H", "Height":
			p.h = n
		case "BPC", "BitsPerComponent":
			p.bits = n
		case "IM", "ImageMask":
			p.mask = v == "true"
		case "D", "Decode":
			p.hasDecode = true
		case "CS", "ColorSpace":
			p.colourSpace = v
		case "F", "Filter":
			p.filter = v
		case "DP", "DecodeParms":
			p.decodeParms = true
		}
	}
	return p
}

// inline reads the inline picture whose dictionary is dict and whose data
// starts at content[at:] (after ID), and returns where its data ends. A
// picture worth keeping in a form this reader does not decode (a filter
// other than Flate, an indexed or CMYK space given in the content, decode
// parameters) is ErrUnsupported; a small one is passed over.
func (r *reader) inline(page int, dict, content []byte, at int, res types.Dict) (int, error) {
	if at < len(content) && isSpace(content[at]) {
		at++ // one white-space byte ends ID
	}
	p := parseInline(dict)
	keep := worthKeeping(p.w, p.h)
	kind, err := r.inlineKind(p, res)
	if err != nil {
		if keep {
			return 0, fmt.Errorf("inline picture of %dx%d: %w", p.w, p.h, err)
		}
		return findEnd(content, at), nil
	}
	need := kind.rowBytes(max(p.w, 0)) * max(p.h, 0)
	var raw []byte
	end := at + need
	switch p.filter {
	case "":
		if end > len(content) || need <= 0 {
			return findEnd(content, at), nil
		}
		raw = content[at:end]
	default: // Flate: zlib knows where its data ends
		src := bytes.NewReader(content[at:])
		zr, err := zlib.NewReader(src)
		if err != nil {
			return findEnd(content, at), nil
		}
		raw = make([]byte, need)
		if _, err := io.ReadFull(zr, raw); err != nil {
			return findEnd(content, at), nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(zr, 1<<20))
		end = len(content) - src.Len()
	}
	if !keep || r.full() {
		return end, nil
	}
	pic, err := r.encode(kind, raw, p.w, p.h)
	if err != nil {
		return 0, err
	}
	if pic != nil {
		pic.Page = page
		r.out = append(r.out, *pic)
	}
	return end, nil
}

// inlineKind is the pixel layout of an inline picture this reader decodes.
func (r *reader) inlineKind(p inlinePicture, res types.Dict) (rasterKind, error) {
	if p.decodeParms || (p.filter != "" && p.filter != "/Fl" && p.filter != "/FlateDecode") {
		return rasterKind{}, fmt.Errorf("%w: filter %s", ErrUnsupported, p.filter)
	}
	if p.mask {
		return r.raster(true, p.hasDecode, nil, 1)
	}
	var cs types.Object
	switch name := p.colourSpace; {
	case len(name) > 1 && name[0] == '/':
		cs = types.Name(name[1:])
		if spaces, _ := r.x.DereferenceDict(res["ColorSpace"]); spaces != nil {
			if named, ok := spaces[name[1:]]; ok {
				cs = named
			}
		}
	default:
		return rasterKind{}, fmt.Errorf("%w: colour space %q", ErrUnsupported, name)
	}
	return r.raster(false, p.hasDecode, cs, p.bits)
}

// findEnd is where the data of an inline picture that is not read ends.
func findEnd(content []byte, at int) int {
	if loc := inlineEnd.FindIndex(content[at:]); loc != nil {
		return at + loc[0]
	}
	return len(content)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0
}
