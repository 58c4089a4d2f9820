// Package pdf extracts PDFs. The default extractor runs poppler's command-line
// tools as child processes, each under a time and address-space limit, chosen
// by measurement (see docs/pdf-extractors.md); UniPDF is used instead when a
// UniDoc license is configured, falling back to poppler when it fails.
package pdf

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"image"
	_ "image/jpeg" // register the decoder for embedded JPEGs
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Poppler extracts with pdfinfo, pdftotext, pdftohtml (outline) and pdfimages.
type Poppler struct {
	// BinDir holds the poppler tools; "" searches PATH.
	BinDir string
}

// Available reports whether the poppler tools can be run, naming what is missing.
func (p Poppler) Available() error {
	for _, tool := range []string{"pdfinfo", "pdftotext", "pdftohtml", "pdfimages"} {
		if _, err := exec.LookPath(p.tool(tool)); err != nil {
			return fmt.Errorf("%s not found: install poppler-utils (apt-get install poppler-utils poppler-data): %w", tool, err)
		}
	}
	return nil
}

func (p Poppler) tool(name string) string {
	if p.BinDir != "" {
		return filepath.Join(p.BinDir, name)
	}
	return name
}

// Info is what pdfinfo reports.
type Info struct {
	Pages int
	Title string
}

// Extract extracts text per page, headings from the outline, and embedded images.
func (p Poppler) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if !Sniff(data) {
		return nil, fmt.Errorf("pdf %s: %w: no %%PDF header", name, extract.ErrCorrupt)
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "strata-pdf-")
	if err != nil {
		return nil, fmt.Errorf("pdf %s: %w", name, err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return nil, fmt.Errorf("pdf %s: %w", name, err)
	}

	// Every tool reads the file on its own: they overlap, so a file costs
	// about one pdftotext (measured in BenchmarkPDF). pdftotext -htmlmeta
	// gives the title with the text, so pdfinfo runs only for a file longer
	// than lim.MaxPages (to say how long); the outline comes whole from
	// pdftohtml laying out one page only; pdfimages, which reads every page
	// again, runs only when the file has a picture worth keeping (imagescan.go).
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg             sync.WaitGroup
		outline        []OutlineItem
		images         []extract.Image
		outErr, imgErr error
	)
	if MayHaveOutline(data) {
		wg.Add(1)
		go func() { defer wg.Done(); outline, outErr = p.outline(ctx, file, lim) }()
	}
	if lim.MaxImages > 0 && HasPictures(data) {
		wg.Add(1)
		go func() { defer wg.Done(); images, imgErr = p.images(ctx, dir, file, lim.MaxPages, lim) }()
	}
	text, textErr := p.text(ctx, file, lim)
	if textErr != nil {
		stop() // the file is unreadable: the others need not finish
	}
	wg.Wait()
	if textErr != nil {
		return nil, fmt.Errorf("pdf %s: %w", name, textErr)
	}
	pages := len(text.Pages)
	total := pages
	if pages >= lim.MaxPages {
		// Only pdfinfo knows how many pages were left out.
		if info, err := p.info(ctx, file, lim); err == nil {
			total = max(info.Pages, pages)
		}
	}
	outline = slices.DeleteFunc(outline, func(o OutlineItem) bool { return o.Page > pages })
	// The outline and images are extras: failing them only costs structure.
	var warnings []string
	if outErr != nil {
		warnings = append(warnings, "outline not read: "+outErr.Error())
	}
	if imgErr != nil {
		warnings = append(warnings, "images not extracted: "+imgErr.Error())
	}
	doc := Assemble(text.Pages, outline, images, lim)
	doc.Pages = total
	doc.Title = text.Title
	doc.Warnings = append(warnings, doc.Warnings...)
	if total > pages {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("only the first %d of %d pages were extracted", pages, total))
	}
	return doc, nil
}

// Sniff reports whether data is a PDF: a %PDF- header in the first KiB (it
// may follow junk bytes), or, for files that lost their header, PDF object
// syntax with a catalog near the start (poppler reads those too).
func Sniff(data []byte) bool {
	if bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")) {
		return true
	}
	head := data[:min(len(data), 64<<10)]
	return bytes.Contains(head, []byte(" obj")) && bytes.Contains(head, []byte("endobj")) && bytes.Contains(head, []byte("/Type"))
}

// Text is what pdftotext -htmlmeta reports: the document's title and the
// text of each page it read.
type Text struct {
	Title string
	Pages []string
}

