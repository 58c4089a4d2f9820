package odt

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// walker turns the token stream of one part (styles.xml, content.xml, or
// a whole flat .fodt) into blocks and the end sections' entries. It acts
// on elements by name wherever they are, so the parts of a zip and a
// flat file, which holds them all in one, are read alike.
type walker struct {
	x      *extraction
	t      *tokens
	styles bool // reading styles.xml: its automatic styles are not the body's

	frames     []*frame
	lists      []listState
	nextAfter  [maxListLevels + 1]int // per list level, the number after the last list ended
	marker     string                 // the open list item's marker, for its first paragraph
	drawings   []*drawing
	deferred   []pending
	noteClass  string // "footnote" or "endnote", of the open text:note
	author     string // the open comment's dc:creator
	headers    int    // open header or footer collectors
	collectors int    // open collectors of any kind
	inBody     bool   // inside office:text
}

// listState is an open text:list.
type listState struct {
	style    string
	numbered bool
	next     int
}

func (x *extraction) newWalker(t *tokens, styles bool) *walker {
	return &walker{x: x, t: t, styles: styles}
}

func (w *walker) run() error {
	return w.t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			return w.start(tok)
		case xml.EndElement:
			return w.end(tok)
		case xml.CharData:
			if f := w.paragraph(); f != nil && len(tok) > 0 {
				// White space alone is no content: a page break may follow
				// it in a pretty-printed file.
				if len(bytes.TrimLeft(tok, " \t\r\n")) > 0 {
					w.content(f)
				}
				f.appendText(tok)
				return w.x.countText(len(tok))
			}
		}
		return nil
	})
}

func (w *walker) start(e xml.StartElement) error {
	switch e.Name {
	case officeMeta:
		return w.x.parseMeta(w.t)
	case officeStyles:
		return w.x.styles.parseStyles(w.t, false)
	case officeAutoStyles:
		if w.styles {
			return w.t.skip()
		}
		return w.x.styles.parseStyles(w.t, true)
	case officeFontFaceDecls, officeScripts, officeSettings, officeForms,
		textTrackedChanges, // deleted text of tracked changes; inserted text is inline
		textSequenceDecls, textVariableDecls, textUserFieldDecls, textDDEDecls,
		textTableOfContent, textIllustrationIdx, textTableIndex, textObjectIndex, // generated: repeat headings and captions
		textNumber,                    // a cached list or outline label; list markers are written here
		textPageNumber, textPageCount, // fields whose text is one page's number
		drawObject, drawObjectOLE, // embedded charts and formulas: parts of their own
		metaDateString, dcDate: // a comment's date
		return w.t.skip()
	case textSection:
		if attr(e, nsText, "display") == "none" { // a hidden section
			return w.t.skip()
		}
	case officeText:
		w.inBody = true
		w.x.paged = attr(e, nsText, "use-soft-page-breaks") == "true"
	case styleHeader, styleHeaderLeft, styleHeaderFirst, styleFooter, styleFooterLeft, styleFooterFirst:
		if attr(e, nsStyle, "display") == "false" {
			return w.t.skip()
		}
		w.headers++
		w.push(&frame{kind: collectorFrame})
	case textP, textH:
		w.startParagraph(e)
	case textList:
		w.startList(e)
	case textListItem:
		w.startItem(e)
	case textListHeader:
		w.marker = ""
	case tableTable:
		w.startTable(e)
	case tableRow:
		if f := w.table(); f != nil {
			f.startRow(repeat(attr(e, nsTable, "number-rows-repeated")))
		}
	case tableCell:
		if f := w.table(); f != nil {
			f.startCell(repeat(attr(e, nsTable, "number-columns-repeated")))
		}
	case tableCoveredCell:
		// A cell merged into the one before it: the merged cell is written once.
		return w.t.skip()
	case textS:
		n, err := strconv.Atoi(attr(e, nsText, "c"))
		if err != nil || n < 1 {
			n = 1
		}
		return w.exact(strings.Repeat(" ", min(n, 64)))
	case textTab:
		return w.exact("\t")
	case textLineBreak:
		return w.exact("\n")
	case textSoftPageBreak:
		if w.inBody && w.collectors == 0 && len(w.drawings) == 0 {
			w.x.pages.soft()
		}
	case textNote:
		w.noteClass = attr(e, nsText, "note-class")
	case textNoteCitation:
		citation, err := w.t.text(64)
		if err != nil {
			return err
		}
		if citation = oneLine(citation, 64); citation != "" {
			return w.exact("[" + citation + "]")
		}
	case textNoteBody:
		w.push(&frame{kind: collectorFrame})
	case officeAnnotation:
		w.author = ""
		w.push(&frame{kind: collectorFrame})
	case dcCreator:
		author, err := w.t.text(maxLabelBytes)
		if err != nil {
			return err
		}
		w.author = oneLine(author, maxLabelBytes)
	case drawFrame:
		w.drawings = append(w.drawings, &drawing{})
	case drawImage:
		if d := w.drawing(); d != nil {
			d.images = append(d.images, imageRef{href: attr(e, nsXLink, "href")})
		}
	case officeBinaryData:
		return w.binaryData()
	case svgTitle, svgDesc:
		d := w.drawing()
		if d == nil {
			return w.t.skip()
		}
		s, err := w.t.text(maxLabelBytes)
		if err != nil {
			return err
		}
		if e.Name == svgTitle {
			d.title = s
		} else {
			d.desc = s
		}
	}
	return nil
}

