package odt

import (
	"encoding/xml"
	"strconv"
	"strings"
)

// Styles matter to the text in three ways: a paragraph or table style may
// start a new page (fo:break-before="page", fo:break-after="page", or a
// master page of its own: pages.go); a paragraph style may be the Title
// style (a level-1 heading, as in DOCX) or give a heading its outline
// level; a list style says whether a list is numbered.
//
// Common styles (office:styles, in styles.xml) have names the author
// sees; automatic styles (office:automatic-styles in content.xml) are the
// direct formatting of one paragraph, and point at a common parent.
// styles.xml has automatic styles of its own, for headers and footers,
// whose names may clash with content.xml's: they are not read.

// maxStyles bounds the styles kept; real documents have a few hundred.
const maxStyles = 20000

// maxChain bounds the parent chain followed, against loops.
const maxChain = 16

// style is what a paragraph or table style says about pages and
// headings; -1 is "not set here" (inherited from the parent).
type style struct {
	parent      string
	breakBefore int // 1 a page break, 0 none (auto or column), -1 not set
	breakAfter  int
	masterPage  bool // style:master-page-name: a page of that master starts here
	outline     int  // style:default-outline-level; 0 not set
}

// styleSheet holds the styles of a document, by family and name.
type styleSheet struct {
	common, automatic map[string]*style
	lists             map[string][]bool // list style name -> numbered, per level (1-based index-1)
	automaticLists    map[string][]bool
}

func newStyleSheet() *styleSheet {
	return &styleSheet{common: map[string]*style{}, automatic: map[string]*style{},
		lists: map[string][]bool{}, automaticLists: map[string][]bool{}}
}

// key is the map key of a style: families have separate names.
func key(family, name string) string { return family + "\x00" + name }

// lookup finds a style, automatic first.
func (s *styleSheet) lookup(family, name string) *style {
	if st := s.automatic[key(family, name)]; st != nil {
		return st
	}
	return s.common[key(family, name)]
}

// chain calls fn on the style and its ancestors, until fn returns true.
// A name with no style (a common style the file uses but does not
// define) is passed with st nil and ends the chain.
func (s *styleSheet) chain(family, name string, fn func(name string, st *style) bool) {
	st := s.lookup(family, name)
	for i := 0; i < maxChain && name != ""; i++ {
		if fn(name, st) || st == nil {
			return
		}
		// A parent is a common style.
		name = st.parent
		st = s.common[key(family, name)]
	}
}

// pageBreakBefore reports whether a style starts its paragraph or table
// on a new page.
func (s *styleSheet) pageBreakBefore(family, name string) bool {
	brk := false
	s.chain(family, name, func(_ string, st *style) bool {
		if st == nil {
			return true
		}
		if st.masterPage {
			brk = true
			return true
		}
		if st.breakBefore >= 0 {
			brk = st.breakBefore == 1
			return true
		}
		return false
	})
	return brk
}

// pageBreakAfter reports whether a style ends its paragraph or table with
// a page break.
func (s *styleSheet) pageBreakAfter(family, name string) bool {
	brk := false
	s.chain(family, name, func(_ string, st *style) bool {
		if st == nil {
			return true
		}
		if st.breakAfter >= 0 {
			brk = st.breakAfter == 1
			return true
		}
		return false
	})
	return brk
}

// outline is a paragraph style's heading level, 0 when it is none: its
// style:default-outline-level, or N for LibreOffice's built-in "Heading
// N" (named Heading_20_N), inherited. LibreOffice writes a heading in
// the outline as text:h, but a paragraph in a Heading style outside it
// (HTML it imported, a document whose outline numbering was changed) as
// text:p; it reads as a heading all the same.
func (s *styleSheet) outline(name string) int {
	level := 0
	s.chain("paragraph", name, func(n string, st *style) bool {
		if st != nil && st.outline > 0 {
			level = st.outline
		} else if l, err := strconv.Atoi(strings.TrimPrefix(n, "Heading_20_")); err == nil && strings.HasPrefix(n, "Heading_20_") {
			level = l
		}
		return level > 0
	})
	return level
}

// isTitle reports whether a paragraph style is, or derives from, the
// Title style.
func (s *styleSheet) isTitle(name string) bool {
	title := false
	s.chain("paragraph", name, func(n string, _ *style) bool {
		title = n == "Title"
		return title
	})
	return title
}

// numbered reports whether a list style numbers its items at level
// (1-based): its level style is text:list-level-style-number with a
// number format.
func (s *styleSheet) numbered(name string, level int) bool {
	levels, ok := s.automaticLists[name]
	if !ok {
		levels = s.lists[name]
	}
	return level >= 1 && level <= len(levels) && levels[level-1]
}

// maxListLevels is ODF's deepest list level.
const maxListLevels = 10

// parseStyles reads the children of office:styles or
// office:automatic-styles, whose start was just read, into the common or
// automatic styles.
func (s *styleSheet) parseStyles(t *tokens, automatic bool) error {
	styles, lists := s.common, s.lists
	if automatic {
		styles, lists = s.automatic, s.automaticLists
	}
	var cur *style  // the style:style being read
	var list []bool // the text:list-style being read
	var listName string
	for depth := 1; depth > 0; {
		tok, err := t.next()
		if err != nil {
			return unexpectedEOF(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			switch tok.Name {
			case styleStyle:
				cur = nil
				if len(styles) < maxStyles {
					cur = &style{parent: attr(tok, nsStyle, "parent-style-name"), breakBefore: -1, breakAfter: -1,
						masterPage: attr(tok, nsStyle, "master-page-name") != ""}
					cur.outline, _ = strconv.Atoi(attr(tok, nsStyle, "default-outline-level"))
					styles[key(attr(tok, nsStyle, "family"), attr(tok, nsStyle, "name"))] = cur
				}
			case styleParagraphProps, styleTableProps:
				if cur != nil {
					cur.breakBefore = breakValue(attr(tok, nsFO, "break-before"))
					cur.breakAfter = breakValue(attr(tok, nsFO, "break-after"))
				}
			case textListStyle:
				list, listName = make([]bool, maxListLevels), attr(tok, nsStyle, "name")
			case textListLevelNumber, textListLevelBullet, textListLevelImage:
				level, err := strconv.Atoi(attr(tok, nsText, "level"))
				if list != nil && err == nil && level >= 1 && level <= maxListLevels {
					list[level-1] = tok.Name == textListLevelNumber && attr(tok, nsStyle, "num-format") != ""
				}
			}
		case xml.EndElement:
			depth--
			switch tok.Name {
			case styleStyle:
				cur = nil
			case textListStyle:
				if list != nil && len(lists) < maxStyles {
					lists[listName] = list
				}
				list = nil
			}
		}
	}
	return nil
}

// breakValue reads fo:break-before or fo:break-after.
func breakValue(v string) int {
	switch v {
	case "page":
		return 1
	case "":
		return -1
	}
	return 0 // auto, column
}
