package slides

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// zipStream writes a zip whose entry name holds size bytes of fill (after
// prefix), streaming, so the test never holds the expanded bytes; the
// other parts are written as they are.
func zipStream(tb testing.TB, parts map[string]string, name, prefix string, fill byte, size int64) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed) // hundreds of MB in well under a second
	})
	for n, p := range parts {
		if n == name {
			continue
		}
		w, _ := zw.Create(n)
		io.WriteString(w, p)
	}
	w, err := zw.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	io.WriteString(w, prefix)
	if _, err := io.CopyN(w, &filler{fill}, size); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// filler is an endless reader of one byte.
type filler struct{ b byte }

func (f *filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = f.b
	}
	return len(p), nil
}

// lying is a zip whose entry name holds the parts' XML followed by about
// actual bytes of valid XML, but whose header declares only declared
// bytes (written with CreateRaw).
func lying(tb testing.TB, parts map[string]string, name, open, repeat, close string, actual int, declared uint64) []byte {
	tb.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	crc := crc32.NewIEEE()
	out := io.MultiWriter(fw, crc)
	io.WriteString(out, open)
	chunk := strings.Repeat(repeat, 1<<12)
	for n := 0; n < actual; n += len(chunk) {
		io.WriteString(out, chunk)
	}
	io.WriteString(out, close)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, p := range parts {
		if n != name {
			w, _ := zw.Create(n)
			io.WriteString(w, p)
		}
	}
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return buf.Bytes()
}

// laughs is the billion laughs: entities that would expand to 3 GB.
const laughs = `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
	`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">` +
	`<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>`

// xxe declares an external entity naming a file on this machine.
const xxe = `<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>`

// withDoctype puts a DOCTYPE after the XML declaration of part, and
// turns the escaped entity references the builders wrote (&amp;lol9;)
// into references.
func withDoctype(part, doctype string) string {
	part = strings.ReplaceAll(part, "&amp;", "&")
	i := strings.Index(part, "?>") + 2
	return part[:i] + doctype + part[i:]
}

// hostilePPTX are PPTX files built to hurt, with the error each must fail
// with (nil: a valid document or a classified error).
func hostilePPTX(tb testing.TB) []struct {
	name string
	data []byte
	want error
} {
	one := deck{slides: []string{slideXML("", title("Hostile"), sp("-", 0, 1, "body"))}}
	parts := one.parts()
	withSlide := func(s string) []byte {
		p := one.parts()
		p["ppt/slides/slide1.xml"] = s
		return zipParts(tb, p)
	}
	broken := one.parts()
	broken["ppt/presentation.xml"] = `<p:presentation ` + pptxNS + `><p:sldIdLst><p:sldId r:id="rId11">`
	deep := slideXML("", strings.Repeat(grp(0, 0), 0)+strings.Repeat(`<p:grpSp>`, 3000)+strings.Repeat(`</p:grpSp>`, 3000))
	many := zipStreamEntries(tb, maxEntries+1)
	return []struct {
		name string
		data []byte
		want error
	}{
		{"bomb-size.pptx", zipStream(tb, parts, "ppt/slides/slide1.xml", "", 0, 300<<20), extract.ErrTooLarge},
		{"bomb-ratio.pptx", zipStream(tb, parts, "ppt/slides/slide1.xml", slideXML("")[:60], ' ', 64<<20), extract.ErrTooLarge},
		{"lying.pptx", lying(tb, parts, "ppt/slides/slide1.xml", slideXML("")[:200], sp("-", 0, 1, "x"), "",
			40<<20, 2000), extract.ErrTooLarge},
		{"laughs.pptx", withSlide(withDoctype(slideXML("", title("&lol9;")), laughs)), nil},
		{"xxe.pptx", withSlide(withDoctype(slideXML("", title("&xxe;")), xxe)), nil},
		{"deep.pptx", withSlide(deep), nil},
		{"corrupt-slide.pptx", withSlide(slideXML("", title("Cut"))[:300]), nil},
		{"corrupt-presentation.pptx", zipParts(tb, broken), extract.ErrCorrupt},
		{"no-presentation.pptx", zipParts(tb, map[string]string{"ppt/slides/slide1.xml": slideXML("")}), extract.ErrCorrupt},
		{"entries.pptx", many, extract.ErrTooLarge},
		{"encrypted.pptx", oleFile("EncryptionInfo"), extract.ErrEncrypted},
		{"legacy.ppt", oleFile("PowerPoint Document"), extract.ErrUnsupported},
		{"zip-encrypted.pptx", encryptedEntry(tb, parts, "ppt/presentation.xml"), extract.ErrEncrypted},
		{"truncated.pptx", one.zip(tb)[:200], extract.ErrCorrupt},
	}
}

