package odt

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// repeatReader is an endless reader of one repeated string.
type repeatReader struct {
	s string
	i int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for n := range p {
		p[n] = r.s[r.i%len(r.s)]
		r.i++
	}
	return len(p), nil
}

// bombDoc is a document whose content.xml expands (truthfully) to size
// bytes of filler, compressed at level, written streaming so the test
// never holds it.
func bombDoc(tb testing.TB, size int64, filler string, level int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, level) })
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "mimetype", Method: zip.Store})
	io.WriteString(w, "application/vnd.oasis.opendocument.text")
	w, err := zw.Create(contentPart)
	if err != nil {
		tb.Fatal(err)
	}
	io.WriteString(w, `<office:document-content`+namespaces+`><office:body><office:text>`)
	if _, err := io.CopyN(w, &repeatReader{s: filler}, size); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// lyingDoc holds about actual bytes of valid XML in content.xml, whose
// zip header declares only declared bytes.
func lyingDoc(tb testing.TB, actual int, declared uint64) []byte {
	tb.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	crc := crc32.NewIEEE()
	out := io.MultiWriter(fw, crc)
	io.WriteString(out, `<office:document-content`+namespaces+`><office:body><office:text>`+p("hello"))
	empty := strings.Repeat("<text:p/>", 1<<14)
	for n := 0; n < actual; n += len(empty) {
		io.WriteString(out, empty)
	}
	io.WriteString(out, `</office:text></office:body></office:document-content>`)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: contentPart, Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return buf.Bytes()
}

// billionLaughs is the entity bomb, with an external entity.
const billionLaughs = `<?xml version="1.0"?><!DOCTYPE lolz [
<!ENTITY lol "lol">
<!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
<!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
<!ENTITY xxe SYSTEM "file:///etc/passwd">
]>`

// entityDocs put the entity bomb and the external entity in content.xml
// and in meta.xml (which is optional: the document is read without it).
func entityDocs(tb testing.TB) (inContent, external, inMeta []byte) {
	d := newDoc("")
	d["content.xml"] = []byte(billionLaughs + strings.TrimPrefix(contentXML("", p("&lol9;"), false), `<?xml version="1.0" encoding="UTF-8"?>`))
	inContent = d.zip(tb)
	d["content.xml"] = []byte(billionLaughs + strings.TrimPrefix(contentXML("", p("&xxe;"), false), `<?xml version="1.0" encoding="UTF-8"?>`))
	external = d.zip(tb)
	d = newDoc(p("Safe."))
	d["meta.xml"] = []byte(billionLaughs + strings.TrimPrefix(metaXML(`<dc:title>&lol9;</dc:title>`), `<?xml version="1.0" encoding="UTF-8"?>`))
	inMeta = d.zip(tb)
	return inContent, external, inMeta
}

// encryptedDoc is a password-protected document: the manifest lists
// encryption data for content.xml, which is ciphertext.
func encryptedDoc(tb testing.TB) []byte {
	d := newDoc("")
	d["content.xml"] = []byte("\x8f\x02\xa1 ciphertext \x00\xff")
	d["META-INF/manifest.xml"] = []byte(strings.Replace(manifestXML,
		`<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>`,
		`<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml" manifest:size="1234">`+
			`<manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha256-1k" manifest:checksum="x">`+
			`<manifest:algorithm manifest:algorithm-name="http://www.w3.org/2001/04/xmlenc#aes256-cbc" manifest:initialisation-vector="x"/>`+
			`</manifest:encryption-data></manifest:file-entry>`, 1))
	return d.zip(tb)
}

func manyEntries(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		name := contentPart
		if i > 0 {
			name = fmt.Sprintf("x/%d", i)
		}
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store}); err != nil {
			tb.Fatal(err)
		}
	}
	zw.Close()
	return buf.Bytes()
}

func zipEncrypted(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: contentPart, Method: zip.Store, Flags: 0x1})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write([]byte("\x00garbage"))
	zw.Close()
	return buf.Bytes()
}

type hostileDoc struct {
	name string
	data []byte
	want error // nil: a valid document or any classified error
}

