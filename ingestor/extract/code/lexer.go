package code

import (
	"strings"
	"unicode/utf8"
)

// syntax is the little lexical knowledge the splitter needs: enough to know
// whether a line starts inside a comment or a string (where nothing can
// start a declaration) and how deeply brackets are nested.
type syntax struct {
	lineComments []string // "//", "--"
	hash         hashRule // when '#' starts a comment
	blockOpen    string   // "/*"
	blockClose   string   // "*/"
	nestedBlocks bool     // Rust, Swift, Kotlin: /* /* */ */ nests
	quotes       []quote  // longer openers first
	rubyDocs     bool     // =begin ... =end
	heredoc      heredocKind
	rustStrings  bool // r#"..."# raw strings, 'x' chars versus 'a lifetimes
	cppRaw       bool // R"delim(...)delim"
	csharp       bool // @"verbatim" and """raw""" strings
	sqlDollar    bool // PostgreSQL $tag$ ... $tag$ bodies
	codeEscapes  bool // shell: a backslash outside strings escapes the next byte (\" or \')

	// starts marks bytes that can begin anything above, so the scanner
	// skips all other bytes with one table lookup.
	starts [256]bool
}

type hashRule uint8

const (
	hashNone      hashRule = iota
	hashAnywhere           // Python, Ruby, PHP, Make
	hashWordStart          // shell: only at the start of a word (${#x} is not a comment)
	hashLineStart          // Dockerfile: only as the first non-blank character
)

type heredocKind uint8

const (
	noHeredoc    heredocKind = iota
	shellHeredoc             // <<EOF, <<-EOF, <<'EOF'
	rubyHeredoc              // <<~EOS, <<-EOS, <<EOS
	phpHeredoc               // <<<EOT, <<<'EOT'
)

// quote is one kind of string literal.
type quote struct {
	open, close string
	escapes     bool // a backslash escapes the next byte
	multiline   bool // may span lines; single-line strings end at the line end
}

// finish fills the start table; call once after building a syntax.
func (s *syntax) finish() *syntax {
	for _, b := range []byte("()[]{}") {
		s.starts[b] = true
	}
	for _, c := range s.lineComments {
		s.starts[c[0]] = true
	}
	if s.blockOpen != "" {
		s.starts[s.blockOpen[0]] = true
	}
	for _, q := range s.quotes {
		s.starts[q.open[0]] = true
	}
	if s.hash == hashAnywhere || s.hash == hashWordStart {
		s.starts['#'] = true
	}
	if s.heredoc != noHeredoc {
		s.starts['<'] = true
	}
	if s.rustStrings {
		s.starts['r'], s.starts['"'], s.starts['\''] = true, true, true
	}
	if s.cppRaw {
		s.starts['R'] = true
	}
	if s.csharp {
		s.starts['"'] = true
	}
	if s.sqlDollar {
		s.starts['$'] = true
	}
	if s.codeEscapes {
		s.starts['\\'] = true
	}
	return s
}

// Line states: what a line starts inside of.
const (
	stateCode uint8 = iota
	stateComment
	stateString // string literal or heredoc body
)

type lexMode uint8

const (
	inCode lexMode = iota
	inComment
	inString
	inHeredoc
	inDoc // Ruby =begin block
)

// lexer carries the state between lines. It looks at every byte at most a
// constant number of times, so scanning is linear in the input.
type lexer struct {
	syn   *syntax
	mode  lexMode
	depth int // bracket nesting in code

	nest int // block comment nesting

	closer    string // terminator of the current string
	escapes   bool
	multiline bool
	doubled   bool // a doubled closer is an escaped quote (C# @"a""b")

	tag       string // heredoc terminator; pending until the line ends
	tagIndent bool   // terminator may be indented
	tagPrefix bool   // PHP: terminator may be followed by ";" or ","
	pending   bool
}

// state is the state at the start of the next line.
func (lx *lexer) state() uint8 {
	switch lx.mode {
	case inComment, inDoc:
		return stateComment
	case inString, inHeredoc:
		return stateString
	}
	return stateCode
}

