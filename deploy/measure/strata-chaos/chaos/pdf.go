package chaos

import (
	"bytes"
	"fmt"
	"strings"
)

// makePDF writes a small valid PDF: each page's lines in Helvetica, and
// title in the document information. It is here rather than taken from
// the ingestor's pdftest so that deploy's programs import no service
// module (the module builds alone, as an image build does); the words are
// printable ASCII, so no encoding is needed.
func makePDF(title string, pages [][]string) []byte {
	var objs []string // object i+1
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	catalog := add("") // filled in once the pages are known
	pagesObj := add("")
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, lines := range pages {
		var content strings.Builder
		content.WriteString("BT /F1 12 Tf 72 720 Td 16 TL\n")
		for _, l := range lines {
			fmt.Fprintf(&content, "(%s) Tj T*\n", pdfEscape(l))
		}
		content.WriteString("ET\n")
		stream := add(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()))
		page := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pagesObj, font, stream))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	objs[pagesObj-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages))
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj)
	info := add(fmt.Sprintf("<< /Title (%s) >>", pdfEscape(title)))

	var buf bytes.Buffer
	buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = buf.Len()
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, catalog, info, xref)
	return buf.Bytes()
}

// pdfEscape writes s as the body of a PDF literal string.
func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}
