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
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/ocr"
)

// Poppler extracts with pdfinfo, pdftotext, pdftohtml (outline) and pdfimages.
type Poppler struct {
	// BinDir holds the poppler tools; "" searches PATH.
	BinDir string
	// ScratchDir is where pdfimages writes pictures and pdftohtml reads the
	// file from; "" is the system's temporary directory. On a tmpfs a PDF
	// with pictures costs half as much as on an ext4 disk (BenchmarkPDF).
	ScratchDir string
	// PictureReader is the strata-pdf-pictures command, which reads a PDF's
	// pictures from its structure in a fraction of pdfimages' time; pdfimages
	// still reads the files it cannot. "" runs pdfimages for every file.
	PictureReader string
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
	if p.BinDir != "" && !filepath.IsAbs(name) {
		return filepath.Join(p.BinDir, name)
	}
	return name
}

// Extract extracts text per page, headings from the outline, and embedded
// images; pages without a usable text layer are read by Limits.OCR
// (scans.go).
func (p Poppler) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if !Sniff(data) {
		return nil, fmt.Errorf("pdf %s: %w: no %%PDF header", name, extract.ErrCorrupt)
	}
	// Poppler's tools have lim.Timeout; OCR of the pages without a text
	// layer has lim.OCRTimeout besides (scans.go).
	fileCtx, cancel := context.WithTimeout(ctx, lim.Timeout+ocrTime(lim))
	defer cancel()
	ctx, cancelText := context.WithTimeout(fileCtx, lim.Timeout)
	defer cancelText()
	// Every tool reads the PDF on its own: they overlap, so a file costs
	// about one pdftotext (measured in BenchmarkPDF). pdftotext -htmlmeta
	// gives the title with the text, so pdfinfo runs only for a file longer
	// than lim.MaxPages (to say how long); the outline comes whole from
	// pdftohtml laying out one page only; pdfimages, which reads every page
	// again, runs only when the file has a picture worth keeping (imagescan.go).
	// The PDF reaches them on stdin; only pdftohtml needs it in a file, and
	// pdfimages a directory to write into (a temporary directory costs about
	// 1 ms on an ext4 disk, a tenth of a small file's pdftotext).
	wantOutline := MayHaveOutline(data)
	wantImages := lim.MaxImages > 0 && HasPictures(data)
	var file string
	if wantOutline {
		dir, err := os.MkdirTemp(p.ScratchDir, "strata-pdf-")
		if err != nil {
			return nil, fmt.Errorf("pdf %s: %w", name, err)
		}
		defer os.RemoveAll(dir)
		file = filepath.Join(dir, "in.pdf")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, fmt.Errorf("pdf %s: %w", name, err)
		}
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg             sync.WaitGroup
		outline        []OutlineItem
		images         []extract.Image
		outErr, imgErr error
	)
	if wantOutline {
		wg.Add(1)
		go func() { defer wg.Done(); outline, outErr = p.outline(ctx, file, lim) }()
	}
	if wantImages {
		wg.Add(1)
		go func() { defer wg.Done(); images, imgErr = p.images(ctx, data, lim.MaxPages, lim) }()
	}
	budget := ocr.NewBudget(fileCtx, lim)
	defer budget.Close()
	var read map[int][]extract.OCRBlock
	text, err := p.text(ctx, data, lim)
	if err == nil {
		// Pages without a usable text layer are read by OCR while the
		// outline and pictures are read.
		read, err = p.readScans(data, text.Pages, textBytes(text.Pages), lim, budget)
	}
	if err != nil {
		stop() // the file is unreadable: the others need not finish
	}
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("pdf %s: %w", name, err)
	}
	pages := len(text.Pages)
	if why := budget.Unavailable(); why != "" && pages > 0 && !slices.ContainsFunc(text.Pages, func(t string) bool { return !NeedsOCR(t) }) {
		return nil, fmt.Errorf("pdf %s: %w: no page has a text layer (%d page(s) scanned, blank, or without a usable character mapping): %s", name, extract.ErrNoOCR, pages, why)
	}
	total := pages
	if pages >= lim.MaxPages {
		// Only pdfinfo knows how many pages were left out.
		if n, err := p.pageCount(fileCtx, data, lim); err == nil {
			total = max(n, pages)
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
	doc, err := Assemble(text.Pages, read, outline, images, lim)
	if err != nil {
		return nil, fmt.Errorf("pdf %s: %w", name, err)
	}
	doc.Pages = total
	doc.Title = text.Title
	doc.Warnings = append(warnings, doc.Warnings...)
	doc.Warnings = append(doc.Warnings, budget.Warnings("text of pages without a text layer")...)
	info := map[string]string{"Title": text.Title}
	maps.Copy(info, text.Info)
	var infoWarnings []string
	doc.Metadata, infoWarnings = InfoMetadata(info)
	doc.Warnings = append(doc.Warnings, infoWarnings...)
	if total > pages {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("only the first %d of %d pages were extracted", pages, total))
	}
	return doc, nil
}