// text runs pdftotext -htmlmeta, which wraps the plain text (the same bytes,
// not escaped) in <pre> after a head with the document's title: one process
// instead of pdfinfo and pdftotext. Its errors say why a file is unreadable.
func (p Poppler) text(ctx context.Context, file string, lim extract.Limits) (Text, error) {
	out, err := p.run(ctx, lim, lim.MaxTextBytes+64<<10, "pdftotext", "-htmlmeta", "-enc", "UTF-8", "-f", "1", "-l", strconv.Itoa(max(lim.MaxPages, 1)), file, "-")
	if err != nil {
		return Text{}, classify(err)
	}
	return ParseHTMLMeta(out)
}

// ParseHTMLMeta splits pdftotext -htmlmeta output into the title and the
// page texts (pdftotext ends every page with a form feed).
func ParseHTMLMeta(out []byte) (Text, error) {
	head, rest, ok := bytes.Cut(out, []byte("</head>"))
	_, body, okPre := bytes.Cut(rest, []byte("<pre>\n"))
	end := bytes.LastIndex(body, []byte("</pre>"))
	if !ok || !okPre || end < 0 {
		return Text{}, fmt.Errorf("%w: pdftotext printed no page text", extract.ErrCorrupt)
	}
	body = body[:end]
	var t Text
	if _, title, ok := bytes.Cut(head, []byte("<title>")); ok {
		title, _, _ = bytes.Cut(title, []byte("</title>"))
		t.Title = strings.TrimSpace(html.UnescapeString(string(title)))
	}
	// A file poppler opens but lays out no page of (issue19484_1.pdf) has
	// no text, which is not an error.
	t.Pages = strings.Split(string(body), "\f")
	if last := len(t.Pages) - 1; strings.TrimSpace(t.Pages[last]) == "" {
		t.Pages = t.Pages[:last]
	}
	return t, nil
}

// classify says why poppler could not read a file: a password, the time
// limit, the output limit, or else a corrupt file (poppler's last word).
func classify(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, extract.ErrTimeout), errors.Is(err, extract.ErrTooLarge):
		return err
	case strings.Contains(msg, "password"):
		return fmt.Errorf("%w: %s", extract.ErrEncrypted, lastLine(msg))
	}
	return fmt.Errorf("%w: %s", extract.ErrCorrupt, lastLine(msg))
}

// info runs pdfinfo, for the page count of a file longer than lim.MaxPages.
func (p Poppler) info(ctx context.Context, file string, lim extract.Limits) (Info, error) {
	out, err := p.run(ctx, lim, 1<<20, "pdfinfo", file)
	if err != nil {
		return Info{}, classify(err)
	}
	var info Info
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Pages":
			info.Pages, _ = strconv.Atoi(v)
		case "Title":
			info.Title = v
		}
	}
	if info.Pages <= 0 {
		return Info{}, fmt.Errorf("%w: no pages", extract.ErrCorrupt)
	}
	return info, nil
}

// OutlineItem is a bookmark: a heading candidate on a page.
type OutlineItem struct {
	Title string
	Page  int
	Level int
}

type xmlOutline struct {
	Items    []xmlItem    `xml:"item"`
	Children []xmlOutline `xml:"outline"`
}

type xmlItem struct {
	Page  int    `xml:"page,attr"`
	Title string `xml:",chardata"`
}

// MayHaveOutline reports whether the file may have bookmarks: its catalog
// names /Outlines, or it has compressed object streams, where the catalog
// cannot be read without decompressing. A file with neither has none, and
// one process fewer to start.
func MayHaveOutline(data []byte) bool {
	return bytes.Contains(data, []byte("/Outlines")) || bytes.Contains(data, []byte("/ObjStm"))
}

// outline reads the PDF's bookmarks: pdftohtml -xml prints the whole outline
// (with every item's page) whatever page range it lays out, so it lays out one.
func (p Poppler) outline(ctx context.Context, file string, lim extract.Limits) ([]OutlineItem, error) {
	out, err := p.run(ctx, lim, lim.MaxTextBytes*4, "pdftohtml", "-xml", "-i", "-q", "-stdout", "-nodrm", "-f", "1", "-l", "1", file)
	if err != nil {
		return nil, err
	}
	i := bytes.Index(out, []byte("<outline>"))
	if i < 0 {
		return nil, nil
	}
	j := bytes.LastIndex(out, []byte("</outline>"))
	if j < i {
		return nil, nil
	}
	var root xmlOutline
	dec := xml.NewDecoder(bytes.NewReader(out[i : j+len("</outline>")]))
	dec.Strict = false
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("outline: %w", err)
	}
	var items []OutlineItem
	var walk func(o xmlOutline, level int)
	walk = func(o xmlOutline, level int) {
		if level > 6 {
			return
		}
		for _, it := range o.Items {
			if t := strings.TrimSpace(it.Title); t != "" && it.Page > 0 {
				items = append(items, OutlineItem{Title: t, Page: it.Page, Level: level})
			}
		}
		for _, c := range o.Children {
			walk(c, level+1)
		}
	}
	walk(root, 1)
	return items, nil
}

