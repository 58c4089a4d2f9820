package pictures

import (
	"bytes"
	"errors"
	"image"
	_ "image/png"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdftest"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

var testLimits = Limits{MaxPages: 100, MaxPictures: 64, MaxImageBytes: 8 << 20}

// TestKinds: each kind of picture is read with its size and format, kept
// or not as pdftest says, or refused with ErrUnsupported. (Pixels are
// compared with pdfimages' in the pdf package's TestPictureReaderMatchesPdfimages.)
func TestKinds(t *testing.T) {
	for _, k := range pdftest.PictureKinds() {
		t.Run(k.Name, func(t *testing.T) {
			data := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"x"}}, {Lines: []string{k.Name}, Pictures: []pdfwrite.Picture{k.Picture}}}, nil)
			pics, err := Read(data, testLimits)
			if pdftest.Unsupported[k.Name] {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err = %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if k.Kept {
				want = 1
				if k.Picture.SMask != nil {
					want = 2
				}
			}
			if len(pics) != want {
				t.Fatalf("%d pictures, want %d", len(pics), want)
			}
			for _, p := range pics {
				cfg, format, err := image.DecodeConfig(bytes.NewReader(p.Data))
				if err != nil || "image/"+format != p.MIME || cfg.Width != p.Width || cfg.Height != p.Height || p.Page != 2 {
					t.Errorf("picture %s %dx%d page %d: decodes as %s %dx%d (%v)", p.MIME, p.Width, p.Height, p.Page, format, cfg.Width, cfg.Height, err)
				}
			}
		})
	}
}

// TestOnePictureOnManyPages: a picture drawn on every page is kept on each,
// in page order, up to MaxPictures; MaxPages stops the reading.
func TestOnePictureOnManyPages(t *testing.T) {
	var pages []pdfwrite.Page
	for range 6 {
		pages = append(pages, pdfwrite.Page{Lines: []string{"logo"}, Image: true})
	}
	data := pdfwrite.Make(pages, nil)
	lim := testLimits
	lim.MaxPictures = 4
	pics, err := Read(data, lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(pics) != 4 {
		t.Fatalf("%d pictures, want 4", len(pics))
	}
	for i, p := range pics {
		if p.Page != i+1 || !bytes.Equal(p.Data, pics[0].Data) {
			t.Errorf("picture %d: page %d, same bytes as the first: %v", i, p.Page, bytes.Equal(p.Data, pics[0].Data))
		}
	}
	lim = testLimits
	lim.MaxPages = 2
	if pics, _ := Read(data, lim); len(pics) != 2 {
		t.Errorf("MaxPages 2: %d pictures", len(pics))
	}
}

// TestLargeEncodedPicture: a picture over MaxImageBytes is left out, not an error.
func TestLargeEncodedPicture(t *testing.T) {
	k := pdftest.PictureKinds()[0]
	data := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"x"}, Pictures: []pdfwrite.Picture{k.Picture}}}, nil)
	lim := testLimits
	lim.MaxImageBytes = 100
	if pics, err := Read(data, lim); err != nil || len(pics) != 0 {
		t.Fatalf("%d pictures, %v", len(pics), err)
	}
}

// TestNotAPDF: garbage and a truncated file are errors, never a panic.
func TestNotAPDF(t *testing.T) {
	full := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"x"}, Image: true}}, nil)
	for name, data := range map[string][]byte{"empty": nil, "text": []byte("hello"), "truncated": full[:len(full)/2]} {
		if _, err := Read(data, testLimits); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestWire: what the child writes is what the parent reads.
func TestWire(t *testing.T) {
	in := []Picture{{Page: 3, MIME: "image/png", Data: []byte{1, 2, 3}, Width: 40, Height: 36}, {Page: 4, MIME: "image/jpeg", Width: 1, Height: 2}}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadFrom(&buf)
	if err != nil || len(out) != 2 || out[0].Page != 3 || !bytes.Equal(out[0].Data, in[0].Data) || out[1].MIME != "image/jpeg" || out[1].Height != 2 {
		t.Fatalf("%+v, %v", out, err)
	}
	if _, err := ReadFrom(bytes.NewReader([]byte("junk"))); err == nil {
		t.Error("junk read without error")
	}
}

// FuzzRead: any bytes give pictures or an error, never a panic or a hang
// (pdfcpu's panics are recovered; the child process adds the limits).
func FuzzRead(f *testing.F) {
	f.Add(pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"x"}, Image: true}}, nil))
	for _, k := range pdftest.PictureKinds() {
		f.Add(pdfwrite.Make([]pdfwrite.Page{{Lines: []string{k.Name}, Pictures: []pdfwrite.Picture{k.Picture}}}, nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pics, err := Read(data, testLimits)
		if err != nil {
			return
		}
		for _, p := range pics {
			if p.Width < MinSide || p.Height < MinSide || len(p.Data) == 0 || int64(len(p.Data)) > testLimits.MaxImageBytes {
				t.Fatalf("picture kept against the limits: %s %dx%d %d bytes", p.MIME, p.Width, p.Height, len(p.Data))
			}
		}
	})
}
