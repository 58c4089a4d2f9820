package docx

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

// BenchmarkExtract reads a contract of about 1.7 MB of XML: a body of
// headings, paragraphs and tables, with headers, footers, footnotes and
// comments. The bytes counted are the uncompressed XML parts, so MB/s is
// XML read per second.
func BenchmarkExtract(b *testing.B) {
	var body, notes, comments strings.Builder
	for i := 0; body.Len() < 1<<20; i++ {
		if i%25 == 0 {
			body.WriteString(para("berschrift1", "Chapter"))
		}
		body.WriteString(para("", "A paragraph of a long contract, clause after clause, ", "with runs."))
		if i%40 == 0 {
			body.WriteString(table([]string{"Name", "Value"}, []string{"alpha", "1"}))
		}
		if i%4 == 0 {
			notes.WriteString(note("footnote", itoa(i+2), "", para("", "See the schedule, clause ", itoa(i), ".")))
			comments.WriteString(comment(itoa(i), "Ana", para("", "Please check clause ", itoa(i), ".")))
		}
	}
	p := parts(b, body.String())
	for i := range 3 {
		withHeader(p, "rId2"+itoa(i), "header"+itoa(i)+".xml", para("", "Acme Corp, confidential")+table([]string{"Rev", itoa(i)}))
	}
	p["word/footnotes.xml"] = []byte(partXML("footnotes", separators+notes.String()))
	p["word/comments.xml"] = []byte(partXML("comments", comments.String()))
	data := zipParts(b, p)
	var xmlBytes int64
	for name, part := range p {
		if strings.HasSuffix(name, ".xml") || strings.HasSuffix(name, ".rels") {
			xmlBytes += int64(len(part))
		}
	}
	b.SetBytes(xmlBytes)
	for b.Loop() {
		if _, err := (Extractor{}).Extract(context.Background(), data, "bench.docx", extract.DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
