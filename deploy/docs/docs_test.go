package docs

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// maxREADMELines is issue 38's bound: the README is a manual, details live
// in docs/, and what other work adds to the README counts in it.
const maxREADMELines = 350

// allowedFigures are the only phrases of README.md whose numbers look like
// measurements but are not: each phrase must occur in the README (a stale
// entry fails the test), and only a figure inside one of them is let
// through.
var allowedFigures = []struct{ phrase, reason string }{
	{"the 1.2x goal", "issue 34's goal for a key reading a tenth of the documents, not a measurement; the measured ratio beside it links docs/bench/access.md"},
	{"the goal of 0.9x", "issue 36's goal for the commit path against the same writes without commits, not a measurement; the measured ratios beside it link docs/bench/loading.md"},
	{"the goal of 1.3x", "issue 36's goal for 16 clients against the direct query, not a measurement; the measured ratios beside it link docs/bench/scale-100k.md"},
	{"a process killed every 20 s", "strata-chaos's -kill-every default (issue 37's setting), not a measurement"},
}

// root is the repository's root: this package is deploy/docs.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.work")); err != nil {
		t.Fatalf("%s is not the repository root: %v", dir, err)
	}
	return dir
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// block is a paragraph of Markdown prose (or one table row), with inline
// code blanked out (same length, so offsets hold) and the line it starts on.
type block struct {
	line   int
	text   string
	breaks []int // offsets in text where the page's next lines begin
}

// lineAt is the page's line holding the block's offset off.
func (b block) lineAt(off int) int {
	n := b.line
	for _, br := range b.breaks {
		if off >= br {
			n++
		}
	}
	return n
}

var inlineCode = regexp.MustCompile("`[^`\n]*`")

// prose returns the blocks of a Markdown page outside fenced code blocks.
func prose(page string) []block {
	var blocks []block
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 {
			var breaks []int
			n := 0
			for _, l := range cur[:len(cur)-1] {
				n += len(l) + 1
				breaks = append(breaks, n)
			}
			text := strings.Join(cur, " ")
			text = inlineCode.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
			blocks = append(blocks, block{line: start, text: text, breaks: breaks})
		}
		cur = nil
	}
	fenced := false
	for i, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#"):
			flush() // a table row or a heading is a block of its own
			blocks = append(blocks, block{line: i + 1, text: inlineCode.ReplaceAllStringFunc(trimmed, func(s string) string { return strings.Repeat(" ", len(s)) })})
		default:
			if len(cur) == 0 {
				start = i + 1
			}
			cur = append(cur, trimmed)
		}
	}
	flush()
	return blocks
}

// link is a Markdown link (or image) in a block: its text, its target and
// where the whole link lies in the block.
type link struct {
	text, target string
	start, end   int
}

var linkRE = regexp.MustCompile(`!?\[([^\[\]]*)\]\(([^()\s]+)\)`)

func links(b block) []link {
	var out []link
	for _, m := range linkRE.FindAllStringSubmatchIndex(b.text, -1) {
		out = append(out, link{text: b.text[m[2]:m[3]], target: b.text[m[4]:m[5]], start: m[0], end: m[1]})
	}
	return out
}

// number is a figure as written: its digits without thousands separators
// and how many decimals it has.
type number struct {
	text     string // as written, e.g. "1,068"
	value    float64
	decimals int
}

// numberRE finds numbers that are not part of a word (p50, ES256 and
// scale-100k's 100 are not figures; x1.15 is, a ratio).
var numberRE = regexp.MustCompile(`(^|[^\p{L}\p{N}_.])x?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?`)

func numbers(s string) []number {
	var out []number
	for _, m := range numberRE.FindAllStringSubmatchIndex(s, -1) {
		end, frac := m[5], ""
		if m[6] >= 0 {
			end, frac = m[7], s[m[6]:m[7]]
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(s[m[4]:m[5]], ",", "")+frac, 64)
		if err != nil {
			continue
		}
		dec := 0
		if frac != "" {
			dec = len(frac) - 1
		}
		out = append(out, number{text: s[m[4]:end], value: v, decimals: dec})
	}
	return out
}