// ocrTime is the time OCR may take on a file beyond lim.Timeout.
func ocrTime(lim extract.Limits) time.Duration {
	if lim.OCR == nil {
		return 0
	}
	return max(lim.OCRTimeout, 0)
}

func textBytes(pages []string) int {
	n := 0
	for _, p := range pages {
		n += len(p)
	}
	return n
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

// Text is what pdftotext -htmlmeta reports: the document's title, its
// other document information, and the text of each page it read.
type Text struct {
	Title string
	// Info is the document information pdftotext prints as <meta> elements
	// (Subject, Keywords, Author, Creator, Producer, CreationDate,
	// ModDate), unescaped, by name; dates as poppler writes them
	// (2024-01-31T12:00:00+01, or "D:20240131120000+01'00'" before 0.80).
	Info  map[string]string
	Pages []string
}

// text runs pdftotext -htmlmeta, which wraps the plain text (the same bytes,
// not escaped) in <pre> after a head with the document's title: one process
// instead of pdfinfo and pdftotext. Its errors say why a file is unreadable.
func (p Poppler) text(ctx context.Context, pdf []byte, lim extract.Limits) (Text, error) {
	out, err := p.run(ctx, lim, lim.MaxTextBytes+64<<10, pdf, "pdftotext", "-htmlmeta", "-enc", "UTF-8", "-f", "1", "-l", strconv.Itoa(max(lim.MaxPages, 1)), stdinPDF, "-")
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
	t.Info = parseMetas(head)
	// A file poppler opens but lays out no page of (issue19484_1.pdf) has
	// no text, which is not an error.
	t.Pages = strings.Split(string(body), "\f")
	if last := len(t.Pages) - 1; strings.TrimSpace(t.Pages[last]) == "" {
		t.Pages = t.Pages[:last]
	}
	return t, nil
}

// maxInfoMetas bounds the <meta> elements read: pdftotext prints at most 7.
const maxInfoMetas = 16

// parseMetas reads the <meta name="..." content="..."/> elements pdftotext
// prints in the head, one a line, their content escaped (&amp; &lt; &gt;
// &quot;). The first of a name wins.
func parseMetas(head []byte) map[string]string {
	var info map[string]string
	for line := range bytes.Lines(head) {
		rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte(`<meta name="`))
		if !ok {
			continue
		}
		name, rest, ok := bytes.Cut(rest, []byte(`" content="`))
		if !ok {
			continue
		}
		content, ok := bytes.CutSuffix(rest, []byte(`"/>`))
		if !ok || bytes.ContainsRune(name, '"') {
			continue
		}
		if info == nil {
			info = map[string]string{}
		}
		if _, dup := info[string(name)]; !dup {
			info[string(name)] = html.UnescapeString(string(content))
		}
		if len(info) >= maxInfoMetas {
			break
		}
	}
	return info
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

// pageCount runs pdfinfo, for the page count of a file longer than lim.MaxPages.
func (p Poppler) pageCount(ctx context.Context, pdf []byte, lim extract.Limits) (int, error) {
	out, err := p.run(ctx, lim, 1<<20, pdf, "pdfinfo", stdinPDF)
	if err != nil {
		return 0, classify(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "Pages" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: pdfinfo reported no pages", extract.ErrCorrupt)
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
	out, err := p.run(ctx, lim, lim.MaxTextBytes*4, nil, "pdftohtml", "-xml", "-i", "-q", "-stdout", "-nodrm", "-f", "1", "-l", "1", file)
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
