package docx

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// withHeaderEntry is a document whose header1.xml is written by write
// into the zip, after the other parts: for entries too big to hold.
func withHeaderEntry(tb testing.TB, write func(*zip.Writer)) []byte {
	tb.Helper()
	p := parts(tb, para("", "Body."))
	withRels(p, rel("rId20", "header", "header1.xml"))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range p {
		w, err := zw.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(data)
	}
	write(zw)
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// headerBomb has a header1.xml of size zero bytes, declared truthfully.
func headerBomb(tb testing.TB, size int64) []byte {
	return withHeaderEntry(tb, func(zw *zip.Writer) {
		zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(w, flate.BestSpeed)
		})
		w, err := zw.Create("word/header1.xml")
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := io.CopyN(w, zeros{}, size); err != nil {
			tb.Fatal(err)
		}
	})
}

// lyingHeader has a header1.xml of about actual bytes of valid XML whose
// zip header declares 100.
func lyingHeader(tb testing.TB, actual int) []byte {
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	crc := crc32.NewIEEE()
	out := io.MultiWriter(fw, crc)
	io.WriteString(out, strings.TrimSuffix(partXML("hdr", ""), "</w:hdr>"))
	empty := strings.Repeat("<w:p/>", 1<<14)
	for n := 0; n < actual; n += len(empty) {
		io.WriteString(out, empty)
	}
	io.WriteString(out, "</w:hdr>")
	fw.Close()
	return withHeaderEntry(tb, func(zw *zip.Writer) {
		w, err := zw.CreateRaw(&zip.FileHeader{
			Name: "word/header1.xml", Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: 100,
		})
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(comp.Bytes())
	})
}

// billionLaughs is a footnotes part whose second note uses an entity
// that would expand to a billion "lol"s.
func billionLaughs() string {
	var dtd strings.Builder
	dtd.WriteString(`<!DOCTYPE w:footnotes [<!ENTITY lol0 "lol">`)
	for i := 1; i <= 9; i++ {
		dtd.WriteString(`<!ENTITY lol` + itoa(i) + ` "` + strings.Repeat("&lol"+itoa(i-1)+";", 10) + `">`)
	}
	dtd.WriteString(`]>`)
	return strings.Replace(partXML("footnotes", note("footnote", "1", "", para("", "before the entity"))+
		note("footnote", "2", "", `<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>`)),
		"<w:footnotes", dtd.String()+"<w:footnotes", 1)
}

// externalEntity is a header part that would read a file of the host.
func externalEntity() string {
	return strings.Replace(partXML("hdr", `<w:p><w:r><w:t>&xxe;</w:t></w:r></w:p>`),
		"<w:hdr", `<!DOCTYPE w:hdr [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><w:hdr`, 1)
}

// TestTrailingLimits: the parts read after the body are bounded as the
// body is; a limit or a timeout there stops the document.
func TestTrailingLimits(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 10 << 20
	lim.MaxTextBytes = 5000

	bigHeader := parts(t, para("", "Body."))
	withHeader(bigHeader, "rId20", "header1.xml", para("", strings.Repeat("x", 6000)))
	manyNotes := parts(t, para("", "Body."))
	manyNotes["word/footnotes.xml"] = []byte(partXML("footnotes", strings.Repeat(note("footnote", "1", "", para("", "a note")), 1000)))
	longHeader := parts(t, para("", "Body."))
	withHeader(longHeader, "rId20", "header1.xml", strings.Repeat(para("", "x"), 2000))
	// Pictures may not take what the headers need: the budget holds the
	// body's XML parts, a header of 1000 bytes, and not the picture too.
	budget := parts(t, `<w:p>`+drawingRun(1, "rId11", "", "")+`</w:p>`)
	withHeader(budget, "rId20", "header1.xml", para("", strings.Repeat("h", 1000)))
	budgetLim := extract.DefaultLimits()
	budgetLim.MaxUncompressed = 0
	for _, k := range []string{"word/document.xml", "word/styles.xml", "word/_rels/document.xml.rels", "docProps/core.xml", "word/header1.xml"} {
		budgetLim.MaxUncompressed += int64(len(budget[k]))
	}
	budgetLim.MaxUncompressed += int64(len(budget["word/media/photo.jpeg"])) - 1

	tests := []struct {
		name string
		data []byte
		ctx  context.Context
		lim  extract.Limits
		want error
	}{
		{"header bomb", headerBomb(t, 20<<20), nil, lim, extract.ErrTooLarge},
		{"lying header", lyingHeader(t, 20<<20), nil, lim, extract.ErrTooLarge},
		{"header text over MaxTextBytes", zipParts(t, bigHeader), nil, lim, extract.ErrTooLarge},
		{"notes over MaxTextBytes", zipParts(t, manyNotes), nil, lim, extract.ErrTooLarge},
		{"cancelled in a header", zipParts(t, longHeader), &countdownCtx{context.Background(), 3}, lim, extract.ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			start := time.Now()
			doc, err := Extractor{}.Extract(ctx, tt.data, "hostile.docx", tt.lim)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v (doc %+v)", err, tt.want, doc)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			t.Log(err)
		})
	}

	t.Run("the header's budget is kept from pictures", func(t *testing.T) {
		doc, err := run(t, zipParts(t, budget), budgetLim)
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.Images) != 0 || !hasWarning(doc, "expansion limit") || !strings.Contains(doc.Text, "hhhh") {
			t.Errorf("%d images, warnings %q, text %q", len(doc.Images), doc.Warnings, doc.Text)
		}
		budgetLim.MaxUncompressed -= 1000 // the header no longer fits
		if _, err := run(t, zipParts(t, budget), budgetLim); !errors.Is(err, extract.ErrTooLarge) {
			t.Errorf("a header over the budget: %v", err)
		}
	})
}

