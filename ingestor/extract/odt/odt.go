// Package odt extracts the text and structure of OpenDocument text files
// (.odt, and flat .fodt): content.xml streamed as XML tokens into
// headings, paragraphs, lists, tables and pictures in reading order;
// footnotes, endnotes and comments collected and written once at the
// end, each kind under its own heading, then the headers and footers of
// the page styles (styles.xml); the title and properties from meta.xml;
// page numbers where LibreOffice recorded its layout (pages.go).
package odt

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	contentPart  = "content.xml"
	stylesPart   = "styles.xml"
	metaPart     = "meta.xml"
	manifestPart = "META-INF/manifest.xml"
	mimetypePart = "mimetype"
	zipMagic     = "PK\x03\x04"
	// maxWarnings keeps a broken file from growing Document.Warnings
	// without bound; the rest are counted in one final warning.
	maxWarnings = 32
	// maxEntriesPerSection bounds the notes, comments, headers and
	// footers kept (each still counts against MaxTextBytes).
	maxEntriesPerSection = 100000
)

// textTypes are the media types of OpenDocument text: a document, a
// template, a master document, and a web page LibreOffice saved as ODT.
var textTypes = map[string]bool{
	"application/vnd.oasis.opendocument.text":          true,
	"application/vnd.oasis.opendocument.text-template": true,
	"application/vnd.oasis.opendocument.text-master":   true,
	"application/vnd.oasis.opendocument.text-web":      true,
}

// Extractor extracts .odt (and flat .fodt) files. It implements
// extract.Extractor.
type Extractor struct{}

var _ extract.Extractor = Extractor{}

// Extract reads the document. Zero fields of lim take their value from
// extract.DefaultLimits.
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	lim = withDefaults(lim)
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	x := &extraction{
		ctx:    ctx,
		name:   oneLine(name, maxLabelBytes),
		lim:    lim,
		b:      extract.NewBuilder("odt").Within(lim),
		styles: newStyleSheet(),
		pages:  newPager(),
		seen:   map[string]bool{},
	}
	doc, err := x.run(data)
	if err != nil {
		return nil, readable{oneLine(fmt.Sprintf("odt %s: %v", x.name, err), 2048), err}
	}
	return doc, nil
}

// readable is an error whose message is one line of clean text, however
// hostile the names and bytes it quotes (a zip entry's name, a broken
// XML token): it is shown to users and written to logs.
type readable struct {
	msg string
	err error
}

func (e readable) Error() string { return e.msg }
func (e readable) Unwrap() error { return e.err }

// extraction is the state of one Extract call.
type extraction struct {
	ctx  context.Context
	name string // file name, cleaned for messages
	lim  extract.Limits
	b    *extract.Builder
	zip  *archive // nil for a flat file

	styles    *styleSheet
	pages     *pager
	paged     bool // the file records soft page breaks
	lastPage  int  // the page of the last block
	textBytes int  // text met, bounded by MaxTextBytes before blocks are built

	footnotes, endnotes, comments []string
	headers, footers              []string
	seen                          map[string]bool // pictures and header texts met

	images, imagesOverMax int

	title, firstTitle, firstHeading string
	props                           *extract.Props

	warnings, suppressed int
}

// errPageLimit ends the body at Limits.MaxPages.
var errPageLimit = errors.New("page limit reached")

func (x *extraction) run(data []byte) (*extract.Document, error) {
	if err := x.checkCtx(); err != nil {
		return nil, err
	}
	var err error
	if bytes.HasPrefix(data, []byte(zipMagic)) {
		err = x.readZip(data)
	} else {
		err = x.readFlat(data)
	}
	if errors.Is(err, errPageLimit) {
		x.warn("pages after page %d not read (MaxPages)", x.lim.MaxPages)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return x.finish()
}

// readZip reads an .odt: the metadata, the styles (with the headers and
// footers) and then the body.
func (x *extraction) readZip(data []byte) error {
	a, err := openArchive(x.ctx, data, x.lim.MaxUncompressed)
	if err != nil {
		return err
	}
	x.zip = a
	if err := x.checkMimetype(); err != nil {
		return err
	}
	if f := a.files[manifestPart]; f != nil {
		var enc bool
		err := x.readPart(f, func(t *tokens) (err error) {
			enc, err = encrypted(t)
			return err
		})
		if errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) {
			return err
		}
		if enc {
			return fmt.Errorf("%w: password-protected document (%s encrypted, says %s)", extract.ErrEncrypted, contentPart, manifestPart)
		}
	}
	content := a.files[contentPart]
	if content == nil {
		return fmt.Errorf("%w: no %s in the archive", extract.ErrCorrupt, contentPart)
	}
	// The side parts are optional: a broken one costs a warning.
	for _, part := range []string{metaPart, stylesPart} {
		f := a.files[part]
		if f == nil {
			continue
		}
		err := x.readPart(f, func(t *tokens) error { return x.newWalker(t, part == stylesPart).run() })
		switch {
		case errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout):
			return err
		case err != nil:
			x.warn("%s ignored: %v", part, err)
			x.headers, x.footers, x.props = nil, nil, nil
		}
	}
	return x.readPart(content, func(t *tokens) error { return x.newWalker(t, false).run() })
}