// hostileDocs are the ODT's own hostile files and the error each must give.
func hostileDocs(tb testing.TB) []hostileDoc {
	good := newDoc(p("hello")).zip(tb)
	noContent := newDoc("")
	delete(noContent, contentPart)
	malformed := newDoc("")
	malformed[contentPart] = []byte(`<office:document-content` + namespaces + `><office:body><office:text><text:p>open</text:span>`)
	truncatedXML := newDoc("")
	truncatedXML[contentPart] = []byte(contentXML("", p("hello"), false)[:200])
	deep := newDoc(strings.Repeat("<text:section>", 2000) + strings.Repeat("</text:section>", 2000))
	spreadsheet := newDoc(p("x"))
	spreadsheet["mimetype"] = []byte("application/vnd.oasis.opendocument.spreadsheet")
	badStyles := newDoc(p("Body kept."))
	badStyles["styles.xml"] = []byte(`<office:document-styles` + namespaces + `><office:styles><style:style`)
	inContent, external, inMeta := entityDocs(tb)
	return []hostileDoc{
		{"empty", nil, extract.ErrCorrupt},
		{"not a zip", []byte("plain text, not a document"), extract.ErrCorrupt},
		{"truncated zip", good[:len(good)/2], extract.ErrCorrupt},
		{"zip magic then junk", []byte("PK\x03\x04" + strings.Repeat("\x00", 100)), extract.ErrCorrupt},
		{"no content.xml", noContent.zip(tb), extract.ErrCorrupt},
		{"malformed XML", malformed.zip(tb), extract.ErrCorrupt},
		{"truncated XML", truncatedXML.zip(tb), extract.ErrCorrupt},
		{"nested too deep", deep.zip(tb), extract.ErrCorrupt},
		{"entity bomb", inContent, extract.ErrCorrupt},
		{"external entity", external, extract.ErrCorrupt},
		{"entity bomb in meta.xml", inMeta, nil},
		{"broken styles.xml", badStyles.zip(tb), nil},
		{"zip bomb by size", bombDoc(tb, 300<<20, "<text:p/>", flate.BestSpeed), extract.ErrTooLarge},
		{"zip bomb by ratio", bombDoc(tb, 64<<20, "<text:p>", flate.DefaultCompression), extract.ErrTooLarge},
		{"lying sizes", lyingDoc(tb, 50<<20, 100), extract.ErrTooLarge},
		{"too many entries", manyEntries(tb, maxEntries+1), extract.ErrTooLarge},
		{"password-protected", encryptedDoc(tb), extract.ErrEncrypted},
		{"zip-encrypted entry", zipEncrypted(tb), extract.ErrEncrypted},
		{"a spreadsheet", spreadsheet.zip(tb), extract.ErrUnsupported},
	}
}

func TestHostile(t *testing.T) {
	for _, tt := range hostileDocs(t) {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			doc, err := Extractor{}.Extract(context.Background(), tt.data, "hostile.odt", extract.DefaultLimits())
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want a document", err)
				}
				if len(doc.Warnings) == 0 {
					t.Errorf("no warning about the part ignored")
				}
				return
			}
			if !errors.Is(err, tt.want) || doc != nil {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "odt hostile.odt: ") {
				t.Errorf("error lacks context: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestBombs: bombs fail fast as too large and say which limit stopped
// them: MaxUncompressed (here 16 MB), the ratio, or the declared size.
func TestBombs(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 16 << 20
	prose := p("The harbour master counted the crates again.") + "\n" // expands 150 times at BestSpeed
	for _, tt := range []struct {
		name, want string
		data       []byte
	}{
		{"by size", "MaxUncompressed", bombDoc(t, 20<<20, prose, flate.BestSpeed)},
		{"by ratio", "zip bomb", bombDoc(t, 12<<20, "<text:p>", flate.DefaultCompression)},
		{"lying about its size", "declared", lyingDoc(t, 50<<20, 100)},
		{"lying under the ratio floor", "declared", lyingDoc(t, 50<<20, 1<<20-10)},
	} {
		start := time.Now()
		_, err := run(t, tt.data, lim)
		if !errors.Is(err, extract.ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrTooLarge saying %q", tt.name, err, tt.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", tt.name, d)
		}
	}
}

// TestMaxTextBytes: text over the limit fails as soon as it is met, in a
// paragraph, in a table, in a note.
func TestMaxTextBytes(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 5000
	big := strings.Repeat("x", 6000)
	for name, body := range map[string]string{
		"paragraph": p(big),
		"table":     strings.Repeat(`<table:table><table:table-row><table:table-cell>`+p("cell text")+`</table:table-cell></table:table-row></table:table>`, 1000),
		"repeats":   `<table:table><table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="1000000">` + p("cell text here") + `</table:table-cell></table:table-row></table:table>`,
		"note":      p(`x<text:note><text:note-citation>1</text:note-citation><text:note-body>` + p(big) + `</text:note-body></text:note>`),
	} {
		if _, err := run(t, newDoc(body).zip(t), lim); !errors.Is(err, extract.ErrTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCancelledMidway: a context cancelled while the body is read ends
// the extraction soon after, with ErrTimeout.
func TestCancelledMidway(t *testing.T) {
	data := newDoc(bigBody(40 << 20)).zip(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := Extractor{}.Extract(ctx, data, "big.odt", extract.DefaultLimits())
	if !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v after a cancel at 20ms", d)
	}
}

// TestTimeout applies Limits.Timeout itself.
func TestTimeout(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.Timeout = time.Nanosecond
	_, err := Extractor{}.Extract(context.Background(), newDoc(p("x")).zip(t), "slow.odt", lim)
	if !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
}

func TestSniff(t *testing.T) {
	if !Sniff(fixture(t, "report.odt")) || !Sniff(fixture(t, "report.fodt")) || !Sniff(newDoc(p("x")).zip(t)) {
		t.Error("an ODT is not sniffed as one")
	}
	spreadsheet := newDoc(p("x"))
	spreadsheet["mimetype"] = []byte("application/vnd.oasis.opendocument.spreadsheet")
	noMime := newDoc(p("x"))
	delete(noMime, "mimetype")
	if Sniff(spreadsheet.zip(t)) || Sniff(noMime.zip(t)) || Sniff([]byte("PK\x03\x04junk")) || Sniff([]byte("<html>")) {
		t.Error("a spreadsheet, a zip without mimetype, junk or HTML sniffed as an ODT")
	}
}
