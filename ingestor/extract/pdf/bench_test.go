package pdf

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// benchFiles are the PDFs measured: a real two-column paper from the shared
// corpus (when present) and a generated 40-page document.
func benchFiles(b *testing.B) map[string][]byte {
	files := map[string][]byte{}
	var pages []pdfwrite.Page
	for i := range 40 {
		pages = append(pages, pdfwrite.Page{Lines: []string{fmt.Sprintf("Section %d", i+1), "",
			"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.",
			"Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip."}})
	}
	files["generated-40p"] = pdfwrite.Make(pages, nil)
	data, err := os.ReadFile(filepath.Join("testdata", "hostile", "tracemonkey.pdf"))
	if err != nil {
		panic(fmt.Sprintf("benchmark corpus: %v", err))
	}
	files["tracemonkey-14p"] = data
	return files
}

// scratchVariants are the extractor with its scratch directory in the
// system's temporary directory and, where the machine has one, on a tmpfs.
// Each runs with and without the picture reader (strata-pdf-pictures).
func scratchVariants(tb testing.TB) []scratchVariant {
	reader := pictureReader(tb)
	variants := []scratchVariant{
		{"strata-poppler", Poppler{}},
		{"strata-poppler+reader", Poppler{PictureReader: reader}},
	}
	if dir, err := os.MkdirTemp("/dev/shm", "strata-bench-"); err == nil {
		_ = os.Remove(dir)
		variants = append(variants,
			scratchVariant{"strata-poppler-tmpfs", Poppler{ScratchDir: "/dev/shm"}},
			scratchVariant{"strata-poppler-tmpfs+reader", Poppler{ScratchDir: "/dev/shm", PictureReader: reader}})
	}
	return variants
}

type scratchVariant struct {
	name string
	p    Poppler
}

// BenchmarkPDF compares, on the same files in the same run, Strata's poppler
// extractor (pdfinfo + pdftotext + outline + images + assembly) with a bare
// `pdftotext` call, the floor any poppler-based extractor pays.
func BenchmarkPDF(b *testing.B) {
	lim := testLimits()
	for name, data := range benchFiles(b) {
		dir := b.TempDir()
		file := filepath.Join(dir, "in.pdf")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			b.Fatal(err)
		}
		doc, err := Poppler{}.Extract(context.Background(), data, name, lim)
		if err != nil {
			b.Fatal(err)
		}
		pages := float64(doc.Pages)
		for _, v := range scratchVariants(b) {
			p := v.p
			b.Run(name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := p.Extract(context.Background(), data, name, lim); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(pages*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			})
		}
		b.Run(name+"/pdftotext-plain", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := exec.Command("pdftotext", "-enc", "UTF-8", "-q", file, os.DevNull).Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(pages*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

// BenchmarkHostileCorpus runs the 46 files of the hostile corpus (testdata/hostile)
// through both, side by side: files that yield text, and time per pass. Each
// file is bounded (8 s, 768 MiB) for both, as in production.
func BenchmarkHostileCorpus(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.pdf"))
	if len(files) == 0 {
		b.Fatal("hostile PDF corpus missing from testdata/hostile")
	}
	lim := testLimits()
	lim.Timeout = 8 * time.Second
	lim.MaxMemoryBytes = 768 << 20
	for _, v := range scratchVariants(b) {
		p := v.p
		b.Run(v.name, func(b *testing.B) {
			var opened int
			for b.Loop() {
				opened = 0
				for _, f := range files {
					data, _ := os.ReadFile(f)
					if doc, err := p.Extract(context.Background(), data, f, lim); err == nil && len(doc.Blocks) > 0 {
						opened++
					}
				}
			}
			b.ReportMetric(float64(opened), "files-with-text")
		})
	}
	b.Run("pdftotext-plain", func(b *testing.B) {
		var opened int
		for b.Loop() {
			opened = 0
			for _, f := range files {
				ctx, cancel := context.WithTimeout(context.Background(), lim.Timeout)
				out, err := exec.CommandContext(ctx, "prlimit", "--as="+strconv.FormatInt(lim.MaxMemoryBytes, 10), "--", "pdftotext", "-enc", "UTF-8", "-q", f, "-").Output()
				cancel()
				if err == nil && len(strings.TrimSpace(string(out))) > 0 {
					opened++
				}
			}
		}
		b.ReportMetric(float64(opened), "files-with-text")
	})
}