// hostileODP are ODP files built to hurt.
func hostileODP(tb testing.TB) []struct {
	name string
	data []byte
	want error
} {
	content := odpContent("", odpPage("", frame("title", 1, 1, "Hostile")))
	parts := map[string]string{"mimetype": odpMIME, "content.xml": content}
	open := content[:strings.Index(content, "<office:presentation>")+len("<office:presentation>")]
	return []struct {
		name string
		data []byte
		want error
	}{
		{"bomb-size.odp", zipStream(tb, parts, "content.xml", "", 0, 300<<20), extract.ErrTooLarge},
		{"bomb-ratio.odp", zipStream(tb, parts, "content.xml", open, ' ', 64<<20), extract.ErrTooLarge},
		{"lying.odp", lying(tb, parts, "content.xml", open, odpPage(""), "", 40<<20, 2000), extract.ErrTooLarge},
		{"laughs.odp", odp(tb, withDoctype(odpContent("", odpPage("", frame("title", 1, 1, "&lol9;"))), laughs), nil), nil},
		{"xxe.odp", odp(tb, withDoctype(odpContent("", odpPage("", frame("title", 1, 1, "&xxe;"))), xxe), nil), nil},
		{"laughs-first.odp", odp(tb, withDoctype(odpContent("&lol9;"), laughs), nil), extract.ErrCorrupt},
		{"laughs-late.odp", odp(tb, withDoctype(odpContent("", odpPage("", frame("title", 1, 1, "Kept")),
			odpPage("", frame("", 1, 1, "&lol9;"))), laughs), nil), nil},
		{"deep.odp", odp(tb, odpContent("", odpPage("", strings.Repeat("<draw:g>", 3000)+strings.Repeat("</draw:g>", 3000))), nil), nil},
		{"no-content.odp", zipParts(tb, map[string]string{"mimetype": odpMIME}), extract.ErrCorrupt},
		{"zip-encrypted.odp", encryptedEntry(tb, parts, "content.xml"), extract.ErrEncrypted},
	}
}

// TestHostile: each hostile file fails as it must, or gives a document
// that holds none of what an entity would have expanded to.
func TestHostile(t *testing.T) {
	all := append(hostilePPTX(t), hostileODP(t)...)
	for _, h := range all {
		t.Run(h.name, func(t *testing.T) {
			start := time.Now()
			doc, err := run(t, h.name, h.data, extract.DefaultLimits())
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			switch {
			case h.want != nil && !errors.Is(err, h.want):
				t.Fatalf("got %v, want %v", err, h.want)
			case err == nil && (strings.Contains(doc.Text, "lollol") || strings.Contains(doc.Text, "root:")):
				t.Errorf("an entity was expanded: %q", doc.Text)
			case err != nil && h.want == nil && !errors.Is(err, extract.ErrCorrupt):
				t.Errorf("got %v, want a document or ErrCorrupt", err)
			case err == nil && (strings.Contains(h.name, "laughs") || strings.Contains(h.name, "xxe")) &&
				!slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, "invalid character entity") }):
				t.Errorf("no warning of the entity: %q", doc.Warnings)
			}
		})
	}
}

