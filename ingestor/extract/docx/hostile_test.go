package docx

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

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// bombDocx has a document.xml declaring (truthfully) size bytes of
// zeros, written streaming so the test never holds them in memory.
func bombDocx(tb testing.TB, size int64) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed) // 300 MB in well under a second
	})
	w, err := zw.Create("word/document.xml")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.CopyN(w, zeros{}, size); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// lyingDocxs returns, for each declared size, a docx whose document.xml
// holds about actual bytes of valid XML (so the parser keeps reading)
// but whose header declares only that size, written with CreateRaw.
func lyingDocxs(tb testing.TB, actual int, declared ...uint64) [][]byte {
	tb.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	crc := crc32.NewIEEE()
	out := io.MultiWriter(fw, crc)
	io.WriteString(out, docOpen+para("", "hello"))
	empty := strings.Repeat("<w:p/>", 1<<14)
	for n := 0; n < actual; n += len(empty) {
		io.WriteString(out, empty)
	}
	io.WriteString(out, docClose)
	fw.Close()

	var docs [][]byte
	for _, d := range declared {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{
			Name:               "word/document.xml",
			Method:             zip.Deflate,
			CRC32:              crc.Sum32(),
			CompressedSize64:   uint64(comp.Len()),
			UncompressedSize64: d,
		})
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(comp.Bytes())
		zw.Close()
		docs = append(docs, buf.Bytes())
	}
	return docs
}

// countdownCtx reports cancellation after Err has been called n times,
// to test that long parses check the context as they go.
type countdownCtx struct {
	context.Context
	n int
}

func (c *countdownCtx) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

func TestHostile(t *testing.T) {
	good := docx(t, para("", "hello"))
	noDoc := parts(t, "")
	delete(noDoc, "word/document.xml")
	malformed := parts(t, "")
	malformed["word/document.xml"] = []byte(docOpen + `<w:p><w:r><w:t>open</w:r></w:p>`)
	badEntity := parts(t, "")
	badEntity["word/document.xml"] = []byte(docOpen + `<w:p><w:r><w:t>&bogus;</w:t></w:r></w:p>` + docClose)
	deep := parts(t, strings.Repeat("<w:tbl><w:tr><w:tc>", 1000)+strings.Repeat("</w:tc></w:tr></w:tbl>", 1000))
	bigText := parts(t, para("", strings.Repeat("x", 6000)))
	manyTables := parts(t, strings.Repeat(table([]string{"a", "b"}), 1000))

	corruptDeflate := docx(t, para("", strings.Repeat("compressible text ", 500)))
	if i := bytes.Index(corruptDeflate, []byte("word/document.xml")); i >= 0 {
		for j := i + 40; j < i+80 && j < len(corruptDeflate); j++ {
			corruptDeflate[j] ^= 0x55
		}
	}

	small := extract.DefaultLimits()
	small.MaxUncompressed = 10 << 20
	small.MaxTextBytes = 5000

	many := zipParts(t, parts(t, strings.Repeat(para("", "x"), 2000)))

	tests := []struct {
		name string
		data []byte
		ctx  context.Context
		want error
	}{
		{"empty input", nil, nil, extract.ErrCorrupt},
		{"not a zip", []byte("this is plain text, not a document"), nil, extract.ErrCorrupt},
		{"truncated zip", good[:len(good)/2], nil, extract.ErrCorrupt},
		{"zip magic then junk", []byte("PK\x03\x04" + strings.Repeat("\x00", 100)), nil, extract.ErrCorrupt},
		{"no document.xml", zipParts(t, noDoc), nil, extract.ErrCorrupt},
		{"malformed XML", zipParts(t, malformed), nil, extract.ErrCorrupt},
		{"undefined entity", zipParts(t, badEntity), nil, extract.ErrCorrupt},
		{"corrupt deflate data", corruptDeflate, nil, extract.ErrCorrupt},
		{"nesting too deep", zipParts(t, deep), nil, extract.ErrCorrupt},
		{"zip bomb", bombDocx(t, 300<<20), nil, extract.ErrTooLarge},
		{"text over MaxTextBytes", zipParts(t, bigText), nil, extract.ErrTooLarge},
		{"table text over MaxTextBytes", zipParts(t, manyTables), nil, extract.ErrTooLarge},
		{"too many entries", manyEntries(t, maxEntries+1), nil, extract.ErrTooLarge},
		{"OLE encrypted", oleFile("EncryptionInfo"), nil, extract.ErrEncrypted},
		{"OLE legacy doc", oleFile("WordDocument"), nil, extract.ErrUnsupported},
		{"zip-encrypted entry", encryptedEntry(t), nil, extract.ErrEncrypted},
		{"cancelled context", good, cancelled(), extract.ErrTimeout},
		{"cancelled mid-parse", many, &countdownCtx{context.Background(), 5}, extract.ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			start := time.Now()
			doc, err := Extractor{}.Extract(ctx, tt.data, "hostile.docx", small)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v (doc %+v)", err, tt.want, doc)
			}
			if !strings.HasPrefix(err.Error(), "docx hostile.docx: ") {
				t.Errorf("error lacks context: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			t.Log(err)
		})
	}
}

// TestLyingSizes declares small sizes for a large entry: the bytes
// actually produced must be capped and reported as too large, quickly.
func TestLyingSizes(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 10 << 20
	declared := []uint64{100, 1<<20 + 1000}
	for i, data := range lyingDocxs(t, 50<<20, declared...) {
		start := time.Now()
		_, err := Extractor{}.Extract(context.Background(), data, "lying.docx", lim)
		if !errors.Is(err, extract.ErrTooLarge) {
			t.Fatalf("declared %d: err = %v", declared[i], err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("declared %d: took %v", declared[i], d)
		}
		t.Logf("declared %d: %v", declared[i], err)
	}
}

// TestCapReader checks the size cap on its own, with a source that
// produces more than it should.
func TestCapReader(t *testing.T) {
	cr := newCapReader(zeros{}, "word/document.xml", 1000)
	n, err := io.Copy(io.Discard, cr)
	if !errors.Is(err, extract.ErrTooLarge) || n > 1001 {
		t.Fatalf("read %d bytes, err %v", n, err)
	}
	cr = newCapReader(strings.NewReader("exactly ten"), "x", 11)
	if b, err := io.ReadAll(cr); err != nil || string(b) != "exactly ten" {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// oleFile is an OLE header followed by a directory entry name in
// UTF-16LE, as in a password-protected OOXML file.
func oleFile(stream string) []byte {
	data := append([]byte(oleMagic), make([]byte, 504)...)
	data = append(data, utf16le(stream)...)
	return append(data, make([]byte, 64)...)
}

func manyEntries(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		name := "word/document.xml"
		if i > 0 {
			name = "x/" + strings.Repeat("a", i%7) + string(rune('a'+i%26)) + itoa(i)
		}
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store}); err != nil {
			tb.Fatal(err)
		}
	}
	zw.Close()
	return buf.Bytes()
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// encryptedEntry marks document.xml with the zip encryption flag.
func encryptedEntry(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store, Flags: 0x1})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write([]byte("\x00garbage"))
	zw.Close()
	return buf.Bytes()
}

// TestTimeout checks lim.Timeout itself: an already-passed deadline
// stops the parse at the first check.
func TestTimeout(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.Timeout = time.Nanosecond
	data := zipParts(t, parts(t, strings.Repeat(para("", "x"), 2000)))
	_, err := Extractor{}.Extract(context.Background(), data, "slow.docx", lim)
	if !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
}
