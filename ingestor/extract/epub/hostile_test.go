package epub

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

func errorIs(err, target error) bool { return errors.Is(err, target) }

// corruptEntry garbles the compressed data of the entry name in data.
func corruptEntry(tb testing.TB, data []byte, name string) {
	tb.Helper()
	i := bytes.Index(data, []byte(name))
	if i < 0 {
		tb.Fatalf("no %s", name)
	}
	for j := i + len(name) + 8; j < i+len(name)+48 && j < len(data); j++ {
		data[j] ^= 0x55
	}
}

// repeat is an endless reader of one repeated string.
type repeat struct {
	s string
	i int
}

func (r *repeat) Read(p []byte) (int, error) {
	for n := range p {
		p[n] = r.s[r.i%len(r.s)]
		r.i++
	}
	return len(p), nil
}

// bombBook is a book whose chapter 1 expands (truthfully) to size bytes
// of filler XHTML, compressed at level, written streaming so the test
// never holds it.
func bombBook(tb testing.TB, size int64, filler string, level int) []byte {
	tb.Helper()
	b := newBook("<p>x</p>")
	delete(b, "OEBPS/c1.xhtml")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, level)
	})
	for name, content := range b {
		w, _ := zw.Create(name)
		io.WriteString(w, content)
	}
	w, err := zw.Create("OEBPS/c1.xhtml")
	if err != nil {
		tb.Fatal(err)
	}
	io.WriteString(w, "<html><body>")
	if _, err := io.CopyN(w, &repeat{s: filler}, size); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// lyingBook is a book whose chapter holds about actual bytes of XHTML
// but whose zip header declares only declared bytes.
func lyingBook(tb testing.TB, actual int, declared uint64) []byte {
	tb.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	crc := crc32.NewIEEE()
	out := io.MultiWriter(fw, crc)
	io.WriteString(out, "<html><body><p>hello</p>")
	filler := strings.Repeat("<p></p>", 1<<14)
	for n := 0; n < actual; n += len(filler) {
		io.WriteString(out, filler)
	}
	fw.Close()

	b := newBook("<p>x</p>")
	delete(b, "OEBPS/c1.xhtml")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range b {
		w, _ := zw.Create(name)
		io.WriteString(w, content)
	}
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: "OEBPS/c1.xhtml", Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared,
	})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return buf.Bytes()
}

// billionLaughs is the entity bomb: nine levels of ten references.
const billionLaughs = `<!DOCTYPE lolz [
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

// entityBooks put the entity bomb and an external entity in the OPF and
// in a chapter.
func entityBooks(tb testing.TB) (inOPF, inChapter []byte) {
	b := newBook(`<p>Safe.</p>`)
	b["OEBPS/content.opf"] = strings.Replace(b["OEBPS/content.opf"], `<package`, billionLaughs+`<package`, 1)
	b["OEBPS/content.opf"] = strings.Replace(b["OEBPS/content.opf"], `A Test Book`, `&lol9;&xxe;`, 1)
	inOPF = b.zip(tb)
	b = newBook(`<p>Safe.</p><p>&lol9;</p><p>&xxe;</p>`)
	b["OEBPS/c1.xhtml"] = strings.Replace(b["OEBPS/c1.xhtml"], "<!DOCTYPE html>", billionLaughs, 1)
	inChapter = b.zip(tb)
	return inOPF, inChapter
}

// drmBook lists its chapter in META-INF/encryption.xml with AES, as Adobe
// ADEPT does, and garbles the chapter.
func drmBook(tb testing.TB) []byte {
	b := newBook("<p>x</p>")
	b["OEBPS/c1.xhtml"] = "\x8f\x02\xa1 ciphertext \x00\xff"
	b["META-INF/encryption.xml"] = encryptionXML("http://www.w3.org/2001/04/xmlenc#aes128-cbc", "OEBPS/c1.xhtml")
	b["META-INF/rights.xml"] = `<adept:rights xmlns:adept="http://ns.adobe.com/adept"/>`
	return b.zip(tb)
}

func encryptionXML(algorithm, uri string) string {
	return `<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
 xmlns:enc="http://www.w3.org/2001/04/xmlenc#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">