// appears reports whether n is one of the report's numbers: the same
// number, or one written there with more decimals that rounds to it (409
// for 409.4, 1.2 for 1.18; not 5.1 for 5070, nor 37 for 36.5).
func appears(n number, report []number) bool {
	p := math.Pow(10, float64(n.decimals))
	for _, r := range report {
		if r.value == n.value {
			return true
		}
		if r.decimals > n.decimals && math.Abs(math.Round(r.value*p)-n.value*p) < 1e-6 {
			return true
		}
	}
	return false
}

// isReport: the measurement reports live under docs/bench and docs/eval.
func isReport(target string) bool {
	return strings.HasPrefix(target, "docs/bench/") || strings.HasPrefix(target, "docs/eval/")
}

func stripFragment(target string) string {
	path, _, _ := strings.Cut(target, "#")
	return path
}

// TestREADMELength: the README is a manual of at most maxREADMELines lines
// that starts with the two commands.
func TestREADMELength(t *testing.T) {
	readme := read(t, filepath.Join(root(t), "README.md"))
	lines := strings.Count(strings.TrimRight(readme, "\n"), "\n") + 1
	if lines > maxREADMELines {
		t.Errorf("README.md has %d lines, more than %d: move details to a page under docs/ and link it", lines, maxREADMELines)
	}
	// The first code block is the two commands.
	_, rest, ok := strings.Cut(readme, "```")
	first, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 || !strings.Contains(first, "go tool task up") || !strings.Contains(first, "go tool task test") {
		t.Errorf("README.md's first code block must be the two commands, go tool task up and go tool task test; it is:\n%s", first)
	}
}

// TestREADMEFiguresInTheirReports: every number in the text of a README
// link to a page under docs/ (e.g. [66 ms](docs/bench/access-changes.md))
// appears in that page, as written or rounded from a number written there
// with more decimals.
func TestREADMEFiguresInTheirReports(t *testing.T) {
	dir := root(t)
	problems, checked := figuresNotInReports(read(t, filepath.Join(dir, "README.md")), func(target string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(target)))
		return string(b), err
	})
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 10 {
		t.Errorf("only %d figures found in README links to docs/: the parser is broken, or the README no longer shows what was measured", checked)
	}
}

// figuresNotInReports checks the numbers of every link to docs/ in readme
// against the linked page (read by readFile, by its path from the root) and
// returns what is wrong and how many numbers it checked.
func figuresNotInReports(readme string, readFile func(target string) (string, error)) (problems []string, checked int) {
	pages := map[string][]number{}
	for _, b := range prose(readme) {
		for _, l := range links(b) {
			target := stripFragment(l.target)
			if !strings.HasPrefix(target, "docs/") {
				continue
			}
			figures := numbers(l.text)
			if len(figures) == 0 {
				continue
			}
			report, ok := pages[target]
			if !ok {
				text, err := readFile(target)
				if err != nil {
					problems = append(problems, fmt.Sprintf("README.md:%d: [%s](%s): %v", b.lineAt(l.start), strings.TrimSpace(l.text), l.target, err))
					continue
				}
				report = numbers(text)
				pages[target] = report
			}
			for _, n := range figures {
				checked++
				if !appears(n, report) {
					problems = append(problems, fmt.Sprintf("README.md:%d: %q in [%s](%s) is not in %s", b.lineAt(l.start), n.text, strings.TrimSpace(l.text), l.target, target))
				}
			}
		}
	}
	return problems, checked
}

