package pdf

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdftest"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

var (
	readerOnce sync.Once
	readerPath string
	readerErr  error
)

// pictureReader builds cmd/strata-pdf-pictures once per test binary, as
// the ingestor runs it (a child process under limits).
func pictureReader(tb testing.TB) string {
	tb.Helper()
	readerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "strata-pdf-pictures-")
		if err != nil {
			readerErr = err
			return
		}
		readerPath = filepath.Join(dir, "strata-pdf-pictures")
		out, err := exec.Command("go", "build", "-o", readerPath, "github.com/strata-kb/strata/ingestor/cmd/strata-pdf-pictures").CombinedOutput()
		if err != nil {
			readerErr = fmt.Errorf("go build strata-pdf-pictures: %v: %s", err, out)
		}
	})
	if readerErr != nil {
		tb.Fatal(readerErr)
	}
	return readerPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if readerPath != "" {
		_ = os.RemoveAll(filepath.Dir(readerPath))
	}
	os.Exit(code)
}

// TestPictureReaderMatchesPdfimages: on every file of the hostile corpus and
// the generated ones, the picture reader finds the pictures pdfimages does
// (same pages, sizes, formats and pixels), or declines and leaves the file
// to pdfimages; it must read most of them for its speed to count.
func TestPictureReaderMatchesPdfimages(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.pdf"))
	corpus := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus[filepath.Base(f)] = data
	}
	corpus["generated-sample.pdf"] = sample()
	corpus["generated-logo-on-every-page.pdf"] = pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"a"}, Image: true}, {Lines: []string{"b"}, Image: true}}, nil)
	// Each kind of picture in a file of its own: the reader must read the
	// ones it decodes and decline the others.
	mustRead, mustDecline := map[string]bool{}, map[string]bool{}
	var readable []pdfwrite.Picture
	for _, k := range pdftest.PictureKinds() {
		name := "generated-" + k.Name + ".pdf"
		corpus[name] = pdfwrite.Make([]pdfwrite.Page{{Lines: []string{k.Name}, Pictures: []pdfwrite.Picture{k.Picture}}}, nil)
		if pdftest.Unsupported[k.Name] {
			mustDecline[name] = true
		} else {
			mustRead[name] = true
			readable = append(readable, k.Picture)
		}
	}
	half := len(readable) / 2
	corpus["generated-all-kinds.pdf"] = pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"one"}, Pictures: readable[:half]}, {Lines: []string{"two"}, Pictures: readable[half:]}}, nil)
	mustRead["generated-all-kinds.pdf"] = true
	lim := testLimits()
	lim.Timeout = 8 * time.Second
	lim.MaxMemoryBytes = 768 << 20
	reader := Poppler{PictureReader: pictureReader(t)}
	read, withPictures := 0, 0
	for name, data := range corpus {
		want, wantErr := Poppler{}.images(context.Background(), data, lim.MaxPages, lim)
		got, err := reader.readPictures(context.Background(), data, lim.MaxPages, lim)
		if err != nil {
			if mustRead[name] {
				t.Errorf("%s: declined: %v", name, err)
			}
			t.Logf("%-34s declined (%d pictures from pdfimages): %v", name, len(want), err)
			continue
		}
		if mustDecline[name] {
			t.Errorf("%s: read %d pictures, want it left to pdfimages", name, len(got))
		}
		read++
		if len(want) > 0 {
			withPictures++
		}
		if wantErr != nil {
			t.Logf("%s: pdfimages failed (%v), the reader found %d", name, wantErr, len(got))
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d pictures, pdfimages %d", name, len(got), len(want))
			for i := range max(len(got), len(want)) {
				var g, w extract.Image
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				t.Logf("  %d: got %s p%d %dx%d, want %s p%d %dx%d", i, g.Name, g.Page, g.Width, g.Height, w.Name, w.Page, w.Width, w.Height)
			}
			continue
		}
		for i := range got {
			if d := pictureDiff(got[i], want[i]); d != "" {
				t.Errorf("%s: picture %d: %s", name, i, d)
				break
			}
		}
	}
	t.Logf("the reader read %d of %d files (%d with pictures)", read, len(corpus), withPictures)
	if withPictures < 3 {
		t.Errorf("the reader read only %d files with pictures", withPictures)
	}
}

// pictureDiff says how two pictures differ: name, page, size, format, pixels.
func pictureDiff(got, want extract.Image) string {
	if got.Name != want.Name || got.Page != want.Page || got.Width != want.Width || got.Height != want.Height || got.MIME != want.MIME {
		return fmt.Sprintf("%s page %d %dx%d %s, want %s page %d %dx%d %s", got.Name, got.Page, got.Width, got.Height, got.MIME, want.Name, want.Page, want.Width, want.Height, want.MIME)
	}
	if got.MIME == "image/jpeg" {
		if !bytes.Equal(got.Data, want.Data) {
			return "JPEG bytes differ"
		}
		return ""
	}
	g, err1 := decodeRGBA(got.Data)
	w, err2 := decodeRGBA(want.Data)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("decode: %v, %v", err1, err2)
	}
	for i := range g.Pix {
		if diff := int(g.Pix[i]) - int(w.Pix[i]); diff > 2 || diff < -2 {
			x, y := (i/4)%got.Width, (i/4)/got.Width
			return fmt.Sprintf("pixel (%d,%d) %v, want %v", x, y, g.Pix[i&^3:i&^3+4], w.Pix[i&^3:i&^3+4])
		}
	}
	return ""
}

func decodeRGBA(data []byte) (*image.RGBA, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	return rgba, nil
}