// checkMimetype refuses OpenDocument files that are not text: a
// spreadsheet or a presentation has no office:text for this reader.
func (x *extraction) checkMimetype() error {
	f := x.zip.files[mimetypePart]
	if f == nil || f.UncompressedSize64 > 256 {
		return nil
	}
	p, err := x.zip.open(f)
	if err != nil {
		return err
	}
	defer p.Close()
	mime, err := io.ReadAll(p)
	if err != nil {
		return fmt.Errorf("reading %s: %w", mimetypePart, err)
	}
	if m := strings.TrimSpace(string(mime)); m != "" && !textTypes[m] {
		return fmt.Errorf("%w: %q is not an OpenDocument text", extract.ErrUnsupported, oneLine(m, 128))
	}
	return nil
}

// readPart streams one XML part into parse.
func (x *extraction) readPart(f *zip.File, parse func(*tokens) error) error {
	p, err := x.zip.open(f)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := parse(x.newTokens(p)); err != nil {
		if errors.Is(err, errPageLimit) {
			return err
		}
		return fmt.Errorf("reading %s: %w", f.Name, err)
	}
	return nil
}

// readFlat reads a flat .fodt: one XML document (office:document) with
// the metadata, styles and body in this order.
func (x *extraction) readFlat(data []byte) error {
	head := data[:min(len(data), 4096)]
	if !bytes.Contains(head, []byte(nsOffice)) || !bytes.Contains(head, []byte("document")) {
		return fmt.Errorf("%w: neither a zip archive nor a flat OpenDocument file", extract.ErrCorrupt)
	}
	if m := flatMimetype(head); m != "" && !textTypes[m] {
		return fmt.Errorf("%w: %q is not an OpenDocument text", extract.ErrUnsupported, oneLine(m, 128))
	}
	return x.newWalker(x.newTokens(bytes.NewReader(data)), false).run()
}

// flatMimetype is the office:mimetype of a flat file's root element, read
// from its first bytes.
func flatMimetype(head []byte) string {
	i := bytes.Index(head, []byte(":mimetype=\""))
	if i < 0 {
		return ""
	}
	rest := head[i+len(":mimetype=\""):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return string(rest[:j])
	}
	return ""
}

func (x *extraction) checkCtx() error {
	if err := x.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	return nil
}

// countText counts n bytes of text met against MaxTextBytes, so one huge
// paragraph or table fails before it is built.
func (x *extraction) countText(n int) error {
	if x.textBytes += n; x.textBytes > x.lim.MaxTextBytes {
		return fmt.Errorf("%w: text exceeds %d bytes (MaxTextBytes)", extract.ErrTooLarge, x.lim.MaxTextBytes)
	}
	return nil
}

// add appends a block on page (0 without pages) and enforces MaxTextBytes
// on the document and MaxPages on the body.
func (x *extraction) add(kind extract.Kind, level int, text string, page int) error {
	if !x.paged {
		page = 0
	} else if page > x.lim.MaxPages {
		return errPageLimit
	}
	if x.b.Add(kind, level, page, text) >= 0 {
		x.lastPage = max(x.lastPage, page)
	}
	if x.b.Len() > x.lim.MaxTextBytes {
		return fmt.Errorf("%w: text exceeds %d bytes (MaxTextBytes)", extract.ErrTooLarge, x.lim.MaxTextBytes)
	}
	return nil
}

// addImage appends a picture and its Figure block.
func (x *extraction) addImage(p pending) error {
	if !x.paged {
		p.page = 0
	} else if p.page > x.lim.MaxPages {
		return errPageLimit
	}
	p.img.Page = p.page
	x.b.AddImage(p.img, p.desc)
	x.lastPage = max(x.lastPage, p.page)
	if x.b.Len() > x.lim.MaxTextBytes {
		return fmt.Errorf("%w: text exceeds %d bytes (MaxTextBytes)", extract.ErrTooLarge, x.lim.MaxTextBytes)
	}
	return nil
}

// addNote keeps a footnote or endnote for the end of the document.
func (x *extraction) addNote(class, text string) {
	if class == "endnote" {
		x.addEntry(&x.endnotes, text)
	} else {
		x.addEntry(&x.footnotes, text)
	}
}

// addComment keeps a comment, with its author, for the end.
func (x *extraction) addComment(author, text string) {
	if author != "" && strings.TrimSpace(text) != "" {
		text = author + ": " + text
	}
	x.addEntry(&x.comments, text)
}