// line scans one line (without its newline).
func (lx *lexer) line(s string) {
	switch lx.mode {
	case inHeredoc:
		if lx.endsHeredoc(s) {
			lx.mode = inCode
		}
		return
	case inDoc:
		if strings.HasPrefix(s, "=end") {
			lx.mode = inCode
		}
		return
	case inCode:
		if lx.syn.rubyDocs && strings.HasPrefix(s, "=begin") {
			lx.mode = inDoc
			return
		}
		if lx.syn.hash == hashLineStart && strings.HasPrefix(strings.TrimLeft(s, " \t"), "#") {
			return
		}
	}
	for i := 0; i < len(s); {
		switch lx.mode {
		case inComment:
			i = lx.comment(s, i)
		case inString:
			i = lx.str(s, i)
		default:
			i = lx.code(s, i)
		}
	}
	if lx.mode == inString && !lx.multiline {
		lx.mode = inCode // unterminated one-line string: recover at the line end
	}
	if lx.pending {
		lx.pending = false
		lx.mode = inHeredoc
	}
}

// code scans code from i until something changes the mode or the line ends.
func (lx *lexer) code(s string, i int) int {
	syn := lx.syn
	for ; i < len(s); i++ {
		c := s[i]
		if !syn.starts[c] {
			continue
		}
		switch c {
		case '(', '[', '{':
			lx.depth++
			continue
		case ')', ']', '}':
			lx.depth--
			continue
		case '\\':
			i++ // only in starts with codeEscapes
			continue
		}
		if syn.blockOpen != "" && strings.HasPrefix(s[i:], syn.blockOpen) {
			lx.mode, lx.nest = inComment, 1
			return i + len(syn.blockOpen)
		}
		for _, lc := range syn.lineComments {
			if strings.HasPrefix(s[i:], lc) {
				return len(s)
			}
		}
		if c == '#' && lx.hashComment(s, i) {
			return len(s)
		}
		if j, ok := lx.special(s, i); ok {
			return j
		}
		for _, q := range syn.quotes {
			if strings.HasPrefix(s[i:], q.open) {
				lx.enter(q.close, q.escapes, q.multiline, false)
				return i + len(q.open)
			}
		}
	}
	return i
}

func (lx *lexer) enter(closer string, escapes, multiline, doubled bool) {
	lx.mode = inString
	lx.closer, lx.escapes, lx.multiline, lx.doubled = closer, escapes, multiline, doubled
}

func (lx *lexer) hashComment(s string, i int) bool {
	switch lx.syn.hash {
	case hashAnywhere:
		return true
	case hashWordStart:
		return i == 0 || strings.IndexByte(" \t;|&(", s[i-1]) >= 0
	}
	return false
}

// special handles the literals that a plain open/close quote cannot
// describe. It reports the position after what it consumed.
func (lx *lexer) special(s string, i int) (int, bool) {
	syn := lx.syn
	c := s[i]
	switch {
	case syn.rustStrings && c == 'r':
		return lx.rustRaw(s, i)
	case syn.rustStrings && c == '\'':
		return rustChar(s, i), true
	case syn.cppRaw && c == 'R':
		return lx.cppRawString(s, i)
	case syn.csharp && c == '"':
		return lx.csharpString(s, i), true
	case syn.heredoc != noHeredoc && c == '<':
		return lx.heredocStart(s, i)
	case syn.sqlDollar && c == '$':
		return lx.dollarQuote(s, i)
	}
	return i, false
}

// rustRaw recognises r"..." and r#"..."# (also after b).
func (lx *lexer) rustRaw(s string, i int) (int, bool) {
	if i > 0 && isIdent(s[i-1]) && !(s[i-1] == 'b' && (i == 1 || !isIdent(s[i-2]))) {
		return i, false
	}
	j := i + 1
	for j < len(s) && s[j] == '#' {
		j++
	}
	if j >= len(s) || s[j] != '"' {
		return i, false
	}
	lx.enter(`"`+s[i+1:j], false, true, false)
	return j + 1, true
}

// rustChar skips a char literal ('x', '\n', '\u{1F600}') or the quote of a
// lifetime ('a), which must not open a string.
func rustChar(s string, i int) int {
	if i+1 < len(s) && s[i+1] == '\\' {
		end := min(len(s), i+14)
		if i+3 <= end {
			if k := strings.IndexByte(s[i+3:end], '\''); k >= 0 {
				return i + 3 + k + 1
			}
		}
		return i + 1
	}
	if i+1 < len(s) {
		_, size := utf8.DecodeRuneInString(s[i+1:])
		if k := i + 1 + size; k < len(s) && s[k] == '\'' {
			return k + 1
		}
	}
	return i + 1
}

// cppRawString recognises R"delim( ... )delim" (also u8R, LR...).
func (lx *lexer) cppRawString(s string, i int) (int, bool) {
	if i > 0 && isIdent(s[i-1]) && strings.IndexByte("8uUL", s[i-1]) < 0 {
		return i, false
	}
	if i+1 >= len(s) || s[i+1] != '"' {
		return i, false
	}
	const maxDelim = 16 // the standard's limit
	for k := i + 2; k < len(s) && k <= i+2+maxDelim; k++ {
		switch s[k] {
		case '(':
			lx.enter(")"+s[i+2:k]+`"`, false, true, false)
			return k + 1, true
		case ' ', ')', '\\', '"', '\t':
			return i, false
		}
	}
	return i, false
}