<enc:EncryptedData><enc:EncryptionMethod Algorithm="` + algorithm + `"/>
<ds:KeyInfo><resource xmlns="http://ns.adobe.com/adept">urn:uuid:1</resource></ds:KeyInfo>
<enc:CipherData><enc:CipherReference URI="` + uri + `"/></enc:CipherData></enc:EncryptedData></encryption>`
}

func manyEntries(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.Create(containerPart)
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: "x/" + strings.Repeat("a", i%7) + string(rune('a'+i%26)) + itoa(i), Method: zip.Store}); err != nil {
			tb.Fatal(err)
		}
	}
	zw.Close()
	return buf.Bytes()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// zipEncrypted marks the container with the zip encryption flag.
func zipEncrypted(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: containerPart, Method: zip.Store, Flags: 0x1})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write([]byte("\x00garbage"))
	zw.Close()
	return buf.Bytes()
}

// hostileBooks are the EPUB's own hostile files and the error each must
// give (nil: a valid document or any classified error).
func hostileBooks(tb testing.TB) []struct {
	name string
	data []byte
	want error
} {
	good := newBook(`<p>hello</p>`).zip(tb)
	noContainer := newBook(`<p>hello</p>`)
	delete(noContainer, containerPart)
	noOPF := newBook(`<p>hello</p>`)
	delete(noOPF, "OEBPS/content.opf")
	badOPF := newBook(`<p>hello</p>`)
	badOPF["OEBPS/content.opf"] = `<package><manifest><item id="c1" href="c1.xhtml`
	deepOPF := newBook(`<p>hello</p>`)
	deepOPF["OEBPS/content.opf"] = strings.Repeat("<a>", 10000) + strings.Repeat("</a>", 10000)
	noSpine := newBook(`<p>hello</p>`)
	noSpine["OEBPS/content.opf"] = opfXML(`<dc:title>x</dc:title>`, `<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>`, ``)
	outside := newBook(`<p>hello</p>`)
	outside["OEBPS/content.opf"] = opfXML(`<dc:title>x</dc:title>`, `<item id="p" href="../../etc/passwd" media-type="application/xhtml+xml"/>`, `<itemref idref="p"/>`)
	badEncryption := newBook(`<p>hello</p>`)
	badEncryption["META-INF/encryption.xml"] = `<encryption><EncryptedData><CipherReference URI="OEBPS/c1.xhtml"`
	inOPF, inChapter := entityBooks(tb)
	return []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, extract.ErrCorrupt},
		{"not a zip", []byte("plain text, not a book"), extract.ErrCorrupt},
		{"truncated", good[:len(good)/2], extract.ErrCorrupt},
		{"zip magic then junk", []byte("PK\x03\x04" + strings.Repeat("\x00", 100)), extract.ErrCorrupt},
		{"no container.xml", noContainer.zip(tb), extract.ErrCorrupt},
		{"no package document", noOPF.zip(tb), extract.ErrCorrupt},
		{"corrupt package document", badOPF.zip(tb), extract.ErrCorrupt},
		{"package document nested too deep", deepOPF.zip(tb), extract.ErrCorrupt},
		{"no spine", noSpine.zip(tb), extract.ErrCorrupt},
		{"spine outside the zip", outside.zip(tb), nil},
		{"zip bomb by size", bombBook(tb, 300<<20, "<p></p>", flate.BestSpeed), extract.ErrTooLarge},
		{"zip bomb by ratio", bombBook(tb, 64<<20, "<div>", flate.DefaultCompression), extract.ErrTooLarge},
		{"lying sizes", lyingBook(tb, 50<<20, 100), extract.ErrTooLarge},
		{"too many entries", manyEntries(tb, maxEntries+1), extract.ErrTooLarge},
		{"DRM", drmBook(tb), extract.ErrEncrypted},
		{"unreadable encryption.xml", badEncryption.zip(tb), extract.ErrEncrypted},
		{"zip-encrypted entry", zipEncrypted(tb), extract.ErrEncrypted},
		{"entities in the OPF", inOPF, nil},
		{"entities in a chapter", inChapter, nil},
	}
}

