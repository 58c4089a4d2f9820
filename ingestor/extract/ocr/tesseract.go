// Package ocr reads text from pictures with the Tesseract command line
// (Debian's tesseract-ocr and its language packages), one process per
// picture: no cgo, and a picture that crashes Tesseract costs one process.
package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // headers are checked before Tesseract decodes the pixels
	_ "image/png"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/image/tiff" // also registered, for image.Decode of a TIFF

	"github.com/strata-kb/strata/ingestor/extract"
)

// Config says how to run Tesseract. Zero fields take the defaults.
type Config struct {
	// Binary is the tesseract command, a name searched in PATH or a path;
	// default "tesseract".
	Binary string
	// Languages are Tesseract's language codes joined by "+" ("eng+deu"),
	// each needing its traineddata (Debian: tesseract-ocr-<code>); default "eng".
	Languages string
	// PSM is Tesseract's page segmentation mode, 1-13; default 3 (a whole
	// page, laid out automatically).
	PSM int
	// DPI is the resolution to assume for a picture that does not record
	// one (Tesseract otherwise estimates it); 0 leaves it to Tesseract.
	DPI int
}

// Tesseract recognizes text with the tesseract command. It is safe for
// concurrent use: each call runs its own process.
type Tesseract struct {
	bin   string // the binary's path, resolved once
	langs string
	psm   int
	dpi   int
}

const (
	// maxPixels bounds the pictures handed to Tesseract: it holds a picture
	// at 4 bytes a pixel several times over. 40 megapixels is an A3 page at
	// 400 dpi.
	maxPixels = 40 << 20
	// maxTSVBytes bounds Tesseract's output: a page of text is tens of KiB
	// of TSV; a picture of noise can make megabytes of one-letter words.
	maxTSVBytes = 32 << 20
	// stderrBytes is how much of Tesseract's stderr an error quotes.
	stderrBytes = 512
	// listTimeout bounds tesseract --list-langs in New.
	listTimeout = 30 * time.Second
)

var langCode = regexp.MustCompile(`^[A-Za-z0-9_]+(/[A-Za-z0-9_]+)?$`)

// New checks that the binary runs and has every language's data, and
// returns a Tesseract; what is missing is an error wrapping
// extract.ErrNoOCR that names the package to install.
func New(cfg Config) (*Tesseract, error) {
	t := &Tesseract{bin: cfg.Binary, langs: cfg.Languages, psm: cfg.PSM, dpi: cfg.DPI}
	if t.bin == "" {
		t.bin = "tesseract"
	}
	if t.langs == "" {
		t.langs = "eng"
	}
	if t.psm == 0 {
		t.psm = 3
	}
	if t.psm < 1 || t.psm > 13 {
		return nil, fmt.Errorf("ocr: page segmentation mode %d, want 1 to 13", t.psm)
	}
	if t.dpi != 0 && (t.dpi < 70 || t.dpi > 2400) {
		return nil, fmt.Errorf("ocr: %d dpi, want 70 to 2400 (or 0 to let Tesseract estimate)", t.dpi)
	}
	langs := strings.Split(t.langs, "+")
	for _, l := range langs {
		if !langCode.MatchString(l) {
			return nil, fmt.Errorf("ocr: language %q is not a Tesseract language code (eng, deu, chi_sim, script/Latin)", l)
		}
	}
	path, err := exec.LookPath(t.bin)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found in PATH: install tesseract-ocr (apt-get install tesseract-ocr)", extract.ErrNoOCR, t.bin)
	}
	t.bin = path
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, t.bin, "--list-langs").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: %s --list-langs: %v: %s", extract.ErrNoOCR, t.bin, err, lastLine(string(out), stderrBytes))
	}
	have := installed(string(out))
	for _, l := range langs {
		if !have[l] {
			return nil, fmt.Errorf("%w: language %s not installed: install %s", extract.ErrNoOCR, l, debianPackage(l))
		}
	}
	return t, nil
}

// installed reads tesseract --list-langs: a line naming the data
// directory, then one language a line.
func installed(out string) map[string]bool {
	have := map[string]bool{}
	for i, line := range strings.Split(out, "\n") {
		if l := strings.TrimSpace(line); i > 0 && l != "" {
			have[l] = true
		}
	}
	return have
}