// TestBrokenSlide: a slide whose part breaks off keeps what was read
// before, with a warning, and the slides after it are read.
func TestBrokenSlide(t *testing.T) {
	d := deck{slides: []string{
		slideXML("", title("First"), sp("-", 0, 1, "kept text"), sp("-", 0, 2, "more"))[:900],
		slideXML("", title("Second")),
	}}
	doc := mustRun(t, "broken.pptx", d.zip(t))
	if h := headings(doc); len(h) != 2 || h[0] != "1 heading1: First" || h[1] != "2 heading1: Second" {
		t.Errorf("headings %q", h)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "slide 1 read in part") {
		t.Errorf("warnings %q", doc.Warnings)
	}
	// The second page's paragraph is never closed.
	o := odp(t, odpContent("", odpPage("", frame("title", 1, 1, "Whole")), odpPage("", frame("title", 1, 1, "Cut")+`<text:p>`)), nil)
	doc = mustRun(t, "broken.odp", o)
	if h := headings(doc); len(h) != 2 || h[0] != "1 heading1: Whole" || h[1] != "2 heading1: Cut" {
		t.Errorf("odp headings %q", h)
	}
}

// TestManySlides: ten thousand empty slides read fast, in time linear
// in their number: ten times the slides take about ten times as long,
// where work quadratic in the slides would take a hundred times (the
// bound, 50, leaves room for a loaded machine; each time is the best of
// five).
func TestManySlides(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxPages = 20000
	for _, format := range []string{"pptx", "odp"} {
		t.Run(format, func(t *testing.T) {
			took := map[int]time.Duration{}
			for _, n := range []int{1000, 10000} {
				name, data := emptySlides(t, format, n)
				best := time.Duration(1 << 62)
				for range 5 {
					runtime.GC() // the garbage of the last run is not this one's
					start := time.Now()
					doc, err := run(t, name, data, lim)
					best = min(best, time.Since(start))
					if err != nil {
						t.Fatal(err)
					}
					if doc.Pages != n || len(doc.Blocks) != n || line(doc, doc.Blocks[n-1]) != fmt.Sprintf("%d heading1: Slide %d", n, n) {
						t.Fatalf("%d slides: %d pages, %d blocks", n, doc.Pages, len(doc.Blocks))
					}
				}
				took[n] = best
			}
			t.Logf("1,000 slides in %v, 10,000 in %v", took[1000], took[10000])
			if took[10000] > 5*time.Second || took[10000] > 50*took[1000] {
				t.Errorf("10,000 slides took %v, 1,000 took %v: not linear", took[10000], took[1000])
			}
		})
	}
}

// emptySlides is a deck of n empty slides.
func emptySlides(tb testing.TB, format string, n int) (string, []byte) {
	if format == "odp" {
		return "empty.odp", odp(tb, odpContent("", strings.Repeat(odpPage(""), n)), nil)
	}
	d := deck{slides: make([]string, n)}
	for i := range d.slides {
		d.slides[i] = slideXML("")
	}
	return "empty.pptx", d.zip(tb)
}

// zipStreamEntries is a zip of n empty entries.
func zipStreamEntries(tb testing.TB, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprint(i), Method: zip.Store}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// oleFile is an OLE compound file whose directory names stream.
func oleFile(stream string) []byte {
	data := append([]byte(oleMagic), make([]byte, 504)...)
	return append(data, utf16le(stream)...)
}

// encryptedEntry is a zip of parts whose entry name is flagged encrypted.
func encryptedEntry(tb testing.TB, parts map[string]string, name string) []byte {
	data := zipParts(tb, parts)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		h := f.FileHeader
		if h.Name == name {
			h.Flags |= 0x1
		}
		w, err := zw.CreateRaw(&h)
		if err != nil {
			tb.Fatal(err)
		}
		r, _ := f.OpenRaw()
		io.Copy(w, r)
	}
	zw.Close()
	return buf.Bytes()
}