func TestHostile(t *testing.T) {
	for _, tt := range hostileBooks(t) {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			doc, err := Extractor{}.Extract(context.Background(), tt.data, "hostile.epub", extract.DefaultLimits())
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want a document", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || doc != nil {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "epub hostile.epub: ") {
				t.Errorf("error lacks context: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestEntities: declared entities are never expanded nor external ones
// read, in the OPF (whose lenient parser keeps them as written) or in a
// chapter (which the HTML parser reads as HTML, without a DTD).
func TestEntities(t *testing.T) {
	inOPF, inChapter := entityBooks(t)
	doc := mustRun(t, inOPF)
	if doc.Title != "&lol9;&xxe;" || strings.Contains(doc.Text, "lollol") || strings.Contains(doc.Text, "root:") {
		t.Errorf("title %q, text %q", doc.Title, doc.Text)
	}
	doc = mustRun(t, inChapter)
	if len(doc.Text) > 4096 || strings.Contains(doc.Text, "lollol") || strings.Contains(doc.Text, "root:") || !strings.Contains(doc.Text, "Safe.") {
		t.Errorf("text %q", doc.Text)
	}
}

// TestEncryption: chapters encrypted with DRM make the book ErrEncrypted;
// obfuscated fonts (not DRM) do not.
func TestEncryption(t *testing.T) {
	if _, err := run(t, drmBook(t), extract.DefaultLimits()); !errors.Is(err, extract.ErrEncrypted) || !strings.Contains(err.Error(), "c1.xhtml") {
		t.Errorf("DRM: %v", err)
	}
	b := newBook(`<p>Readable.</p>`)
	b["OEBPS/fonts/a.otf"] = "\x01\x02obfuscated"
	b["META-INF/encryption.xml"] = encryptionXML("http://www.idpf.org/2008/embedding", "OEBPS/fonts/a.otf")
	doc := mustRun(t, b.zip(t))
	if !strings.Contains(doc.Text, "Readable.") {
		t.Errorf("text %q", doc.Text)
	}
	// AES on a picture only: the text is readable.
	b["META-INF/encryption.xml"] = encryptionXML("http://www.w3.org/2001/04/xmlenc#aes256-cbc", "OEBPS/cover.jpg")
	mustRun(t, b.zip(t))
}

// TestBombs: the bombs fail fast as too large, and say which limit
// stopped them: MaxUncompressed (here 16 MB), or the ratio for an entry
// within it that expands more than maxRatio times, or the size it
// declared for one that lies about it.
func TestBombs(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 16 << 20
	prose := "<p>The harbour master counted the crates.</p>\n" // expands 150 times at BestSpeed
	for _, tt := range []struct {
		name, want string
		data       []byte
	}{
		{"by size", "MaxUncompressed", bombBook(t, 20<<20, prose, flate.BestSpeed)},
		{"by ratio", "zip bomb", bombBook(t, 12<<20, "<div>", flate.DefaultCompression)},
		{"lying about its size", "declared", lyingBook(t, 50<<20, 100)},
		{"lying under the ratio floor", "declared", lyingBook(t, 50<<20, 1<<20-10)},
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

// TestCancelledMidway: a context cancelled while chapters are read ends
// the extraction soon after, with ErrTimeout.
func TestCancelledMidway(t *testing.T) {
	data := bigBook(400, 20<<10).zip(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := Extractor{}.Extract(ctx, data, "big.epub", extract.DefaultLimits())
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
	_, err := Extractor{}.Extract(context.Background(), newBook(`<p>x</p>`).zip(t), "slow.epub", lim)
	if !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
}

func TestSniff(t *testing.T) {
	if !Sniff(fixture(t, "harbour-epub3.epub")) || !Sniff(newBook(`<p>x</p>`).zip(t)) {
		t.Error("an EPUB is not sniffed as one")
	}
	noContainer := newBook(`<p>x</p>`)
	delete(noContainer, containerPart)
	if !Sniff(noContainer.zip(t)) {
		t.Error("the mimetype entry alone does not make an EPUB")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("mimetype")
	io.WriteString(w, "application/vnd.oasis.opendocument.text")
	zw.Create("content.xml")
	zw.Close()
	if Sniff(buf.Bytes()) || Sniff([]byte("PK\x03\x04junk")) || Sniff([]byte("<html>")) {
		t.Error("an ODT, junk or HTML sniffed as an EPUB")
	}
}