// TestTrailingBroken: a broken part read after the body costs a
// warning and the rest of that part, never the document; entities are
// never expanded.
func TestTrailingBroken(t *testing.T) {
	corrupt := parts(t, para("", "Body."))
	corrupt["word/footnotes.xml"] = []byte(partXML("footnotes", note("footnote", "1", "", para("", strings.Repeat("compressible text ", 500)))))
	corruptData := zipParts(t, corrupt)
	if i := bytes.Index(corruptData, []byte("word/footnotes.xml")); i >= 0 {
		for j := i + 40; j < i+80; j++ {
			corruptData[j] ^= 0x55
		}
	}
	tests := []struct {
		name   string
		edit   func(map[string][]byte)
		data   []byte // instead of edit
		blocks []string
		warn   string
	}{
		{
			name:   "header nested too deep",
			edit:   func(p map[string][]byte) { withHeader(p, "rId20", "header1.xml", para("", "kept")+deepTables(1000)) },
			blocks: []string{"paragraph:0:Body.", "heading:1:Header", "paragraph:0:kept"},
			warn:   "reading word/header1.xml: corrupt or unreadable file: XML nested more than 1024 deep",
		},
		{
			name:   "billion laughs in the footnotes",
			edit:   func(p map[string][]byte) { p["word/footnotes.xml"] = []byte(billionLaughs()) },
			blocks: []string{"paragraph:0:Body.", "heading:1:Footnotes", "paragraph:0:before the entity"},
			warn:   "invalid character entity &lol9;",
		},
		{
			name: "external entity in a header",
			edit: func(p map[string][]byte) {
				withHeader(p, "rId20", "header1.xml", "")
				p["word/header1.xml"] = []byte(externalEntity())
			},
			blocks: []string{"paragraph:0:Body."},
			warn:   "invalid character entity &xxe;",
		},
		{
			name: "malformed comments",
			edit: func(p map[string][]byte) {
				p["word/comments.xml"] = []byte(partXML("comments", comment("0", "Ana", para("", "fine"))) + `<w:comment><w:p>`)
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Comments", "paragraph:0:Ana: fine"},
			warn:   "reading word/comments.xml: XML syntax error",
		},
		{
			name: "broken header relationships",
			edit: func(p map[string][]byte) {
				withHeader(p, "rId20", "header1.xml", para("", "still read"))
				p["word/_rels/header1.xml.rels"] = []byte(`<Relationships><Relationship`)
			},
			blocks: []string{"paragraph:0:Body.", "heading:1:Header", "paragraph:0:still read"},
			warn:   "reading word/_rels/header1.xml.rels",
		},
		{
			name:   "a header of zeros within the limits",
			data:   headerBomb(t, 1<<20),
			blocks: []string{"paragraph:0:Body."},
			warn:   "reading word/header1.xml: XML syntax error",
		},
		{
			name:   "corrupt deflate data in the footnotes",
			data:   corruptData,
			blocks: []string{"paragraph:0:Body."},
			warn:   "reading word/footnotes.xml",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data
			if data == nil {
				data = trailingEdit(t, tt.edit)
			}
			doc, err := run(t, data, extract.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if got := blockTexts(doc); !reflect.DeepEqual(got, tt.blocks) {
				t.Errorf("blocks:\n got %q\nwant %q", got, tt.blocks)
			}
			if !hasWarning(doc, tt.warn) {
				t.Errorf("warnings %q, want %q", doc.Warnings, tt.warn)
			}
			if strings.Contains(doc.Text, "lol") || strings.Contains(doc.Text, "root:") {
				t.Errorf("an entity was expanded: %q", doc.Text)
			}
		})
	}
}

// trailingEdit is a document of one paragraph with the changes of edit.
func trailingEdit(tb testing.TB, edit func(map[string][]byte)) []byte {
	p := parts(tb, para("", "Body."))
	edit(p)
	return zipParts(tb, p)
}

// deepTables nests n tables.
func deepTables(n int) string {
	return strings.Repeat("<w:tbl><w:tr><w:tc>", n) + strings.Repeat("</w:tc></w:tr></w:tbl>", n)
}
