package pdf

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdftest"
)

// benchFiles are the PDFs measured: a real two-column paper from the shared
// corpus (when present) and a generated 40-page document.
func benchFiles(b *testing.B) map[string][]byte {
	files := map[string][]byte{}
	var pages []pdftest.Page
	for i := range 40 {
		pages = append(pages, pdftest.Page{Lines: []string{fmt.Sprintf("Section %d", i+1), "",
			"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.",
			"Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip."}})
	}
	files["generated-40p"] = pdftest.Make(pages, nil)
	if data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "shared", "data", "hostile-pdfs", "tracemonkey.pdf")); err == nil {
		files["tracemonkey-14p"] = data
	}
	return files
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
		b.Run(name+"/strata-poppler", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := (Poppler{}).Extract(context.Background(), data, name, lim); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(pages*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
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
