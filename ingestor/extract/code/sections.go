package code

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-kb/strata/ingestor/extract"
)

// line is one line of the source. Offsets are int32 to halve the memory of
// files with millions of short lines; Extract rejects larger inputs.
type line struct {
	start int32 // offset of the line's first byte
	body  int32 // after the leading spaces and tabs
	last  int32 // the line's end without its newline and trailing white space
	depth int32 // bracket depth at the line start
	state uint8 // stateCode, stateComment or stateString at the line start
	blank bool
}

func (l line) indent() int { return int(l.body - l.start) }

// file is a source being split.
type file struct {
	text   string
	lines  []line
	spec   *spec
	blocks []extract.Block
	// lim and held bound the text and blocks held (MaxFileBytes); err is
	// set, and nothing more added, once they pass it.
	lim  extract.Limits
	held int64
	err  error
}

// maxSignature bounds the bytes of a line that declaration patterns look
// at, so a 10 MB line costs no more than a short one.
const maxSignature = 512

// maxLevel is the deepest heading level: top-level declarations, their
// members, and members of nested classes (or classes in a C# namespace).
const maxLevel = 3

// ctxEvery is how many lines pass between context checks.
const ctxEvery = 1024

// content is line i without indentation and trailing space, cut to
// maxSignature bytes.
func (f *file) content(i int) string {
	l := f.lines[i]
	if l.body >= l.last {
		return ""
	}
	s := f.text[l.body:l.last]
	if len(s) > maxSignature {
		s = s[:maxSignature]
	}
	return s
}

// scanLines splits the text into lines and records the lexical state at
// the start of each. open is the 1-based line where a comment or string
// that is still open at the end of the file began, or 0: such a file is
// probably cut short or mis-lexed, and nothing after that line was split.
func scanLines(ctx context.Context, text string, syn *syntax) (lines []line, open int, err error) {
	lines = make([]line, 0, strings.Count(text, "\n")+1)
	lx := lexer{syn: syn}
	for start := 0; start < len(text); {
		if len(lines)%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, fmt.Errorf("%w: scanning line %d: %v", extract.ErrTimeout, len(lines)+1, err)
			}
		}
		end := len(text)
		next := len(text)
		if k := strings.IndexByte(text[start:], '\n'); k >= 0 {
			end, next = start+k, start+k+1
		}
		l := measure(text, start, end)
		l.depth, l.state = int32(lx.depth), lx.state()
		lines = append(lines, l)
		lx.line(text[start:end])
		if l.state == stateCode && lx.mode != inCode {
			open = len(lines)
		}
		start = next
	}
	if lx.mode == inCode {
		open = 0
	}
	return lines, open, nil
}

// measure finds a line's indentation and trailing white space. Blank means
// only white space, with the same set as extract's blank test (including
// no-break space) so no block is blank to extract either.
func measure(text string, start, end int) line {
	body := start
	for body < end && (text[body] == ' ' || text[body] == '\t') {
		body++
	}
	first := body
	for first < end {
		if isSpace(text[first]) {
			first++
		} else if text[first] == 0xC2 && first+1 < end && text[first+1] == 0xA0 {
			first += 2
		} else {
			break
		}
	}
	last := end
	for last > first {
		if isSpace(text[last-1]) {
			last--
		} else if text[last-1] == 0xA0 && last-2 >= first && text[last-2] == 0xC2 {
			last -= 2
		} else {
			break
		}
	}
	return line{
		start: int32(start), body: int32(body), last: int32(last),
		blank: first >= last,
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// decl is one declaration: its section starts at line start (its first
// leading comment or decorator) and its signature is line sig.
type decl struct{ start, sig int }

// findDecls finds the declarations among lines [lo, hi) indented by
// exactly indent bytes. Comment, decorator and attribute lines directly
// above a declaration, and the continuation lines of a multi-line
// decorator, belong to it.
func (f *file) findDecls(ctx context.Context, lo, hi, indent int, m matcher) ([]decl, error) {
	var out []decl
	attach := -1 // first line of the current run of attachable lines
	var attachDepth int32
	for i := lo; i < hi; i++ {
		if (i-lo)%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("%w: splitting at line %d: %v", extract.ErrTimeout, i+1, err)
			}
		}
		l := f.lines[i]
		switch {
		case l.blank:
			attach = -1
		case l.state == stateCode && l.indent() == indent && m(f, i):
			start := i
			if attach >= 0 {
				start = attach
			}
			out = append(out, decl{start: start, sig: i})
			attach = -1
		case attach >= 0 && (l.state != stateCode || l.depth > attachDepth):
			// inside a doc comment, or inside the parentheses of @decorator(
		case l.state == stateCode && l.indent() == indent && f.attachable(i):
			if attach < 0 {
				attach, attachDepth = i, l.depth
			}
		default:
			attach = -1
		}
	}
	return out, nil
}

