// Package pictures reads the raster pictures a PDF's pages draw from the
// file's structure (parsed with pdfcpu): each page's content is searched
// only for the XObjects it draws and its inline pictures, never laid out.
// pdfimages interprets every page a second time, which costs as much as
// pdftotext itself (docs/bench/ingest.md); this reader costs the file's parse.
//
// It reads what most files hold, with the pixels pdfimages -j writes (a
// test compares them): JPEG as it is, and 8-bit gray, RGB and palettes and
// 1-bit gray and masks behind Flate, LZW or run-length filters, inline
// ones unfiltered or Flate. It returns ErrUnsupported for anything else, so
// that the caller can fall back to pdfimages for that file: JPEG 2000, JBIG2,
// CCITT, CMYK, Lab or DeviceN colour, 2- and 4-bit samples, decode arrays
// and pictures in annotations.
//
// It parses hostile files: run it in a child process under a memory and
// time limit (cmd/strata-pdf-pictures), not in a long-lived server.
package pictures

import (
	"bytes"
	"errors"
	"fmt"
	_ "image/jpeg" // DecodeConfig of embedded JPEGs
	"image/png"
	"regexp"
	"sync"

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

// noConfigDir turns off pdfcpu's configuration directory, once.
var noConfigDir sync.Once

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
	noConfigDir.Do(func() { model.ConfigPath = "disable" }) // pdfcpu would create one in $HOME
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

// draws reads the pictures content draws, with res its resources: the
// XObjects it names with Do and its inline pictures, in their order; forms
// holds the forms being read (a form drawing itself is read once).
func (r *reader) draws(page int, content []byte, res types.Dict, forms map[int]bool) error {
	xobjects, _ := r.x.DereferenceDict(res["XObject"])
	dos := drawn.FindAllSubmatchIndex(content, -1)
	var inlines [][]int
	if bytes.Contains(content, []byte("BI")) {
		inlines = inlineStart.FindAllSubmatchIndex(content, -1)
	}
	skipUntil := 0 // the end of the last inline picture's data
	for len(dos) > 0 || len(inlines) > 0 {
		if r.full() {
			return nil
		}
		if len(inlines) > 0 && (len(dos) == 0 || inlines[0][0] < dos[0][0]) {
			m := inlines[0]
			inlines = inlines[1:]
			if m[0] < skipUntil {
				continue
			}
			end, err := r.inline(page, content[m[2]:m[3]], content, m[1], res)
			if err != nil {
				return err
			}
			skipUntil = end
			continue
		}
		m := dos[0]
		dos = dos[1:]
		if m[0] < skipUntil {
			continue // bytes of an inline picture
		}
		obj, ok := xobjects[string(content[m[2]:m[3]])]
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

// drawn is a Do operator with its operand: the name of an XObject.
var drawn = regexp.MustCompile(`/([^\s/\[\]()<>{}%]+)\s*Do\b`)

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
