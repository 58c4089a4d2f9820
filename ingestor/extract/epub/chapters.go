package epub

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/htmltext"
)

// Chapters and pages: every spine entry whose XHTML has text is a
// chapter, numbered from 1 in spine order; that number is the page of
// all its blocks, and Document.Pages is the number of chapters. Spine
// entries without text (a cover image, a blank page) are not chapters.
//
// Each chapter is a section: when its first block is not a level-1
// heading, a level-1 heading is added, titled as the table of contents
// titles the chapter, else "Chapter N"; the chapter's own level-1
// headings then become level 2, so they stay inside it. Other headings
// keep their levels.

// chapterTypes are the media types of spine entries read as chapters.
var chapterTypes = map[string]bool{"application/xhtml+xml": true, "text/html": true}

// isChapter reports whether a spine entry is XHTML: by media type, or by
// extension when the manifest gives none.
func isChapter(it item) bool {
	if it.mediaType == "" {
		switch strings.ToLower(path.Ext(it.name)) {
		case ".xhtml", ".html", ".htm":
			return true
		}
	}
	return chapterTypes[it.mediaType]
}

// readChapters reads the spine in order. A chapter that is missing or
// broken is skipped with a warning; limits, timeouts and encryption fail
// the book, as does a book none of whose chapters can be read.
func (x *extraction) readChapters(p *pkg, toc titles) error {
	seen := map[string]bool{}
	chapters, failed := 0, 0
	for i, id := range p.spine {
		if err := x.checkCtx(); err != nil {
			return err
		}
		it, ok := p.manifest[id]
		switch {
		case !ok:
			x.warn("spine entry %d (%q) is not in the manifest", i+1, id)
			continue
		case it.name == "":
			x.warn("spine entry %d (%q) points outside the archive: not read", i+1, it.href)
			continue
		case seen[it.name]:
			continue // a file listed twice is read once
		case !isChapter(it):
			x.warn("spine entry %d (%s, %s) is not XHTML: not read", i+1, it.href, it.mediaType)
			continue
		}
		seen[it.name] = true
		if chapters >= x.lim.MaxPages {
			x.warn("spine entries from %d (%s) on not read: the book has more than %d chapters (MaxPages)", i+1, it.href, x.lim.MaxPages)
			break
		}
		doc, err := x.readChapter(it)
		switch {
		case errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrTimeout) || errors.Is(err, extract.ErrEncrypted):
			return err
		case err != nil:
			x.warn("chapter %s skipped: %v", it.href, err)
			failed++
			continue
		case len(doc.Blocks) == 0:
			continue
		}
		chapters++
		if err := x.addChapter(chapters, doc, toc[it.name]); err != nil {
			return err
		}
	}
	if chapters == 0 && failed > 0 {
		return fmt.Errorf("%w: none of the %d chapters could be read", extract.ErrCorrupt, failed)
	}
	x.b.SetPages(chapters)
	return nil
}

// readChapter reads one chapter's XHTML through the HTML reader, within
// what is left of the text limit.
func (x *extraction) readChapter(it item) (*extract.Document, error) {
	f := x.zip.lookup(it.name)
	if f == nil {
		return nil, fmt.Errorf("%w: %s is not in the archive", extract.ErrCorrupt, it.name)
	}
	data, err := x.zip.read(f)
	if err != nil {
		return nil, err
	}
	lim := x.lim
	lim.Timeout = 0 // x.ctx carries the book's deadline
	lim.MaxTextBytes = max(x.lim.MaxTextBytes-x.b.Len(), 1)
	doc, err := htmltext.Extractor{}.Extract(x.ctx, prepareChapter(data), it.name, lim)
	if errors.Is(err, extract.ErrTooLarge) {
		return nil, fmt.Errorf("%w: text exceeds %d bytes (MaxTextBytes) in chapter %s", extract.ErrTooLarge, x.lim.MaxTextBytes, it.href)
	}
	return doc, err
}

// addChapter copies a chapter's blocks, on page n, under its heading.
func (x *extraction) addChapter(n int, doc *extract.Document, title string) error {
	shift := false
	if text, ok := heading(doc, doc.Blocks[0]); !ok || doc.Blocks[0].Level != 1 || text == "" {
		if title == "" {
			title = fmt.Sprintf("Chapter %d", n)
		}
		if err := x.add(extract.Heading, 1, n, title); err != nil {
			return err
		}
		shift = true
	}
	for _, b := range doc.Blocks {
		kind, level, text := b.Kind, b.Level, doc.Text[b.Start:b.End]
		if kind == extract.Heading {
			if h, ok := heading(doc, b); ok {
				text = h
				if shift {
					level = max(level, 2)
				}
			} else {
				kind, level = extract.Paragraph, 0
			}
		}
		if err := x.add(kind, level, n, text); err != nil {
			return err
		}
	}
	return nil
}

// heading returns a heading block's text on one line, and false when the
// block is no heading or too long for one (maxHeadingBytes): that is a
// paragraph set in a heading's style, and is kept whole as a paragraph.
func heading(doc *extract.Document, b extract.Block) (string, bool) {
	if b.Kind != extract.Heading {
		return "", false
	}
	h := oneLine(doc.Text[b.Start:b.End], maxHeadingBytes+1)
	return h, len(h) <= maxHeadingBytes
}

// add appends a block and enforces MaxTextBytes on the whole book.
func (x *extraction) add(kind extract.Kind, level, page int, text string) error {
	x.b.Add(kind, level, page, text)
	if x.b.Len() > x.lim.MaxTextBytes {
		return fmt.Errorf("%w: text exceeds %d bytes (MaxTextBytes)", extract.ErrTooLarge, x.lim.MaxTextBytes)
	}
	return nil
}