// attachable reports whether line i is a comment, decorator or attribute
// that would belong to a declaration below it.
func (f *file) attachable(i int) bool {
	s := f.content(i)
	syn := f.spec.syn
	if syn.blockOpen != "" && strings.HasPrefix(s, syn.blockOpen) {
		return true
	}
	for _, lc := range syn.lineComments {
		if strings.HasPrefix(s, lc) {
			return true
		}
	}
	// A shebang is the file's, not the first function's.
	if syn.hash != hashNone && strings.HasPrefix(s, "#") && !strings.HasPrefix(s, "#!") {
		return true
	}
	return f.spec.attach != nil && f.spec.attach(s)
}

// bodyIndent is the indentation of the members of the declaration at line
// sig, whose section ends before line hi. ok is false when the body is not
// indented deeper than the declaration (nothing to split).
func (f *file) bodyIndent(sig, hi int) (indent int, ok bool) {
	base := f.lines[sig].indent()
	for j := sig + 1; j < hi; j++ {
		l := f.lines[j]
		if l.blank || l.state != stateCode {
			continue
		}
		if s := f.content(j); s == "{" || isAccessLabel(s) {
			continue // Allman brace, C++ "public:"
		}
		return l.indent(), l.indent() > base
	}
	return 0, false
}

func isAccessLabel(s string) bool {
	for _, p := range []string{"public", "private", "protected"} {
		if rest, ok := strings.CutPrefix(s, p); ok && strings.TrimSpace(rest) == ":" {
			return true
		}
	}
	return false
}

// emit appends the blocks for lines [lo, hi), which hold decls: the code
// before the first one, then for each a heading and its body. Bodies of
// containers (classes, impl blocks) are split on their members one level
// deeper.
func (f *file) emit(ctx context.Context, lo, hi int, decls []decl, level int) error {
	first := hi
	if len(decls) > 0 {
		first = decls[0].start
	}
	f.code(lo, first)
	for k, d := range decls {
		end := hi
		if k+1 < len(decls) {
			end = decls[k+1].start
		}
		f.add(extract.Heading, level, d.start, d.sig)
		members, err := f.members(ctx, d.sig, end, level)
		if err != nil {
			return err
		}
		if len(members) == 0 {
			f.code(d.sig+1, end)
			continue
		}
		if err := f.emit(ctx, d.sig+1, end, members, level+1); err != nil {
			return err
		}
	}
	return nil
}

// members finds the member declarations of the declaration at line sig,
// when it is a container and headings may go one level deeper.
func (f *file) members(ctx context.Context, sig, end, level int) ([]decl, error) {
	sp := f.spec
	if level >= maxLevel || sp.container == nil || sp.member == nil || !sp.container(f.content(sig)) {
		return nil, nil
	}
	indent, ok := f.bodyIndent(sig, end)
	if !ok {
		return nil, nil
	}
	return f.findDecls(ctx, sig+1, end, indent, sp.member)
}

// code adds a Code block for the non-blank lines among [lo, hi), if any.
func (f *file) code(lo, hi int) {
	for lo < hi && f.lines[lo].blank {
		lo++
	}
	for hi > lo && f.lines[hi-1].blank {
		hi--
	}
	if lo < hi {
		f.add(extract.Code, 0, lo, hi-1)
	}
}

// add appends a block from the start of line a to the end of the
// non-blank line b.
func (f *file) add(kind extract.Kind, level, a, b int) {
	if f.err != nil {
		return
	}
	if f.err = extract.Hold(&f.held, extract.BlockBytes, f.lim); f.err != nil {
		return
	}
	f.blocks = append(f.blocks, extract.Block{
		Kind:  kind,
		Level: level,
		Start: int(f.lines[a].start),
		End:   int(f.lines[b].last),
	})
}