func (w *walker) end(e xml.EndElement) error {
	switch e.Name {
	case textP, textH:
		return w.endParagraph()
	case tableTable:
		return w.endTable()
	case tableRow:
		if f := w.table(); f != nil {
			return w.x.countText(f.endRow())
		}
	case tableCell:
		if f := w.table(); f != nil {
			return w.x.countText(f.endCell())
		}
	case textList:
		if n := len(w.lists); n > 0 {
			w.nextAfter[min(n, maxListLevels)] = w.lists[n-1].next
			w.lists = w.lists[:n-1]
		}
	case textListItem:
		w.marker = ""
	case textNoteBody:
		if f := w.collector(); f != nil {
			w.pop()
			w.x.addNote(w.noteClass, strings.Join(f.lines, "\n"))
		}
	case officeAnnotation:
		if f := w.collector(); f != nil {
			w.pop()
			w.x.addComment(w.author, strings.Join(f.lines, "\n"))
		}
	case styleHeader, styleHeaderLeft, styleHeaderFirst:
		return w.endHeader(&w.x.headers)
	case styleFooter, styleFooterLeft, styleFooterFirst:
		return w.endHeader(&w.x.footers)
	case drawFrame:
		return w.endDrawing()
	case officeText:
		w.inBody = false
	}
	return nil
}

// inFlow reports whether the body's text flow is at the top level, where
// blocks are laid out on pages: not in a table, note, comment, header or
// frame. A soft page break counts inside top-level paragraphs and tables
// too, but not in notes, comments, headers or frames, which are laid out
// apart.
func (w *walker) inFlow() bool {
	return w.inBody && len(w.frames) == 0 && len(w.drawings) == 0
}

func (w *walker) push(f *frame) {
	w.frames = append(w.frames, f)
	if f.kind == collectorFrame {
		w.collectors++
	}
}

func (w *walker) pop() *frame {
	f := w.frames[len(w.frames)-1]
	w.frames = w.frames[:len(w.frames)-1]
	if f.kind == collectorFrame {
		w.collectors--
	}
	return f
}

func (w *walker) top() *frame {
	if len(w.frames) == 0 {
		return nil
	}
	return w.frames[len(w.frames)-1]
}

func (w *walker) topOf(kind frameKind) *frame {
	if f := w.top(); f != nil && f.kind == kind {
		return f
	}
	return nil
}

func (w *walker) paragraph() *frame { return w.topOf(paragraphFrame) }
func (w *walker) table() *frame     { return w.topOf(tableFrame) }
func (w *walker) collector() *frame { return w.topOf(collectorFrame) }

// content marks content laid out in the body's flow: the page a
// top-level paragraph starts on is that of its first content, and a
// page that has content is no longer fresh (pages.go).
func (w *walker) content(f *frame) {
	if !w.inBody || w.collectors > 0 || len(w.drawings) > 0 {
		return
	}
	page := w.x.pages.laidOut()
	if !f.started && len(w.frames) == 1 {
		f.started, f.page = true, page
	}
}

// exact adds text an element writes to the open paragraph.
func (w *walker) exact(s string) error {
	f := w.paragraph()
	if f == nil {
		return nil
	}
	w.content(f)
	f.appendExact(s)
	return w.x.countText(len(s))
}

// startParagraph opens text:p or text:h. A heading's level is its
// text:outline-level, else its style's (styleSheet.outline), else 1;
// levels past 6 are 6. A paragraph in a heading style is a heading of
// its level, and one in the Title style a level-1 heading, as in DOCX.
func (w *walker) startParagraph(e xml.StartElement) {
	name := attr(e, nsText, "style-name")
	f := &frame{kind: paragraphFrame}
	switch {
	case e.Name == textH:
		f.heading = true
		f.level, _ = strconv.Atoi(attr(e, nsText, "outline-level"))
		if f.level < 1 {
			f.level = w.x.styles.outline(name)
		}
		f.level = min(max(f.level, 1), 6)
	case w.x.styles.isTitle(name):
		f.heading, f.level, f.title = true, 1, true
	default:
		if level := w.x.styles.outline(name); level > 0 {
			f.heading, f.level = true, min(level, 6)
		}
	}
	if !f.heading {
		f.marker = w.marker
	}
	w.marker = ""
	if w.inFlow() {
		if w.x.styles.pageBreakBefore("paragraph", name) {
			w.x.pages.breakBefore()
		}
		f.breakAfter = w.x.styles.pageBreakAfter("paragraph", name)
	}
	w.push(f)
}

