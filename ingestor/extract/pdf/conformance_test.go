package pdf

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdftest"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// sample is a two-page PDF with an outline and an image on page 2.
func sample() []byte {
	return pdfwrite.Make([]pdfwrite.Page{
		{Lines: []string{"Introduction", "", "Strata page one explains the zebracorn method."}},
		{Lines: []string{"Details", "", "The second page has the details and a picture."}, Image: true},
	}, []pdfwrite.OutlineItem{{Title: "Introduction", Page: 1, Level: 1}, {Title: "Details", Page: 2, Level: 2}})
}

func testLimits() extract.Limits {
	lim := extract.DefaultLimits()
	lim.Timeout = 20 * time.Second
	lim.MaxMemoryBytes = 1 << 30
	return lim
}

// profile is what every PDF document promises: pages, images with their
// figures, clean text and title, trimmed paragraphs, the document
// information under the Prop* keys, cleaned.
var profile = extracttest.Profile{
	Format:        "pdf",
	Pages:         true,
	Images:        true,
	CleanText:     true,
	CleanTitle:    true,
	TrimmedBlocks: true,
	MetadataKeys: []string{extract.PropTitle, extract.PropAuthor, extract.PropSubject, extract.PropKeywords,
		extract.PropCreated, extract.PropModified},
	CleanMetadata: true,
}

// harness describes a PDF extractor to the shared suite (extracttest):
// generated PDFs as samples, the hostile corpus (testdata/hostile) and
// broken files as hostile input.
func harness(t *testing.T, ex extract.Extractor) extracttest.Harness {
	var pictures []pdfwrite.Picture
	for _, p := range pdftest.PictureKinds()[:3] {
		pictures = append(pictures, p.Picture)
	}
	var bigPages []pdfwrite.Page
	for p := range 40 {
		var lines []string
		for l := range 36 {
			lines = append(lines, fmt.Sprintf("Page %d line %d of a long report, with words to index.", p+1, l+1))
			if l%9 == 8 {
				lines = append(lines, "")
			}
		}
		bigPages = append(bigPages, pdfwrite.Page{Lines: lines})
	}
	lim := testLimits()
	lim.MaxMemoryBytes = 768 << 20
	// Pages without a text layer are read by a stand-in for OCR. Samples
	// have a budget no loaded machine reaches (at 3 s, four concurrent
	// extractions of mixed.pdf beside a CI run lost its scanned page's
	// text); the suite gives hostile files, drawn by pdftoppm for it, a
	// short one. (Without OCR, a file with no text at all fails with
	// ErrNoOCR, which the suite does not count among the classified errors:
	// TestHostileWithoutOCR.)
	lim.OCR = &fakeOCR{}
	lim.OCRTimeout = time.Minute
	h := extracttest.Harness{
		Extractor: ex,
		Profile:   profile,
		Limits:    lim,
		Samples: []extracttest.Sample{
			{Name: "sample.pdf", Data: sample()},
			{Name: "info.pdf", Data: pdfwrite.MakeWithInfo(map[string]string{"Title": "Annual Report", "Author": "Ann Lee",
				"Keywords": "finance; 2024", "CreationDate": "D:20240131120000+01'00'"},
				[]pdfwrite.Page{{Lines: []string{"Summary", "", "Revenue grew."}}}, nil)},
			{Name: "pictures.pdf", Data: pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"Figures"}, Pictures: pictures}}, nil)},
			{Name: "scanned.pdf", Data: readFile(t, "scanned.pdf")},
			{Name: "mixed.pdf", Data: readFile(t, "mixed.pdf")},
		},
		Big: &extracttest.Sample{Name: "big.pdf", Data: pdfwrite.Make(bigPages, nil)},
		Hostile: []extracttest.Sample{
			{Name: "junk.pdf", Data: append([]byte("%PDF-1.7\n"), []byte(strings.Repeat("garbage ", 100))...), Want: extract.ErrCorrupt},
			{Name: "no-header.pdf", Data: []byte("hello"), Want: extract.ErrCorrupt},
			{Name: "truncated.pdf", Data: sample()[:300], Want: extract.ErrCorrupt},
		},
		Known: map[string]string{
			"MaxTextBytes": "pdftotext's output is capped at MaxTextBytes+64 KiB (TestTextOverTheOutputCap); the assembled text is not held to MaxTextBytes itself",
			"zero limits":  "zero Limits fields are budgets of nothing: Timeout 0 expires at once, MaxPages 0 reads one page, MaxImages 0 keeps none; and zero Limits have no OCR",
		},
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.pdf"))
	if len(files) != 46 {
		t.Fatalf("hostile PDF corpus: %d files in testdata/hostile, want 46", len(files))
	}
	encrypted := map[string]bool{"issue6010_1.pdf": true, "pr6531_1.pdf": true, "issue3371.pdf": true}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := extracttest.Sample{Name: filepath.Base(f), Data: data}
		if encrypted[s.Name] {
			s.Want = extract.ErrEncrypted
		}
		h.Hostile = append(h.Hostile, s)
	}
	return h
}

// runConformance runs the shared suite (extracttest) and what PDF
// extractors promise besides: text by page, headings from the outline, the
// pictures themselves.
func runConformance(t *testing.T, h extracttest.Harness, wantHeadings, wantImages bool) {
	extracttest.RunConformance(t, h)
	ex := h.Extractor
	ctx := context.Background()
	t.Run("text per page", func(t *testing.T) {
		doc, err := ex.Extract(ctx, sample(), "sample.pdf", testLimits())
		if err != nil {
			t.Fatal(err)
		}
		extracttest.Verify(t, doc, nil, profile)
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
}

func TestPopplerConformance(t *testing.T) {
	p := Poppler{}
	if err := p.Available(); err != nil {
		t.Fatal(err) // the test task installs poppler-utils; its absence is a set-up error
	}
	p.PictureReader = pictureReader(t) // as the ingestor runs it
	runConformance(t, harness(t, p), true, true)
}

// UniPDF needs a license to extract text. With one configured
// (STRATA_UNIDOC_LICENSE_KEY + STRATA_UNIDOC_CUSTOMER, or STRATA_UNIDOC_METERED_KEY),
// it runs the same suite; without one, the fallback must hand the file to
// poppler and say why.
func TestUniPDF(t *testing.T) {
	l := License{MeteredKey: os.Getenv("STRATA_UNIDOC_METERED_KEY"), OfflineKey: os.Getenv("STRATA_UNIDOC_LICENSE_KEY"), CustomerName: os.Getenv("STRATA_UNIDOC_CUSTOMER")}
	if l.Configured() {
		runConformance(t, harness(t, Fallback{Primary: NewUniPDF(l), Secondary: Poppler{}}), false, false)
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
