// Package detect decides how to read an uploaded file, by its content first
// and its name second, and dispatches to the format's extractor.
package detect

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/archive"
	"github.com/strata-kb/strata/ingestor/extract/code"
	"github.com/strata-kb/strata/ingestor/extract/docx"
	"github.com/strata-kb/strata/ingestor/extract/epub"
	"github.com/strata-kb/strata/ingestor/extract/htmltext"
	"github.com/strata-kb/strata/ingestor/extract/mail"
	"github.com/strata-kb/strata/ingestor/extract/markdown"
	"github.com/strata-kb/strata/ingestor/extract/mbox"
	"github.com/strata-kb/strata/ingestor/extract/odt"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/extract/picture"
	"github.com/strata-kb/strata/ingestor/extract/plaintext"
	"github.com/strata-kb/strata/ingestor/extract/sheet"
	"github.com/strata-kb/strata/ingestor/extract/slides"
)

// Formats.
const (
	PDF      = "pdf"
	DOCX     = "docx"
	HTML     = "html"
	Markdown = "markdown"
	Text     = "text"
	Code     = "code"
	Image    = "image"
	CSV      = "csv"
	PPTX     = "pptx"
	XLSX     = "xlsx"
	ODT      = "odt"
	ODP      = "odp"
	ODS      = "ods"
	EPUB     = "epub"
	Email    = mail.Format
	ZIP      = archive.Format
	MBOX     = mbox.Format
)

var (
	markdownExt = map[string]bool{".md": true, ".markdown": true, ".mdx": true}
	htmlExt     = map[string]bool{".html": true, ".htm": true, ".xhtml": true}
	// textExt are names that promise text; binary content under them is an error, not "unsupported".
	textExt = map[string]bool{".txt": true, ".text": true, ".log": true, ".csv": true, ".tsv": true, ".json": true,
		".jsonl": true, ".ndjson": true, ".yaml": true, ".yml": true, ".toml": true, ".ini": true, ".cfg": true,
		".conf": true, ".rst": true, ".adoc": true, ".xml": true, ".svg": true, ".tex": true}
	oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
)

// Format returns the format to read data as, or an error wrapping
// extract.ErrUnsupported / extract.ErrCorrupt that says why not.
func Format(name string, data []byte) (string, error) {
	ext := strings.ToLower(path.Ext(name))
	switch {
	case len(data) == 0:
		return "", fmt.Errorf("%w: empty file (0 bytes)", extract.ErrCorrupt)
	case isPDF(data, promisesText(name, data)):
		return PDF, nil
	case picture.Sniff(data):
		return Image, nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return zipFormat(data, ext)
	case bytes.HasPrefix(data, oleMagic):
		return "", oleFormat(data, ext)
	}
	if ext == ".csv" || ext == ".tsv" {
		return CSV, nil // Excel writes Windows-1252 or UTF-16: the CSV reader decodes them
	}
	if ext == ".eml" {
		return Email, nil // 8-bit parts in any charset: the mail reader decodes them
	}
	if ext == ".mbox" || ext == ".mbx" {
		return MBOX, nil // messages in any charset, as .eml
	}
	if binary(data) {
		if textExt[ext] || markdownExt[ext] || htmlExt[ext] || code.Language(name, nil) != "" {
			return "", fmt.Errorf("%w: binary or invalid UTF-8 content in a file named as text (%s)", extract.ErrCorrupt, ext)
		}
		return "", fmt.Errorf("%w: %s (%s)", extract.ErrUnsupported, http.DetectContentType(data), kindOf(ext, "binary"))
	}
	switch {
	case markdownExt[ext]:
		return Markdown, nil
	case ext == ".fodt": // flat (one-file XML) OpenDocument, as LibreOffice saves it
		return ODT, nil
	case ext == ".fods":
		return ODS, nil
	case htmlExt[ext] || (!textExt[ext] && htmltext.Sniff(data)):
		return HTML, nil
	case code.Language(name, data) != "":
		return Code, nil
	}
	return Text, nil
}

// promisesText reports whether the name (or a shebang line) says the file
// is text: Markdown, HTML, source code, or a plain-text extension.
func promisesText(name string, data []byte) bool {
	ext := strings.ToLower(path.Ext(name))
	return textExt[ext] || markdownExt[ext] || htmlExt[ext] || code.Language(name, data) != ""
}

// pdfHeaderWindow is how far into a file the %PDF- header may start:
// Acrobat accepts it anywhere in the first 1024 bytes.
const pdfHeaderWindow = 1024