// measured finds figures that are measurements: a number (or a range) with
// a unit of time, a ratio, a percentage, a rate or resident memory.
var measured = func() []*regexp.Regexp {
	num := `\d+(?:,\d{3})*(?:\.\d+)?`
	rng := num + `(?:\s*[-–]\s*` + num + `)?`
	before := `(?:^|[^\p{L}\p{N}_.])`
	return []*regexp.Regexp{
		// 66 ms, 2.3-3.0 s, 5 minutes, 1.2x
		regexp.MustCompile(before + rng + `\s*(?:ms|s|sec|secs|seconds?|minutes?|mins?|h|hours?|core-hours|x|×)(?:$|[^\p{L}\p{N}_])`),
		// 10%
		regexp.MustCompile(before + rng + `\s*%`),
		// x1.15
		regexp.MustCompile(`(?:^|[^\p{L}\p{N}_])x` + num),
		// 409/s, 50 uploads/s, 36.97 texts of 512 tokens/s
		regexp.MustCompile(before + rng + `(?:\s*[\p{L}\p{N}-]+){0,4}?\s*/s(?:$|[^\p{L}\p{N}_])`),
		// 1,068 chunks a second
		regexp.MustCompile(before + rng + `(?:\s+[\p{L}\p{N}-]+){0,4}?\s+(?:a|per)\s+second\b`),
		// 58 MiB resident, peak resident memory 58 MiB
		regexp.MustCompile(before + rng + `\s*(?:KiB|MiB|GiB|KB|MB|GB)\s+(?:resident|peak)`),
		regexp.MustCompile(`(?:resident|peak)(?:\s+[\p{L}-]+){0,3}\s+` + rng + `\s*(?:KiB|MiB|GiB|KB|MB|GB)`),
	}
}()

// TestREADMEFiguresAreLinked: a measured figure in the README's prose (code
// blocks and code spans aside) is inside a link to the report it comes
// from, under docs/bench or docs/eval, or inside a phrase of
// allowedFigures; configuration values (64 keys, 1 KiB, default 20) are not
// measurements and use no measured unit.
func TestREADMEFiguresAreLinked(t *testing.T) {
	problems, found, unused := unlinkedFigures(read(t, filepath.Join(root(t), "README.md")))
	for _, p := range problems {
		t.Error(p)
	}
	for _, a := range unused {
		t.Errorf("allowedFigures: %q is no longer in README.md: remove the entry", a)
	}
	if found == 0 {
		t.Errorf("no measured figure found in README.md: the patterns are broken")
	}
}

// unlinkedFigures returns the measured figures of readme outside report
// links and allowed phrases, how many figures it found, and the allowed
// phrases readme no longer has.
func unlinkedFigures(readme string) (problems []string, found int, unused []string) {
	used := make([]bool, len(allowedFigures))
	for _, b := range prose(readme) {
		var covered [][2]int
		for _, l := range links(b) {
			if isReport(stripFragment(l.target)) {
				covered = append(covered, [2]int{l.start, l.end})
			}
		}
		for i, a := range allowedFigures {
			for off := 0; ; {
				j := strings.Index(b.text[off:], a.phrase)
				if j < 0 {
					break
				}
				covered = append(covered, [2]int{off + j, off + j + len(a.phrase)})
				used[i] = true
				off += j + len(a.phrase)
			}
		}
		for _, re := range measured {
			for _, m := range re.FindAllStringIndex(b.text, -1) {
				// the match may begin with the character before the figure
				// and end with the one after it
				start, end := m[0], m[1]
				for start < end && !unicode.IsDigit(rune(b.text[start])) && b.text[start] != 'x' && !isLetter(b.text[start]) {
					start++
				}
				found++
				ok := false
				for _, c := range covered {
					if start >= c[0] && end <= c[1]+1 {
						ok = true
						break
					}
				}
				if !ok {
					figure := strings.TrimSpace(b.text[start:end])
					problems = append(problems, fmt.Sprintf("README.md:%d: measured figure %q is not a link to the report it comes from: write it as [%s](docs/bench/<report>), or add the phrase to allowedFigures with a reason if it is not a measurement", b.lineAt(start), figure, figure))
				}
			}
		}
	}
	for i, a := range allowedFigures {
		if !used[i] {
			unused = append(unused, a.phrase)
		}
	}
	return problems, found, unused
}

func isLetter(c byte) bool { return c < 128 && unicode.IsLetter(rune(c)) }