// csharpString opens a C# string at a double quote: """raw""", @"verbatim"
// (which span lines) or a regular one.
func (lx *lexer) csharpString(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '"' {
		n++
	}
	switch {
	case n >= 3:
		lx.enter(s[i:i+n], false, true, false)
		return i + n
	case i > 0 && (s[i-1] == '@' || (s[i-1] == '$' && i > 1 && s[i-2] == '@')):
		lx.enter(`"`, false, true, true)
	default:
		lx.enter(`"`, true, false, false)
	}
	return i + 1
}

// heredocStart notes a heredoc whose body starts on the next line.
func (lx *lexer) heredocStart(s string, i int) (int, bool) {
	kind := lx.syn.heredoc
	j := i
	switch kind {
	case phpHeredoc:
		if !strings.HasPrefix(s[i:], "<<<") {
			return i, false
		}
		j += 3
	default:
		if !strings.HasPrefix(s[i:], "<<") || strings.HasPrefix(s[i:], "<<<") {
			return i, false
		}
		j += 2
	}
	indent := kind == phpHeredoc
	if j < len(s) && (s[j] == '-' || (kind == rubyHeredoc && s[j] == '~')) {
		indent = true
		j++
	}
	if kind != rubyHeredoc {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
	}
	quoted := false
	if j < len(s) && (s[j] == '\'' || s[j] == '"' || (kind == shellHeredoc && s[j] == '\\')) {
		quoted = true
		j++
	}
	w := j
	for j < len(s) && isIdent(s[j]) {
		j++
	}
	if j == w || isDigit(s[w]) {
		return i, false
	}
	// Ruby: "a <<b" is a shift or push; heredoc tags are quoted or upper case.
	if kind == rubyHeredoc && !quoted && !indent && !(s[w] >= 'A' && s[w] <= 'Z' || s[w] == '_') {
		return i, false
	}
	if quoted && j < len(s) && (s[j] == '\'' || s[j] == '"') {
		j++
	}
	lx.tag = strings.Trim(s[w:j], `'"`)
	lx.tagIndent, lx.tagPrefix, lx.pending = indent, kind == phpHeredoc, true
	return j, true
}

// endsHeredoc reports whether line s is the heredoc's terminator.
func (lx *lexer) endsHeredoc(s string) bool {
	t := strings.TrimRight(s, " \t\r")
	if lx.tagIndent {
		t = strings.TrimLeft(t, " \t")
	}
	if !strings.HasPrefix(t, lx.tag) {
		return false
	}
	if len(t) == len(lx.tag) {
		return true
	}
	return lx.tagPrefix && !isIdent(t[len(lx.tag)])
}

// dollarQuote opens a PostgreSQL $$ or $tag$ string. $1 is a parameter.
func (lx *lexer) dollarQuote(s string, i int) (int, bool) {
	j := i + 1
	if j < len(s) && isDigit(s[j]) {
		return i, false
	}
	for j < len(s) && isIdent(s[j]) && j-i < 64 {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return i, false
	}
	lx.enter(s[i:j+1], false, true, false)
	return j + 1, true
}

// comment scans a block comment from i.
func (lx *lexer) comment(s string, i int) int {
	syn := lx.syn
	for i < len(s) {
		switch {
		case syn.nestedBlocks && strings.HasPrefix(s[i:], syn.blockOpen):
			lx.nest++
			i += len(syn.blockOpen)
		case strings.HasPrefix(s[i:], syn.blockClose):
			i += len(syn.blockClose)
			if lx.nest--; lx.nest <= 0 {
				lx.mode = inCode
				return i
			}
		default:
			i++
		}
	}
	return i
}

// str scans a string literal from i.
func (lx *lexer) str(s string, i int) int {
	c0 := lx.closer[0]
	for i < len(s) {
		c := s[i]
		if lx.escapes && c == '\\' {
			i += 2
			continue
		}
		if c == c0 && strings.HasPrefix(s[i:], lx.closer) {
			if lx.doubled && i+1 < len(s) && s[i+1] == c0 {
				i += 2
				continue
			}
			lx.mode = inCode
			return i + len(lx.closer)
		}
		i++
	}
	return len(s)
}

func isIdent(c byte) bool {
	return c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