// images extracts embedded raster images page by page: JPEGs as they are,
// the others as PNM (pdfimages -j), which Strata encodes as PNG itself for
// the images it keeps.
func (p Poppler) images(ctx context.Context, dir, file string, pages int, lim extract.Limits) ([]extract.Image, error) {
	if lim.MaxImages <= 0 {
		return nil, nil
	}
	prefix := filepath.Join(dir, "img")
	if _, err := p.run(ctx, lim, 1<<20, "pdfimages", "-j", "-p", "-q", "-l", strconv.Itoa(max(pages, 1)), file, prefix); err != nil {
		return nil, err
	}
	names, err := filepath.Glob(prefix + "-*")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []extract.Image
	for _, n := range names {
		if len(out) >= lim.MaxImages || ctx.Err() != nil {
			break
		}
		img, ok := keepImage(n, lim)
		if !ok {
			continue
		}
		// pdfimages -p names files img-<page>-<n>.<ext>.
		parts := strings.Split(strings.TrimPrefix(filepath.Base(n), "img-"), "-")
		img.Page, _ = strconv.Atoi(parts[0])
		img.Name = fmt.Sprintf("page-%d-image-%d.%s", img.Page, len(out)+1, strings.TrimPrefix(img.MIME, "image/"))
		out = append(out, img)
	}
	return out, nil
}

// keepImage reads one file pdfimages wrote, if it is worth keeping: at least
// 32x32 (icons, masks and rules carry nothing), at most maxImagePixels, and
// under lim.MaxImageBytes as JPEG or PNG.
func keepImage(path string, lim extract.Limits) (extract.Image, bool) {
	st, err := os.Stat(path)
	if err != nil || st.Size() > 3*maxImagePixels+64 || (strings.HasSuffix(path, ".jpg") && st.Size() > lim.MaxImageBytes) {
		return extract.Image{}, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return extract.Image{}, false
	}
	if strings.HasSuffix(path, ".jpg") {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width < 32 || cfg.Height < 32 {
			return extract.Image{}, false
		}
		return extract.Image{MIME: "image/" + format, Data: data, Width: cfg.Width, Height: cfg.Height}, true
	}
	_, w, h, _, err := pnmHeader(data)
	if err != nil || w < 32 || h < 32 || w*h > maxImagePixels {
		return extract.Image{}, false
	}
	decoded, err := decodePNM(data)
	if err != nil {
		return extract.Image{}, false
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, decoded); err != nil || int64(buf.Len()) > lim.MaxImageBytes {
		return extract.Image{}, false
	}
	return extract.Image{MIME: "image/png", Data: buf.Bytes(), Width: w, Height: h}, true
}

// run runs a poppler tool under the time limit of ctx and the address-space
// limit of lim, keeping at most maxOut bytes of its output.
func (p Poppler) run(ctx context.Context, lim extract.Limits, maxOut int, tool string, args ...string) ([]byte, error) {
	path := p.tool(tool)
	var cmd *exec.Cmd
	if prlimit, err := exec.LookPath("prlimit"); err == nil && lim.MaxMemoryBytes > 0 {
		cmd = exec.CommandContext(ctx, prlimit, append([]string{"--as=" + strconv.FormatInt(lim.MaxMemoryBytes, 10), "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.WaitDelay = 2 * time.Second
	stdout := &capped{max: maxOut}
	stderr := &tail{max: 4096}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s after %v", extract.ErrTimeout, tool, ctx.Err())
	case stdout.over:
		return nil, fmt.Errorf("%w: %s output over %d bytes", extract.ErrTooLarge, tool, maxOut)
	case err != nil:
		return nil, fmt.Errorf("%s: %v: %s", tool, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
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

// tail keeps the last max bytes written: a tool's last words say why it
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

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