func (x *extraction) addEntry(list *[]string, text string) {
	if text = strings.TrimSpace(text); text != "" && len(*list) < maxEntriesPerSection {
		*list = append(*list, text)
	}
}

// addOnce keeps a header or footer text the first time it is met: page
// styles repeat them (left, right and first pages, one page style per
// section).
func (x *extraction) addOnce(list *[]string, text string) {
	text = strings.TrimSpace(text)
	if text == "" || x.seen["\x00header\x00"+text] {
		return
	}
	x.seen["\x00header\x00"+text] = true
	x.addEntry(list, text)
}

// noteHeading remembers the first Title paragraph and the first heading,
// the title when meta.xml has none.
func (x *extraction) noteHeading(kind extract.Kind, title bool, text string) {
	if kind != extract.Heading || text == "" {
		return
	}
	if title && x.firstTitle == "" {
		x.firstTitle = text
	}
	if x.firstHeading == "" {
		x.firstHeading = text
	}
}

// finish writes the end sections, the title, metadata and warnings.
func (x *extraction) finish() (*extract.Document, error) {
	page := 0
	if x.paged {
		page = min(max(x.pages.current(), x.lastPage, 1), x.lim.MaxPages)
	}
	for _, s := range []struct {
		title   string
		entries []string
	}{
		{"Footnotes", x.footnotes},
		{"Endnotes", x.endnotes},
		{"Comments", x.comments},
		{"Header", x.headers},
		{"Footer", x.footers},
	} {
		if len(s.entries) == 0 {
			continue
		}
		if err := x.endAdd(extract.Heading, 1, s.title, page); err != nil {
			return nil, err
		}
		for _, e := range s.entries {
			if err := x.endAdd(extract.Paragraph, 0, clean(e), page); err != nil {
				return nil, err
			}
		}
	}
	x.b.SetPages(page)
	title := x.title
	for _, t := range []string{x.firstTitle, x.firstHeading} {
		if title == "" {
			title = t
		}
	}
	x.b.SetTitle(title)
	if x.props != nil {
		x.b.SetMetadata(x.props.Metadata())
		for _, w := range x.props.Warnings() {
			x.warn("%s", w)
		}
	}
	if x.imagesOverMax > 0 {
		x.warn("%d images skipped: more than %d images", x.imagesOverMax, x.lim.MaxImages)
	}
	if x.suppressed > 0 {
		x.b.Warn(fmt.Sprintf("%d more warnings not shown", x.suppressed))
	}
	return x.b.Finish()
}

// endAdd adds a block of the end sections, on the last page.
func (x *extraction) endAdd(kind extract.Kind, level int, text string, page int) error {
	x.b.Add(kind, level, page, text)
	if x.b.Len() > x.lim.MaxTextBytes {
		return fmt.Errorf("%w: text exceeds %d bytes (MaxTextBytes)", extract.ErrTooLarge, x.lim.MaxTextBytes)
	}
	return nil
}

func (x *extraction) warn(format string, args ...any) {
	if x.warnings >= maxWarnings {
		x.suppressed++
		return
	}
	x.warnings++
	// Messages quote names from the archive, which may hold any bytes.
	x.b.Warn(oneLine(fmt.Sprintf(format, args...), 4*maxLabelBytes))
}

// Sniff reports whether data is an OpenDocument text: a zip whose
// mimetype entry says so, or a flat file whose root says so.
func Sniff(data []byte) bool {
	if !bytes.HasPrefix(data, []byte(zipMagic)) {
		head := data[:min(len(data), 4096)]
		return bytes.Contains(head, []byte(nsOffice)) && textTypes[flatMimetype(head)]
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return false
	}
	for _, f := range zr.File {
		if f.Name != mimetypePart || f.UncompressedSize64 > 256 {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return false
		}
		mime, _ := io.ReadAll(io.LimitReader(rc, 256))
		rc.Close()
		return textTypes[strings.TrimSpace(string(mime))]
	}
	return false
}

// withDefaults fills zero limits from extract.DefaultLimits. A negative
// MaxImages keeps no images.
func withDefaults(lim extract.Limits) extract.Limits {
	def := extract.DefaultLimits()
	if lim.Timeout <= 0 {
		lim.Timeout = def.Timeout
	}
	if lim.MaxTextBytes <= 0 {
		lim.MaxTextBytes = def.MaxTextBytes
	}
	if lim.MaxUncompressed <= 0 {
		lim.MaxUncompressed = def.MaxUncompressed
	}
	if lim.MaxImages == 0 {
		lim.MaxImages = def.MaxImages
	}
	if lim.MaxImageBytes <= 0 {
		lim.MaxImageBytes = def.MaxImageBytes
	}
	if lim.MaxPages <= 0 {
		lim.MaxPages = def.MaxPages
	}
	return lim
}
