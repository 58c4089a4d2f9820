package pdf

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

func imageObj(id int, dict string) string {
	return fmt.Sprintf("%d 0 obj\n<< /Type /XObject /Subtype /Image %s /Length 3 >>\nstream\nabc\nendstream\nendobj\n", id, dict)
}

func TestHasPictures(t *testing.T) {
	for _, c := range []struct {
		name string
		pdf  string
		want bool
	}{
		{"no image", "%PDF-1.4\n1 0 obj\n<< /Type /Page >>\nendobj\n", false},
		{"picture", "%PDF-1.4\n" + imageObj(5, "/Width 640 /Height 480 /BitsPerComponent 8"), true},
		{"no space after Subtype", "%PDF-1.4\n5 0 obj<</Subtype/Image/Width 64/Height 64>>stream\nx\nendstream endobj", true},
		{"icon", "%PDF-1.4\n" + imageObj(5, "/Width 16 /Height 16"), false},
		{"thin rule", "%PDF-1.4\n" + imageObj(5, "/Width 2000 /Height 2"), false},
		{"giant", "%PDF-1.4\n" + imageObj(5, "/Width 34862 /Height 4332"), false},
		{"scanned page as a stencil mask", "%PDF-1.4\n" + imageObj(5, "/Width 2480 /Height 3508 /ImageMask true /BitsPerComponent 1"), true},
		{"a tiny image showing its soft mask", "%PDF-1.4\n" + imageObj(5, "/Width 2 /Height 2 /SMask 6 0 R") + imageObj(6, "/Width 640 /Height 480"), true},
		{"a tiny image with a giant mask", "%PDF-1.4\n" + imageObj(5, "/Width 2 /Height 2 /SMask 6 0 R") + imageObj(6, "/Width 34862 /Height 4332"), false},
		{"indirect size", "%PDF-1.4\n" + imageObj(5, "/Width 9 0 R /Height 480"), true},
	} {
		if got := HasPictures([]byte(c.pdf)); got != c.want {
			t.Errorf("%s: HasPictures = %v, want %v", c.name, got, c.want)
		}
	}
	withImage := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"a"}}, {Lines: []string{"b"}, Image: true}}, nil)
	without := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"a"}}}, nil)
	if !HasPictures(withImage) || HasPictures(without) {
		t.Fatalf("generated PDFs: with image %v, without %v", HasPictures(withImage), HasPictures(without))
	}
}

// TestHasPicturesOnTheHostileCorpus: the paper with figures has pictures;
// the file whose giant soft mask (151 megapixels) made pdfimages take
// seconds has none worth keeping.
func TestHasPicturesOnTheHostileCorpus(t *testing.T) {
	for name, want := range map[string]bool{"tracemonkey.pdf": true, "issue16263.pdf": false} {
		data, err := os.ReadFile(filepath.Join("testdata", "hostile", name))
		if err != nil {
			t.Fatal(err)
		}
		if got := HasPictures(data); got != want {
			t.Errorf("%s: HasPictures = %v, want %v", name, got, want)
		}
	}
}

// FuzzHasPictures: any bytes, no panic.
func FuzzHasPictures(f *testing.F) {
	f.Add([]byte("%PDF-1.4\n" + imageObj(5, "/Width 640 /Height 480 /SMask 6 0 R")))
	f.Add([]byte("/Subtype/Image/Width 99999999999999999999/Height 1"))
	f.Add([]byte("obj/Subtype /Image"))
	f.Fuzz(func(t *testing.T, data []byte) { HasPictures(data) })
}

func TestDecodePNM(t *testing.T) {
	rgb := append([]byte("P6\n# pdfimages\n2 1\n255\n"), 200, 30, 30, 0, 0, 255)
	img, err := decodePNM(rgb)
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, _ := img.At(0, 0).RGBA(); r>>8 != 200 || g>>8 != 30 || b>>8 != 30 {
		t.Fatalf("P6 pixel 0: %d %d %d", r>>8, g>>8, b>>8)
	}
	if _, _, b, _ := img.At(1, 0).RGBA(); b>>8 != 255 {
		t.Fatal("P6 pixel 1")
	}
	gray, err := decodePNM(append([]byte("P5 3 1 255 "), 0, 128, 255))
	if err != nil || gray.At(1, 0).(color.Gray).Y != 128 {
		t.Fatalf("P5: %v %v", err, gray)
	}
	// P4: 10 pixels wide, two bytes a row; 1 is black.
	bits, err := decodePNM(append([]byte("P4\n10 1\n"), 0b10000000, 0b01000000))
	if err != nil || bits.At(0, 0).(color.Gray).Y != 0 || bits.At(1, 0).(color.Gray).Y != 255 || bits.At(9, 0).(color.Gray).Y != 0 {
		t.Fatalf("P4: %v", err)
	}
	for name, bad := range map[string][]byte{
		"short raster": []byte("P6 2 2 255\n\x00\x00\x00"),
		"16-bit":       []byte("P5 1 1 65535\n\x00\x00"),
		"ascii":        []byte("P3 1 1 255\n0 0 0"),
		"no size":      []byte("P6\n"),
		"huge":         []byte("P5 99999999 99999999 255\n"),
		"negative-ish": []byte("P5 -1 1 255\n\x00"),
		"empty":        nil,
	} {
		if _, err := decodePNM(bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodePNM: any bytes, no panic, and a decoded image has the size its header says.
func FuzzDecodePNM(f *testing.F) {
	f.Add([]byte("P6\n2 1\n255\n\xc8\x1e\x1e\x00\x00\xff"))
	f.Add([]byte("P4\n10 1\n\x80\x40"))
	f.Add([]byte("P5 3 1 255 \x00\x80\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, w, h, _, err := pnmHeader(data)
		img, derr := decodePNM(data)
		if (err == nil) != (derr == nil) {
			t.Fatalf("header %v, decode %v", err, derr)
		}
		if derr == nil && (img.Bounds().Dx() != w || img.Bounds().Dy() != h) {
			t.Fatalf("%v, header says %dx%d", img.Bounds(), w, h)
		}
	})
}

func TestMayHaveOutline(t *testing.T) {
	with := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"a"}}}, []pdfwrite.OutlineItem{{Title: "A", Page: 1, Level: 1}})
	without := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"a"}}}, nil)
	if !MayHaveOutline(with) || MayHaveOutline(without) {
		t.Fatalf("with outline %v, without %v", MayHaveOutline(with), MayHaveOutline(without))
	}
	// In an object stream the catalog is compressed: the outline may be there.
	if !MayHaveOutline([]byte("%PDF-1.5\n5 0 obj\n<< /Type /ObjStm /N 3 /First 20 /Filter /FlateDecode >>\nstream\nx\nendstream")) {
		t.Fatal("a file with object streams must be asked")
	}
	// Every hostile file whose outline poppler reads is asked.
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.pdf"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if items, err := (Poppler{}).outline(t.Context(), f, testLimits()); err == nil && len(items) > 0 && !MayHaveOutline(data) {
			t.Errorf("%s has an outline of %d items that the scan misses", f, len(items))
		}
	}
}