// isPDF decides whether data is a PDF (docs/formats.md, "Is it a PDF?"): a
// %PDF- header within the first pdfHeaderWindow bytes that starts the file
// or follows junk, whatever the name; under a name that promises text, a
// header after text is quoted (the file is text) unless the file as a whole
// is binary; under any other name, a header anywhere in the window, or PDF
// object syntax without one (poppler reads such files).
func isPDF(data []byte, textName bool) bool {
	i := bytes.Index(data[:min(len(data), pdfHeaderWindow)], []byte("%PDF-"))
	if i < 0 {
		return !textName && pdf.Sniff(data)
	}
	if !textName {
		return true
	}
	before := data[:i]
	return blank(before) || !plainText(before) || binary(data)
}

// binary: what no text file holds, a NUL byte or invalid UTF-8.
func binary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// blank: nothing but a byte-order mark and whitespace.
func blank(b []byte) bool {
	return len(bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n\f\v")) == 0
}

// plainText: valid UTF-8 without the bytes text never has, the C0 controls
// other than tab, line feed, vertical tab, form feed, carriage return and
// escape (ANSI colours in logs), and DEL. The NUL and invalid UTF-8 that a
// PDF's binary comment line and streams bring are among them.
func plainText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' && c != 0x1b) || c == 0x7f {
			return false
		}
	}
	return utf8.Valid(b)
}

func kindOf(ext, fallback string) string {
	if ext == "" {
		return fallback
	}
	return ext
}

// FormatCaps lower a file's budget (Limits.MaxFileBytes) for formats that
// keep no images: their text is at most MaxTextBytes (16 MiB by default) and
// their blocks a small multiple of it, so more than 64 MiB held (or four
// times a larger MaxTextBytes) is a file built to blow up (a million
// one-character paragraphs), not a document.
// Formats with pictures (PDF, DOCX, slides, EPUB, ODT, images) keep the
// whole budget, of which their images take their share.
var FormatCaps = map[string]int64{
	Text: 64 << 20, Markdown: 64 << 20, Code: 64 << 20, HTML: 64 << 20,
	CSV: 64 << 20, XLSX: 64 << 20, ODS: 64 << 20,
}

// Registry holds one extractor per format.
type Registry map[string]extract.Extractor

// NewRegistry returns the extractors for every format; pdfExtractor is the one
// chosen by configuration (poppler, or UniPDF with poppler as fallback).
func NewRegistry(pdfExtractor extract.Extractor) Registry {
	r := Registry{
		PDF: pdfExtractor, DOCX: docx.Extractor{}, HTML: htmltext.Extractor{}, Markdown: markdown.Extractor{},
		Text: plaintext.Extractor{}, Code: code.Extractor{}, Image: picture.Extractor{},
		PPTX: slides.PPTX{}, ODP: slides.ODP{}, EPUB: epub.Extractor{}, ODT: odt.Extractor{},
		XLSX: sheet.XLSX{}, ODS: sheet.ODS{}, CSV: sheet.CSV{},
	}
	// A container's members (a message's attachments, an archive's files, a
	// mailbox's messages) are read by their own formats' readers.
	r[Email] = mail.Extractor{Attachment: r.Extract}
	r[ZIP] = archive.Extractor{Member: r.Extract}
	r[MBOX] = mbox.Extractor{Message: r.Extract}
	return r
}

// containers are the formats whose members are read by their own readers:
// a scan among them is read by OCR, in OCR's time.
var containers = map[string]bool{Email: true, ZIP: true, MBOX: true}

// Extract detects the format and extracts, bounded by lim.Timeout.
func (r Registry) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	format, err := Format(name, data)
	if err != nil {
		return nil, err
	}
	ex, ok := r[format]
	if !ok {
		return nil, fmt.Errorf("%w: no extractor for %s", extract.ErrUnsupported, format)
	}
	if c, ok := FormatCaps[format]; ok {
		// A text limit raised past 16 MiB raises the cap with it.
		c = max(c, 4*int64(lim.MaxTextBytes))
		if lim.MaxFileBytes > c {
			lim.MaxFileBytes = c
		}
	}
	if lim.Timeout > 0 {
		// OCR has a time limit of its own, beside the reading's.
		timeout := lim.Timeout
		if lim.OCR != nil && lim.OCRTimeout > 0 && (format == PDF || format == Image || containers[format]) {
			timeout += lim.OCRTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	doc, err := ex.Extract(ctx, data, name, lim)
	if err != nil {
		return nil, err
	}
	if doc.Format == "" {
		doc.Format = format
	}
	doc.Title = extract.Title(doc.Title)
	return doc, nil
}