// TestDocsLinksResolve: every relative link of README.md and
// docs/**/*.md points to a file that exists, and a link to a heading
// (#anchor, in the same page or another Markdown page) to a heading that
// exists.
func TestDocsLinksResolve(t *testing.T) {
	dir := root(t)
	var paths []string
	for _, p := range pages(t, dir) {
		paths = append(paths, filepath.Join(dir, filepath.FromSlash(p)))
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a, nil
	}
	checked := 0
	for _, page := range paths {
		rel, _ := filepath.Rel(dir, page)
		for _, b := range prose(read(t, page)) {
			for _, l := range links(b) {
				if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
					continue
				}
				checked++
				path, fragment, _ := strings.Cut(l.target, "#")
				target := page
				if path != "" {
					target = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
					if _, err := os.Stat(target); err != nil {
						t.Errorf("%s:%d: [%s](%s): no such file", rel, b.lineAt(l.start), strings.TrimSpace(l.text), l.target)
						continue
					}
				}
				if fragment == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				a, err := anchorsOf(target)
				if err != nil {
					t.Errorf("%s:%d: [%s](%s): %v", rel, b.lineAt(l.start), strings.TrimSpace(l.text), l.target, err)
					continue
				}
				if !a[fragment] {
					t.Errorf("%s:%d: [%s](%s): no heading #%s there", rel, b.lineAt(l.start), strings.TrimSpace(l.text), l.target, fragment)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found: the parser is broken", checked)
	}
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation other than - and _ dropped, spaces as -, a repeated
// anchor numbered -1, -2, ...
func headingAnchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		out[anchor] = true
	}
	return out
}

// TestFiguresChecksCatch runs both figure checks on a made-up README and
// report, so that a parser that finds nothing cannot pass them.
func TestFiguresChecksCatch(t *testing.T) {
	report := "| 1KB | 20 | 0 | 66 ms | 86 ms |\nshort TF.js 162.8 texts/s | Go 409.4 texts/s (x2.52)\n1,068 chunks/s, ratio 1.18x, 0.96-1.22\n"
	readFile := func(target string) (string, error) {
		if target != "docs/bench/r.md" {
			return "", os.ErrNotExist
		}
		return report, nil
	}
	readme := "# T\n\n```sh\nsleep 5 s # 99 ms in code is not prose\n```\n\n" +
		"Good: [66 ms](docs/bench/r.md), [409 texts/s](docs/bench/r.md#x), [1,068 chunks/s](docs/bench/r.md),\n" +
		"[1.2x](docs/bench/r.md), [0.96-1.22x](docs/bench/r.md), `42 ms in a code span`, 64 keys, default 20.\n\n" +
		"Bad: [67 ms](docs/bench/r.md), [5.1 s](docs/bench/r.md), [3 ms](docs/bench/missing.md).\n\n" +
		"Unlinked: 31 ms, about 2.3-3.0 s, 3.1x, x1.15, 10%, 50 uploads/s, 58 MiB resident, 1,000 chunks a second,\n" +
		"[12 ms](docs/tools.md), and the 1.2x goal.\n"

	problems, checked := figuresNotInReports(readme, readFile)
	if checked != 8 { // 66, 409, 1,068, 1.2, 0.96, 1.22, 67, 5.1; the links to missing pages are errors
		t.Errorf("checked %d numbers in links to docs/, want 8: %q", checked, problems)
	}
	for _, want := range []string{`"67"`, `"5.1"`, "missing.md", "tools.md"} {
		if !containsAny(problems, want) {
			t.Errorf("figuresNotInReports did not report %s: %q", want, problems)
		}
	}
	if len(problems) != 4 {
		t.Errorf("figuresNotInReports: %d problems, want 4: %q", len(problems), problems)
	}

	problems, found, unused := unlinkedFigures(readme)
	for _, want := range []string{`"31 ms`, `"2.3-3.0 s`, `"3.1x`, `"x1.15`, `"10%`, `"50 uploads/s`, `"58 MiB resident`, `"1,000 chunks a second`, `"12 ms`} {
		if !containsAny(problems, want) {
			t.Errorf("unlinkedFigures did not report %s: %q", want, problems)
		}
	}
	for _, not := range []string{"66 ms", "409", "1,068", "42 ms", "99 ms", "sleep", "64 keys", "default 20", "1.2x goal"} {
		if containsAny(problems, not) {
			t.Errorf("unlinkedFigures reported %q, which is linked, code or configuration: %q", not, problems)
		}
	}
	if found < 15 {
		t.Errorf("unlinkedFigures found %d figures, want at least 15", found)
	}
	if len(unused) != len(allowedFigures)-1 {
		t.Errorf("unused allowed phrases %q: want every one but the 1.2x goal", unused)
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
