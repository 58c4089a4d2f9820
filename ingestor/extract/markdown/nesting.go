package markdown

import "bytes"

// goldmark's work on a line grows with the containers open on it times the
// line's indentation, so nesting no real document has is quadratic: half a
// megabyte of "- - - ..." took minutes, 2.5 MB of lists indented one level
// per line 6 s. The parser therefore reads a copy of the text in which a
// line's container prefix ends at these bounds: the byte there becomes 'x',
// so the rest of the line is text inside the deepest container kept. Line
// breaks and byte offsets are unchanged, and blocks are still cut from the
// original text.
const (
	maxPrefixMarkers = 16  // '>' and list markers opening one line
	maxPrefixColumns = 128 // columns of those markers and indentation
)

// boundNesting applies the bounds to src in place and reports whether it
// changed anything.
func boundNesting(src []byte) bool {
	changed := false
	for off := 0; off < len(src); {
		end := len(src)
		if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
			end = off + i
		}
		if !isThematicBreak(src[off:end]) { // "* * * * ..." rules of any length stay rules
			if i := prefixLimit(src[off:end]); i >= 0 {
				src[off+i] = 'x'
				changed = true
			}
		}
		off = end + 1
	}
	return changed
}

// prefixLimit returns where line's container prefix (spaces, tabs, '>',
// list markers) passes the bounds, or -1.
func prefixLimit(line []byte) int {
	col, markers := 0, 0
	for i := 0; i < len(line); {
		tok := i
		switch c := line[i]; {
		case c == ' ':
			col, i = col+1, i+1
		case c == '\t':
			col, i = col+4-col%4, i+1
		case c == '>':
			col, i, markers = col+1, i+1, markers+1
		case (c == '-' || c == '+' || c == '*') && i+1 < len(line) && isBlank(line[i+1]):
			col, i, markers = col+1, i+1, markers+1
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j+1 >= len(line) || (line[j] != '.' && line[j] != ')') || !isBlank(line[j+1]) {
				return -1
			}
			col, i, markers = col+j+1-i, j+1, markers+1
		default:
			return -1
		}
		if markers > maxPrefixMarkers || col > maxPrefixColumns {
			return tok
		}
	}
	return -1
}

// isThematicBreak reports whether line is three or more of one of - * _
// with only spaces and tabs between.
func isThematicBreak(line []byte) bool {
	var mark byte
	n := 0
	for _, c := range line {
		switch {
		case isBlank(c) || c == '\r':
		case (c == '-' || c == '*' || c == '_') && (mark == 0 || c == mark):
			mark, n = c, n+1
		default:
			return false
		}
	}
	return n >= 3
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }
