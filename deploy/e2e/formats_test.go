package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

func docxFile(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"word/styles.xml":     `<?xml version="1.0"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`,
		"word/document.xml": `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Quarterly plan</w:t></w:r></w:p>` +
			`<w:p><w:r><w:t>The docxmarker budget is approved.</w:t></w:r></w:p>` +
			`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>team</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>budget</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
			`</w:body></w:document>`,
	}
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func pngFile(t *testing.T) string {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for x := range 40 {
		img.Set(x, x%30, color.RGBA{200, 10, 10, 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestEveryFormat uploads one file of each supported type, and bad ones, and
// reads what was indexed through MCP.
func TestEveryFormat(t *testing.T) {
	h := start(t)
	pdfData := pdfwrite.Make([]pdfwrite.Page{
		{Lines: []string{"Overview", "", "The pdfmarker page explains everything."}},
		{Lines: []string{"Figures", "", "A picture follows."}, Image: true},
	}, []pdfwrite.OutlineItem{{Title: "Overview", Page: 1, Level: 1}, {Title: "Figures", Page: 2, Level: 1}})
	files := []struct {
		key, content, wantText, wantKind string
		wantPage                         float64
	}{
		{key: "acme/f/notes.md", content: "# Notes\n\nThe mdmarker line.\n", wantText: "mdmarker", wantKind: "text"},
		{key: "acme/f/plain.txt", content: "The txtmarker paragraph.\n", wantText: "txtmarker", wantKind: "text"},
		{key: "acme/f/page.html", content: "<html><head><title>T</title><script>var hidden=1</script></head><body><nav>menu</nav><main><h1>Page</h1><p>The htmlmarker paragraph.</p></main></body></html>", wantText: "htmlmarker", wantKind: "text"},
		{key: "acme/f/main.go", content: "package main\n\n// Run starts gomarker.\nfunc Run() error {\n\treturn nil\n}\n", wantText: "gomarker", wantKind: "code"},
		{key: "acme/f/data.csv", content: "name,value\ncsvmarker,42\n", wantText: "csvmarker", wantKind: "text"},
		{key: "acme/f/plan.docx", content: docxFile(t), wantText: "docxmarker", wantKind: "text"},
		{key: "acme/f/report.pdf", content: string(pdfData), wantText: "pdfmarker", wantKind: "text", wantPage: 1},
		{key: "acme/f/chart.png", content: pngFile(t), wantText: "40x30", wantKind: "image"},
	}
	for _, f := range files {
		h.put(f.key, f.content)
	}
	bad := map[string]string{
		"acme/bad/empty.txt":   "",
		"acme/bad/random.pdf":  "%PDF-1.7\n" + strings.Repeat("\x00garbage", 200),
		"acme/bad/not.docx":    "PK\x03\x04 this is not a real zip",
		"acme/bad/binary.json": "\x00\x01\x02\x03",
		"acme/bad/movie.mp4":   "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00",
	}
	enc, err := os.ReadFile(filepath.Join("..", "..", "ingestor", "extract", "pdf", "testdata", "hostile", "issue6010_1.pdf"))
	if err != nil {
		t.Fatalf("encrypted PDF from the ingestor's testdata: %v", err)
	}
	bad["acme/bad/encrypted.pdf"] = string(enc)
	for k, v := range bad {
		h.put(k, v)
	}
	h.settle()

	for _, f := range files {
		path := strings.TrimPrefix(f.key, "acme/")
		out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
		if errText != "" {
			t.Errorf("%s: %s", f.key, errText)
			continue
		}
		found := false
		for _, c := range chunksOf(out) {
			if strings.Contains(c["content"].(string), f.wantText) {
				found = true
				got, _ := h.call("get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": c["id"]})
				if got == nil {
					t.Errorf("%s: get_file_chunk failed", f.key)
				}
			}
		}
		if !found {
			t.Errorf("%s: no chunk contains %q: %v", f.key, f.wantText, out)
		}
	}
	// The PDF's figure became an image chunk with its own page.
	out, _ := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "f/report.pdf"})
	var pdfText []string
	for _, c := range chunksOf(out) {
		pdfText = append(pdfText, c["content"].(string))
	}
	if !strings.Contains(strings.Join(pdfText, "|"), "Image 1 on page 2 (PNG, 64x64)") {
		t.Errorf("pdf image chunk missing: %q", pdfText)
	}
	for k := range bad {
		path := strings.TrimPrefix(k, "acme/")
		_, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
		if !strings.Contains(errText, "was not indexed") {
			t.Errorf("%s: want its recorded error, got %q", k, errText)
		}
		t.Logf("%s: %s", k, errText)
	}
	// Image chunks are viewable: the PDF's embedded picture and the uploaded PNG.
	for _, path := range []string{"f/report.pdf", "f/chart.png"} {
		out, _ := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path})
		var imageChunk string
		for _, c := range chunksOf(out) {
			if strings.HasPrefix(c["content"].(string), "Image ") {
				imageChunk = c["id"].(string)
			}
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = "view_chunk_image"
		req.Params.Arguments = map[string]any{"chunk_id": imageChunk}
		res, err := h.mcp.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("view_chunk_image %s: %v %+v", path, err, res)
		}
		var gotImage bool
		for _, c := range res.Content {
			if img, ok := c.(mcp.ImageContent); ok && img.MIMEType == "image/png" && len(img.Data) > 100 {
				gotImage = true
			}
		}
		if !gotImage {
			t.Fatalf("view_chunk_image %s returned no PNG: %+v", path, res.Content)
		}
	}
	// Knowledge Stack navigation over the same index.
	found, _ := h.call("find", map[string]any{"name": "REPORT", "kind": "DOCUMENT"})
	if b, _ := json.Marshal(found); !strings.Contains(string(b), "report.pdf") {
		t.Fatalf("find: %s", b)
	}
	docID := found["results"].([]any)[0].(map[string]any)["path_part_id"].(string)
	read, errText := h.call("read", map[string]any{"path_part_id": docID})
	if errText != "" || read["mode"] != "inline" || !strings.Contains(fmt.Sprint(read["chunks"]), "pdfmarker") {
		t.Fatalf("read: %v %s", read, errText)
	}
	info, _ := h.call("get_info", map[string]any{"path_part_id": docID})
	if info["breadcrumb"] != "acme > f > report.pdf" {
		t.Fatalf("get_info breadcrumb: %v", info["breadcrumb"])
	}
	// Bad files did not block the good ones (checked above) and nothing was dead-lettered.
	if sr, _ := h.call("search_keyword", map[string]any{"query": "docxmarker"}); len(results(sr)) != 1 {
		t.Errorf("search docxmarker: %v", sr)
	}
}
