package pdf

import (
	"bytes"
	"context"
	"errors"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdftest"
)

// sample is a two-page PDF with an outline and an image on page 2.
func sample() []byte {
	return pdftest.Make([]pdftest.Page{
		{Lines: []string{"Introduction", "", "Strata page one explains the zebracorn method."}},
		{Lines: []string{"Details", "", "The second page has the details and a picture."}, Image: true},
	}, []pdftest.OutlineItem{{Title: "Introduction", Page: 1, Level: 1}, {Title: "Details", Page: 2, Level: 2}})
}

func testLimits() extract.Limits {
	lim := extract.DefaultLimits()
	lim.Timeout = 20 * time.Second
	lim.MaxMemoryBytes = 1 << 30
	return lim
}

// runConformance is the suite every PDF extractor must pass.
func runConformance(t *testing.T, ex extract.Extractor, wantHeadings, wantImages bool) {
	ctx := context.Background()
	t.Run("text per page", func(t *testing.T) {
		doc, err := ex.Extract(ctx, sample(), "sample.pdf", testLimits())
		if err != nil {
			t.Fatal(err)
		}
		checkDoc(t, doc)
		if doc.Pages != 2 {
			t.Fatalf("pages %d", doc.Pages)
		}
		found := map[string]int{}
		for _, b := range doc.Blocks {
			txt := doc.Text[b.Start:b.End]
			for _, w := range []string{"zebracorn", "details and a picture"} {
				if strings.Contains(txt, w) {
					found[w] = b.Page
				}
			}
		}
		if found["zebracorn"] != 1 || found["details and a picture"] != 2 {
			t.Fatalf("text by page: %v\n%q", found, doc.Text)
		}
	})
	if wantHeadings {
		t.Run("headings from the outline", func(t *testing.T) {
			doc, err := ex.Extract(ctx, sample(), "sample.pdf", testLimits())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range doc.Blocks {
				if b.Kind == extract.Heading {
					got = append(got, doc.Text[b.Start:b.End]+"/"+string(rune('0'+b.Level)))
				}
			}
			if strings.Join(got, ",") != "Introduction/1,Details/2" {
				t.Fatalf("headings %v", got)
			}
		})
	}
	if wantImages {
		t.Run("embedded images", func(t *testing.T) {
			doc, err := ex.Extract(ctx, sample(), "sample.pdf", testLimits())
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Images) != 1 || doc.Images[0].Page != 2 || doc.Images[0].Width != 64 || len(doc.Images[0].Data) == 0 {
				t.Fatalf("images %+v", doc.Images)
			}
			// The picture itself: 64x64 of RGB (200, 30, 30).
			img, format, err := image.Decode(bytes.NewReader(doc.Images[0].Data))
			if err != nil || doc.Images[0].MIME != "image/"+format || img.Bounds().Dx() != 64 {
				t.Fatalf("image %s does not decode as itself: %v %s %v", doc.Images[0].MIME, err, format, img)
			}
			r, g, b, _ := img.At(10, 10).RGBA()
			if near := func(v uint32, want int) bool { return int(v>>8) >= want-8 && int(v>>8) <= want+8 }; !near(r, 200) || !near(g, 30) || !near(b, 30) {
				t.Fatalf("pixel (%d, %d, %d), want (200, 30, 30)", r>>8, g>>8, b>>8)
			}
			last := doc.Blocks[len(doc.Blocks)-1]
			if last.Kind != extract.Figure || last.Page != 2 || !strings.Contains(doc.Text[last.Start:last.End], "64x64") {
				t.Fatalf("figure block %+v", last)
			}
		})
	}
	t.Run("corrupt", func(t *testing.T) {
		for name, data := range map[string][]byte{
			"truncated": sample()[:300],
			"junk":      append([]byte("%PDF-1.7\n"), []byte(strings.Repeat("garbage ", 100))...),
			"no header": []byte("hello"),
		} {
			if _, err := ex.Extract(ctx, data, name+".pdf", testLimits()); !errors.Is(err, extract.ErrCorrupt) {
				t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := ex.Extract(cctx, sample(), "sample.pdf", testLimits()); !errors.Is(err, extract.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
	})
}

func checkDoc(t *testing.T, doc *extract.Document) {
	t.Helper()
	prev := 0
	for i, b := range doc.Blocks {
		if b.Start < prev || b.End <= b.Start || b.End > len(doc.Text) {
			t.Fatalf("block %d [%d,%d) overlaps or is empty (prev end %d)", i, b.Start, b.End, prev)
		}
		prev = b.End
	}
}

func TestPopplerConformance(t *testing.T) {
	p := Poppler{}
	if err := p.Available(); err != nil {
		t.Fatal(err) // the test task installs poppler-utils; its absence is a set-up error
	}
	runConformance(t, p, true, true)
}

// UniPDF needs a license to extract text. With one configured
// (STRATA_UNIDOC_LICENSE_KEY + STRATA_UNIDOC_CUSTOMER, or STRATA_UNIDOC_METERED_KEY),
// it runs the same suite; without one, the fallback must hand the file to
// poppler and say why.
func TestUniPDF(t *testing.T) {
	l := License{MeteredKey: os.Getenv("STRATA_UNIDOC_METERED_KEY"), OfflineKey: os.Getenv("STRATA_UNIDOC_LICENSE_KEY"), CustomerName: os.Getenv("STRATA_UNIDOC_CUSTOMER")}
	if l.Configured() {
		runConformance(t, Fallback{Primary: NewUniPDF(l), Secondary: Poppler{}}, false, false)
		return
	}
	u := NewUniPDF(l)
	if _, err := u.Extract(context.Background(), sample(), "sample.pdf", testLimits()); err == nil || !strings.Contains(err.Error(), "license") {
		t.Fatalf("unlicensed unipdf must refuse with a license error, got %v", err)
	}
	doc, err := Fallback{Primary: u, Secondary: Poppler{}}.Extract(context.Background(), sample(), "sample.pdf", testLimits())
	if err != nil || !strings.Contains(doc.Text, "zebracorn") || len(doc.Warnings) == 0 || !strings.Contains(strings.Join(doc.Warnings, " "), "license") {
		t.Fatalf("fallback: %v, warnings %v", err, doc)
	}
}

// TestHostilePDFs runs every file of the hostile corpus (testdata/hostile): each must end
// within the limits with text or a clear error, never hang or crash.
func TestHostilePDFs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.pdf"))
	if len(files) != 46 {
		t.Fatalf("hostile PDF corpus: %d files in testdata/hostile, want 46", len(files))
	}
	lim := testLimits()
	lim.Timeout = 8 * time.Second
	lim.MaxMemoryBytes = 768 << 20
	p := Poppler{PictureReader: pictureReader(t)} // as the ingestor runs it
	expect := map[string]error{
		"issue6010_1.pdf": extract.ErrEncrypted, "pr6531_1.pdf": extract.ErrEncrypted, "issue3371.pdf": extract.ErrEncrypted,
	}
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		doc, err := p.Extract(context.Background(), data, name, lim)
		took := time.Since(start)
		if took > lim.Timeout+5*time.Second {
			t.Errorf("%s: took %v, limit %v", name, took, lim.Timeout)
		}
		if want := expect[name]; want != nil && !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", name, err, want)
		}
		if err != nil {
			if !errors.Is(err, extract.ErrCorrupt) && !errors.Is(err, extract.ErrEncrypted) && !errors.Is(err, extract.ErrTimeout) && !errors.Is(err, extract.ErrTooLarge) {
				t.Errorf("%s: unclassified error %v", name, err)
			}
			t.Logf("%-34s %6.2fs error: %v", name, took.Seconds(), err)
			continue
		}
		checkDoc(t, doc)
		t.Logf("%-34s %6.2fs %d pages, %d blocks, %d images, warnings %v", name, took.Seconds(), doc.Pages, len(doc.Blocks), len(doc.Images), doc.Warnings)
	}
}

func TestJunkPagesAreFlagged(t *testing.T) {
	for text, want := range map[string]bool{
		"ÄOHFMQJEJïBÈOOFVOjCMFTLJWFSZVOC VGCPVSHVJHOPOÊPDVLÌNJMFKPVFQSåTEFM ËCSF UBOEJTRVF(òSBOGçUFM":  true,
		"¹ØÓÚºì¾ü×÷Õ½µÄÔ-Ôò ¡-¡-¡-¡-¡-¡ £±£¨Ò»¾ÅÈýÆßÄê°ËÔÂÒ»ÈÕ£© ¶Ô¹ú·ÀÎÊÌâµÄÒâ¼û":                     true,
		"User acceptance of technology has been an important field of study for over two decades now.": false,
		"שלום עולם מה שלום כולם? אני יורד מן החוטים, אני כבר ילד אמיתי. כמו כל הילדים.":                false,
		"Le café était très réputé à Montréal, où l'été dure peu et l'hiver très longtemps.":           false,
		"short": false,
	} {
		if got := Junk(Sanitize(text)); got != want {
			t.Errorf("Junk(%q) = %v, want %v", text, got, want)
		}
	}
}
