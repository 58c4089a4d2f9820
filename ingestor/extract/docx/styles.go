package docx

import (
	"encoding/xml"
	"strconv"
	"strings"
)

// maxStyleChain bounds basedOn chains, which a hostile file can make
// cyclic.
const maxStyleChain = 16

// style is what we need of a paragraph style from word/styles.xml.
type style struct {
	name    string
	basedOn string
	outline int // w:outlineLvl, 0-based; -1 when absent
	// breakBefore is w:pageBreakBefore: 1 on, 0 off, -1 absent
	// (inherited through basedOn).
	breakBefore int
}

// styleSheet maps style ids to styles.
type styleSheet map[string]style

// parseStyles reads the paragraph styles of word/styles.xml.
func (x *extraction) parseStyles(t *tokens) error {
	var cur *style
	var id string
	return t.each(func(tok xml.Token) error {
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "style":
				typ := attr(tok, "type")
				if typ != "" && typ != "paragraph" { // character, table and numbering styles never make headings
					return t.skip()
				}
				id, cur = attr(tok, "styleId"), &style{outline: -1, breakBefore: -1}
			case "name":
				if cur != nil {
					cur.name = attr(tok, "val")
				}
			case "basedOn":
				if cur != nil {
					cur.basedOn = attr(tok, "val")
				}
			case "outlineLvl":
				if cur != nil {
					cur.outline = parseOutline(attr(tok, "val"))
				}
			case "pageBreakBefore":
				if cur != nil {
					cur.breakBefore = onOff(tok)
				}
			}
		case xml.EndElement:
			if tok.Name.Local == "style" && cur != nil {
				if _, dup := x.style[id]; !dup && id != "" {
					x.style[id] = *cur
				}
				cur = nil
			}
		}
		return nil
	})
}

// heading returns the heading level (1-6) a paragraph style gives, 0 for
// none, and whether it is the Title style. Built-in heading styles are
// named "heading 1".."heading 9" whatever the UI language (only the ids
// are localised); a style without a recognisable name may still carry
// an outline level or inherit one through basedOn. Ids like "Heading1"
// are recognised too, for files without styles.xml.
func (s styleSheet) heading(id string) (level int, title bool) {
	for i := 0; i < maxStyleChain && id != ""; i++ {
		st, known := s[id]
		if known {
			if lvl, t := levelFromName(st.name); lvl > 0 {
				return lvl, t
			}
			if st.outline >= 0 && st.outline <= 8 {
				return clampLevel(st.outline + 1), false
			}
		}
		if lvl, t := levelFromName(id); lvl > 0 {
			return lvl, t
		}
		id = st.basedOn
	}
	return 0, false
}

// breakBefore reports whether a paragraph style, or the first style up
// its basedOn chain that says, sets w:pageBreakBefore.
func (s styleSheet) breakBefore(id string) bool {
	for i := 0; i < maxStyleChain && id != ""; i++ {
		st, known := s[id]
		if !known {
			return false
		}
		if st.breakBefore >= 0 {
			return st.breakBefore == 1
		}
		id = st.basedOn
	}
	return false
}

// onOff reads a toggle property (ST_OnOff): present without w:val, or
// with any value but false/0/off, means on. It returns 1 or 0.
func onOff(e xml.StartElement) int {
	switch strings.ToLower(attr(e, "val")) {
	case "0", "false", "off":
		return 0
	}
	return 1
}

// levelFromName recognises "heading N" / "HeadingN" and "Title".
func levelFromName(name string) (level int, title bool) {
	n := strings.ToLower(strings.ReplaceAll(name, " ", ""))
	if n == "title" {
		return 1, true
	}
	rest, ok := strings.CutPrefix(n, "heading")
	if !ok || len(rest) != 1 || rest[0] < '1' || rest[0] > '9' {
		return 0, false
	}
	return clampLevel(int(rest[0] - '0')), false
}

// parseOutline parses a w:outlineLvl value: 0-8 are heading levels, 9 is
// body text. Anything else counts as absent.
func parseOutline(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 9 {
		return -1
	}
	return n
}

// clampLevel maps Word's nine levels onto our six.
func clampLevel(l int) int {
	return min(max(l, 1), 6)
}
