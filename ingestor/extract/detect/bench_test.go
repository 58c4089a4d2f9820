package detect

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/chunk"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
	"github.com/strata-kb/strata/ingestor/tokens"
)

const sentence = "Strata turns uploaded files into versioned chunks that agents search and read through MCP tools. "

// inputs builds one realistic file per format, each roughly size bytes of text.
func inputs(size int) map[string][]byte {
	para := strings.Repeat(sentence, 4)
	n := size / len(para)
	var md, txt, html, gosrc, docxBody strings.Builder
	html.WriteString("<html><body><main>")
	gosrc.WriteString("package bench\n\n")
	for i := range n {
		if i%8 == 0 {
			fmt.Fprintf(&md, "## Section %d\n\n", i)
			fmt.Fprintf(&html, "<h2>Section %d</h2>", i)
			fmt.Fprintf(&docxBody, `<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Section %d</w:t></w:r></w:p>`, i)
		}
		md.WriteString(para + "\n\n")
		txt.WriteString(para + "\n\n")
		fmt.Fprintf(&html, "<p>%s</p>", para)
		fmt.Fprintf(&docxBody, "<w:p><w:r><w:t>%s</w:t></w:r></w:p>", para)
		fmt.Fprintf(&gosrc, "// F%d documents itself.\nfunc F%d(x int) int {\n\t// %s\n\treturn x + %d\n}\n\n", i, i, para, i)
	}
	html.WriteString("</main></body></html>")
	var dx bytes.Buffer
	zw := zip.NewWriter(&dx)
	for name, body := range map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"word/document.xml":   `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + docxBody.String() + `</w:body></w:document>`,
	} {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Close()
	var pages []pdfwrite.Page
	for i := range 40 {
		pages = append(pages, pdfwrite.Page{Lines: []string{fmt.Sprintf("Section %d", i), "", sentence, sentence, sentence}})
	}
	var img bytes.Buffer
	png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 800, 600)))
	return map[string][]byte{
		"markdown.md": []byte(md.String()), "text.txt": []byte(txt.String()), "html.html": []byte(html.String()),
		"code.go": []byte(gosrc.String()), "docx.docx": dx.Bytes(), "pdf-40p.pdf": pdfwrite.Make(pages, nil), "image.png": img.Bytes(),
	}
}

// BenchmarkExtractAndChunk measures detection + extraction + chunking per
// format: MB/s of input, and pages/s for PDF.
func BenchmarkExtractAndChunk(b *testing.B) {
	counter, err := tokens.New()
	if err != nil {
		b.Fatal(err)
	}
	reg := NewRegistry(pdf.Poppler{})
	lim := extract.DefaultLimits()
	lim.Timeout = time.Minute
	for name, data := range inputs(1 << 20) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var pages, chunks int
			for b.Loop() {
				doc, err := reg.Extract(context.Background(), data, name, lim)
				if err != nil {
					b.Fatal(err)
				}
				secs := chunk.Split(doc, counter, chunk.Options{TargetTokens: 512})
				pages = doc.Pages
				chunks = 0
				for _, s := range secs {
					chunks += len(s.Chunks)
				}
			}
			if pages > 0 {
				b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
			}
			b.ReportMetric(float64(chunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}
