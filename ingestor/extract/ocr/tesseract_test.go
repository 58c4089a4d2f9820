package ocr

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// tesseract is the real OCR reader. The test task installs tesseract-ocr:
// its absence fails the test unless STRATA_NO_OCR=1 says that this machine
// has none on purpose.
func tesseract(t *testing.T) *Tesseract {
	t.Helper()
	tess, err := New(Config{})
	if err != nil {
		if os.Getenv("STRATA_NO_OCR") == "1" {
			t.Skipf("STRATA_NO_OCR=1: OCR is not tested on this machine (%v)", err)
		}
		t.Fatalf("%v (set STRATA_NO_OCR=1 to skip the tests that need tesseract)", err)
	}
	return tess
}

func TestRecognize(t *testing.T) {
	if os.Getenv("STRATA_OCR_TESTS") != "all" {
		t.Skip("go tool task test OCRs two pages, in the end-to-end TestOfficeFilesAndScans; go tool task test-ocr (STRATA_OCR_TESTS=all) reads this one too")
	}
	tess := tesseract(t)
	img, err := os.ReadFile("testdata/page.png")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := tess.Recognize(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || !strings.Contains(blocks[0].Text, "zebracorn ledger") || !strings.Contains(blocks[1].Text, "second paragraph") {
		t.Fatalf("blocks %+v", blocks)
	}
	for _, b := range blocks {
		if b.Confidence < 80 || b.Confidence > 100 || strings.Contains(b.Text, "\n") {
			t.Errorf("block %+v", b)
		}
	}
}

func TestRecognizeRefusesNonPictures(t *testing.T) {
	tess := &Tesseract{bin: "/nonexistent/tesseract", langs: "eng", psm: 3}
	huge := pngHeader(10000, 10000) // only the header is read
	for name, c := range map[string]struct {
		img  []byte
		want error
	}{
		"text":  {[]byte("hello"), extract.ErrCorrupt},
		"empty": {nil, extract.ErrCorrupt},
		"huge":  {huge, extract.ErrTooLarge},
	} {
		if _, err := tess.Recognize(t.Context(), c.img); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// pngHeader is the start of a PNG of w x h RGB pixels: its signature and header chunk.
func pngHeader(w, h uint32) []byte {
	chunk := binary.BigEndian.AppendUint32([]byte("IHDR"), w)
	chunk = binary.BigEndian.AppendUint32(chunk, h)
	chunk = append(chunk, 8, 2, 0, 0, 0)
	out := binary.BigEndian.AppendUint32([]byte("\x89PNG\r\n\x1a\n"), 13)
	out = append(out, chunk...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk))
}

// fake writes a stand-in tesseract: a shell script that lists eng and osd
// and otherwise runs body.
func fake(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tesseract")
	script := "#!/bin/sh\nif [ \"$1\" = --list-langs ]; then printf 'List of available languages in \"/x/\" (2):\\neng\\nosd\\n'; exit 0; fi\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewSaysWhatIsMissing(t *testing.T) {
	bin := fake(t, "exit 0")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Binary: "no-such-tesseract"}, "no-such-tesseract not found in PATH: install tesseract-ocr"},
		{Config{Binary: bin, Languages: "eng+deu"}, "language deu not installed: install tesseract-ocr-deu"},
		{Config{Binary: bin, Languages: "chi_sim"}, "install tesseract-ocr-chi-sim"},
		{Config{Binary: bin, Languages: "script/Latin"}, "install the tesseract-ocr-script-* package of Latin"},
	} {
		_, err := New(c.cfg)
		if !errors.Is(err, extract.ErrNoOCR) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrNoOCR saying %q", c.cfg, err, c.want)
		}
	}
	for _, cfg := range []Config{{Binary: bin, Languages: "-l eng"}, {Binary: bin, PSM: 14}, {Binary: bin, DPI: 10}} {
		if _, err := New(cfg); err == nil || errors.Is(err, extract.ErrNoOCR) {
			t.Errorf("%+v: %v, want a configuration error", cfg, err)
		}
	}
	tess, err := New(Config{Binary: bin, Languages: "eng+osd"})
	if err != nil || tess.Languages() != "eng+osd" || tess.psm != 3 {
		t.Fatalf("%+v, %v", tess, err)
	}
}

func smallPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRecognizeArguments: the picture arrives on stdin, with the settings
// and one OpenMP thread.
func TestRecognizeArguments(t *testing.T) {
	dir := t.TempDir()
	tess, err := New(Config{Binary: fake(t, `echo "$@" > `+dir+`/args; echo "$OMP_THREAD_LIMIT" > `+dir+`/omp; cat > `+dir+`/stdin
printf 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n5\t1\t1\t1\t1\t1\t0\t0\t1\t1\t88\tfaked\n'`), DPI: 300, PSM: 6})
	if err != nil {
		t.Fatal(err)
	}
	img := smallPNG(t)
	blocks, err := tess.Recognize(t.Context(), img)
	if err != nil || len(blocks) != 1 || blocks[0] != (extract.OCRBlock{Text: "faked", Confidence: 88}) {
		t.Fatalf("%+v, %v", blocks, err)
	}
	for file, want := range map[string]string{"args": "stdin stdout -l eng --psm 6 --dpi 300 tsv\n", "omp": "1\n", "stdin": string(img)} {
		if got, _ := os.ReadFile(filepath.Join(dir, file)); string(got) != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
}

func TestRecognizeFailures(t *testing.T) {
	img := smallPNG(t)
	for name, c := range map[string]struct {
		body string
		want error
		says string
	}{
		// A failure quotes the last line of stderr, not all of it.
		"fails":        {`i=0; while [ $i -lt 2000 ]; do echo "Warning: noise $i" >&2; i=$((i+1)); done; echo "Error in pixReadMem: Unknown format" >&2; exit 1`, extract.ErrCorrupt, "Unknown format"},
		"no language":  {`echo "Failed loading language 'eng'" >&2; echo "Tesseract couldn't load any languages!" >&2; exit 1`, extract.ErrNoOCR, "eng"},
		"floods":       {`head -c 40000000 /dev/zero`, extract.ErrTooLarge, "32"},
		"prints words": {`echo "not tsv"`, extract.ErrCorrupt, "header"},
	} {
		tess, err := New(Config{Binary: fake(t, c.body)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tess.Recognize(t.Context(), img)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || len(err.Error()) > 1024 {
			t.Errorf("%s: %v; want %v saying %q, at most 1 KiB", name, err, c.want, c.says)
		}
	}
	tess, err := New(Config{Binary: fake(t, "exit 0")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(tess.bin); err != nil {
		t.Fatal(err)
	}
	if _, err := tess.Recognize(t.Context(), img); !errors.Is(err, extract.ErrNoOCR) {
		t.Errorf("binary removed: %v, want ErrNoOCR", err)
	}
}

// TestRecognizeKilledOnCancel: a tesseract that hangs is killed when the
// context ends.
func TestRecognizeKilledOnCancel(t *testing.T) {
	tess, err := New(Config{Binary: fake(t, "exec sleep 60")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = tess.Recognize(ctx, smallPNG(t))
	if !errors.Is(err, extract.ErrTimeout) || time.Since(start) > 5*time.Second {
		t.Fatalf("%v after %v, want ErrTimeout at once", err, time.Since(start))
	}
}