// endParagraph closes a paragraph: a top-level one becomes a block; one
// in a table cell joins the cell; one in a paragraph (a text box) joins
// it on a line of its own; one in a note, comment, header or footer is
// a line of it.
func (w *walker) endParagraph() error {
	f := w.paragraph()
	if f == nil {
		return nil
	}
	w.pop()
	text := strings.TrimSpace(clean(string(f.text)))
	if text != "" {
		text = f.marker + text
	}
	switch parent := w.top(); {
	case parent == nil && w.inBody:
		if !f.started {
			f.page = w.x.pages.laidOut() // an empty paragraph takes its line
		}
		kind, level := extract.Paragraph, 0
		if f.heading {
			if h := oneLine(text, maxHeadingBytes+1); len(h) <= maxHeadingBytes {
				kind, level, text = extract.Heading, f.level, h
			}
		}
		if err := w.x.add(kind, level, text, f.page); err != nil {
			return err
		}
		w.x.noteHeading(kind, f.title, text)
		if err := w.flush(); err != nil {
			return err
		}
		if f.breakAfter {
			w.x.pages.breakAfter()
		}
	case parent == nil:
		// A paragraph outside the body and outside any header: none in
		// a valid file; its text is no part of the document.
	case parent.kind == tableFrame:
		parent.addToCell(text)
	case parent.kind == paragraphFrame:
		parent.appendLine(text)
	default:
		if text != "" {
			parent.lines = append(parent.lines, text)
		}
	}
	return nil
}

// startList opens text:list. A nested list without a style of its own
// takes its parent's; text:continue-numbering goes on from the previous
// list at its level.
func (w *walker) startList(e xml.StartElement) {
	name := attr(e, nsText, "style-name")
	if n := len(w.lists); name == "" && n > 0 {
		name = w.lists[n-1].style
	}
	level := len(w.lists) + 1
	l := listState{style: name, numbered: w.x.styles.numbered(name, min(level, maxListLevels)), next: 1}
	if attr(e, nsText, "continue-numbering") == "true" && w.nextAfter[min(level, maxListLevels)] > 0 {
		l.next = w.nextAfter[min(level, maxListLevels)]
	}
	w.lists = append(w.lists, l)
}

// startItem opens text:list-item: its first paragraph gets the marker,
// "- " or, in a numbered list, its number.
func (w *walker) startItem(e xml.StartElement) {
	n := len(w.lists)
	if n == 0 {
		w.marker = "- "
		return
	}
	l := &w.lists[n-1]
	if !l.numbered {
		w.marker = "- "
		return
	}
	if v, err := strconv.Atoi(attr(e, nsText, "start-value")); err == nil && v >= 0 {
		l.next = v
	}
	w.marker = strconv.Itoa(l.next) + ". "
	l.next++
}

// startTable opens table:table.
func (w *walker) startTable(e xml.StartElement) {
	f := &frame{kind: tableFrame}
	if w.inFlow() {
		name := attr(e, nsTable, "style-name")
		if w.x.styles.pageBreakBefore("table", name) {
			w.x.pages.breakBefore()
		}
		f.breakAfter = w.x.styles.pageBreakAfter("table", name)
		f.started, f.page = true, w.x.pages.laidOut()
	}
	w.push(f)
}

// endTable closes a table: a top-level one becomes one Table block; a
// nested one is flattened into the enclosing cell, paragraph or note.
func (w *walker) endTable() error {
	f := w.table()
	if f == nil {
		return nil
	}
	if err := w.x.countText(f.endRow()); err != nil {
		return err
	}
	w.pop()
	text := strings.TrimRightFunc(clean(f.tableText()), isSpace)
	switch parent := w.top(); {
	case parent == nil && w.inBody:
		if err := w.x.add(extract.Table, 0, text, f.page); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		if f.breakAfter {
			w.x.pages.breakAfter()
		}
	case parent == nil:
	case parent.kind == tableFrame:
		parent.addToCell(f.flatText())
	case parent.kind == paragraphFrame:
		parent.appendLine(strings.TrimSpace(text))
	default:
		if text = strings.TrimSpace(text); text != "" {
			parent.lines = append(parent.lines, text)
		}
	}
	return nil
}

// endHeader closes a header or footer, adding its text to list once.
func (w *walker) endHeader(list *[]string) error {
	f := w.collector()
	if f == nil {
		return nil
	}
	w.pop()
	w.headers--
	w.x.addOnce(list, strings.Join(f.lines, "\n"))
	return nil
}

// repeat reads a table:number-*-repeated attribute; 1 when absent.
func repeat(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return n
}