// debianPackage names the Debian package holding a language's data:
// tesseract-ocr-chi-sim for chi_sim. A script's package is named by its
// ISO 15924 code (script/Latin: tesseract-ocr-script-latn).
func debianPackage(lang string) string {
	if s, ok := strings.CutPrefix(lang, "script/"); ok {
		return "the tesseract-ocr-script-* package of " + s
	}
	return "tesseract-ocr-" + strings.ReplaceAll(strings.ToLower(lang), "_", "-")
}

// Languages is the "+"-joined language list Tesseract runs with.
func (t *Tesseract) Languages() string { return t.langs }

// Recognize reads the paragraphs of one picture (PNG, JPEG or TIFF; a
// multi-page TIFF is read whole) in reading order. The picture goes to
// Tesseract on stdin; the process is killed when ctx ends.
func (t *Tesseract) Recognize(ctx context.Context, img []byte) ([]extract.OCRBlock, error) {
	cfg, format, err := decodeConfig(img)
	if err != nil {
		return nil, fmt.Errorf("%w: not a PNG, JPEG or TIFF picture: %v", extract.ErrCorrupt, err)
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return nil, fmt.Errorf("%w: %s picture of %dx%d pixels, over the OCR limit of %d megapixels", extract.ErrTooLarge, format, cfg.Width, cfg.Height, maxPixels>>20)
	}
	args := []string{"stdin", "stdout", "-l", t.langs, "--psm", strconv.Itoa(t.psm)}
	if t.dpi > 0 {
		args = append(args, "--dpi", strconv.Itoa(t.dpi))
	}
	cmd := exec.CommandContext(ctx, t.bin, append(args, "tsv")...)
	// Tesseract's OpenMP threads cost more than they gain on a page
	// (Tesseract's own advice); the ingestor reads files side by side.
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdin = bytes.NewReader(img)
	stdout := &capped{max: maxTSVBytes}
	stderr := &tail{max: stderrBytes}
	cmd.Stdout, cmd.Stderr = struct{ io.Writer }{stdout}, stderr // hide bytes.Buffer.ReadFrom, which would bypass the cap
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: tesseract: %v", extract.ErrTimeout, context.Cause(ctx))
	case stdout.over:
		return nil, fmt.Errorf("%w: tesseract printed over %d bytes", extract.ErrTooLarge, maxTSVBytes)
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s is gone: install tesseract-ocr: %v", extract.ErrNoOCR, t.bin, err)
	case err != nil && strings.Contains(stderr.String(), "Failed loading language"):
		return nil, fmt.Errorf("%w: tesseract: language data for %s is gone: %s", extract.ErrNoOCR, t.langs, lastLine(stderr.String(), stderrBytes))
	case err != nil:
		return nil, fmt.Errorf("%w: tesseract: %v: %s", extract.ErrCorrupt, err, lastLine(stderr.String(), stderrBytes))
	}
	return ParseTSV(stdout.Bytes())
}

// capped is a buffer that stops growing at max bytes and remembers that it did.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(b []byte) (int, error) {
	if room := c.max - c.Len(); len(b) > room {
		c.over = true
		c.Buffer.Write(b[:max(room, 0)])
		return 0, errors.New("output limit reached")
	}
	return c.Buffer.Write(b)
}

// tail keeps the last max bytes written: Tesseract's last words say why it
// failed, after any number of warnings.
type tail struct {
	buf []byte
	max int
}

func (t *tail) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) String() string { return string(t.buf[max(0, len(t.buf)-t.max):]) }

// lastLine is the last non-empty line of s, at most n bytes, valid UTF-8.
func lastLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.ToValidUTF8(extract.Truncate(s, n), "?")
}

// Missing stands for OCR that is on but cannot run (New failed with
// extract.ErrNoOCR): every picture fails with that error, so each file
// read says what to install, where OCR off would say only that it is off.
type Missing struct{ Err error }

// Recognize fails with m.Err.
func (m Missing) Recognize(context.Context, []byte) ([]extract.OCRBlock, error) { return nil, m.Err }

// decodeConfig reads a picture's size. A TIFF's is read in place:
// image.DecodeConfig hands the TIFF decoder a buffered reader, which it
// copies whole first (an 8 MB page twice over, each page of a scan).
func decodeConfig(img []byte) (image.Config, string, error) {
	if bytes.HasPrefix(img, []byte("II*\x00")) || bytes.HasPrefix(img, []byte("MM\x00*")) {
		cfg, err := tiff.DecodeConfig(bytes.NewReader(img))
		return cfg, "tiff", err
	}
	return image.DecodeConfig(bytes.NewReader(img))
}
