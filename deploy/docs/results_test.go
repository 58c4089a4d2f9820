package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A report under docs/bench or docs/eval says what it found today in its
// Result lines: lines outside code that begin with "Result:". A report
// that keeps a run from before a change (a "Before" section, an earlier
// run) keeps it as history; its Result lines are the current figures, and
// the README quotes those.
//
// The figures the README quotes from a report are the numbers in the text
// of a link to it: [153 ms median, 335 ms worst](docs/bench/weaviate-failover.md).
// TestREADMEFiguresAreLinked makes every measured figure of the README
// (a number with a unit of time, a ratio, a percentage, a rate, resident
// memory) part of such a link's text, so a figure beside a link, not in
// it, fails there. Numbers in a link's text that are not measurements (the
// 10k of "to 10k", the 512 of "512 tokens") are checked too: the Result
// line says what they qualify.
//
// Only Markdown reports carry Result lines: a .txt report (latest.txt) is
// a program's raw output, written whole by go tool task bench, where a line
// written by hand would be lost at the next run; the figures quoted from
// it are checked against its whole text by TestREADMEFiguresInTheirReports.

// resultLines returns a page's Result lines, without "Result:".
func resultLines(page string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if rest, ok := strings.CutPrefix(trimmed, "Result:"); ok && !fenced {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

// TestREADMEFiguresAreReportsResults: every number in the text of a README
// link to a Markdown report under docs/bench or docs/eval appears in that
// report's Result lines (as written, or rounded from a number written there
// with more decimals), and such a report has at least one Result line.
func TestREADMEFiguresAreReportsResults(t *testing.T) {
	dir := root(t)
	problems, checked := figuresNotInResults(read(t, filepath.Join(dir, "README.md")), func(target string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(target)))
		return string(b), err
	})
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 10 {
		t.Errorf("only %d figures found in README links to Markdown reports: the parser is broken, or the README no longer shows what was measured", checked)
	}
}

// figuresNotInResults checks the numbers of every README link to a Markdown
// report against the report's Result lines (readFile reads a page by its
// path from the root) and returns what is wrong and how many numbers it
// checked.
func figuresNotInResults(readme string, readFile func(target string) (string, error)) (problems []string, checked int) {
	type report struct {
		results []string
		numbers []number
		err     error
	}
	reports := map[string]*report{}
	reported := map[string]bool{} // a report without Result lines is reported once
	for _, b := range prose(readme) {
		for _, l := range links(b) {
			target := stripFragment(l.target)
			if !isReport(target) || !strings.HasSuffix(target, ".md") {
				continue
			}
			figures := numbers(l.text)
			if len(figures) == 0 {
				continue
			}
			where := fmt.Sprintf("README.md:%d: [%s](%s)", b.lineAt(l.start), strings.TrimSpace(l.text), l.target)
			r, ok := reports[target]
			if !ok {
				r = &report{}
				text, err := readFile(target)
				r.err = err
				r.results = resultLines(text)
				r.numbers = numbers(strings.Join(r.results, "\n"))
				reports[target] = r
			}
			switch {
			case r.err != nil:
				problems = append(problems, fmt.Sprintf("%s: %v", where, r.err))
				continue
			case len(r.results) == 0:
				if !reported[target] {
					reported[target] = true
					problems = append(problems, fmt.Sprintf("%s: %s has no line beginning \"Result:\": add one stating its current figures as its tables give them", where, target))
				}
				continue
			}
			for _, n := range figures {
				checked++
				if !appears(n, r.numbers) {
					problems = append(problems, fmt.Sprintf("%s: %q is not in %s's Result line(s): %q", where, n.text, target, r.results))
				}
			}
		}
	}
	return problems, checked
}

// TestResultChecksCatch runs the Result check on a made-up README and
// reports, so that each way it can fail is seen failing.
func TestResultChecksCatch(t *testing.T) {
	pages := map[string]string{
		"docs/bench/failover.md": "# F\n\nResult: median 153 ms, worst 335 ms over 10 kills.\n\n" +
			"Before: worst 851 ms.\n\n```\nResult: 999 ms in code is not a Result line\n```\n",
		"docs/bench/plain.md": "# P\n\n| run | 31 ms |\n",
		"docs/bench/two.md":   "Result: 1.16-1.21x for vector search\n  Result: 1.10-1.17x for hybrid search\n",
		"docs/bench/raw.txt":  "BenchmarkX 417.0 texts/s\n",
	}
	readFile := func(target string) (string, error) {
		if p, ok := pages[target]; ok {
			return p, nil
		}
		return "", os.ErrNotExist
	}
	readme := "Good: [153 ms median, 335 ms worst](docs/bench/failover.md#f) of [10 kills](docs/bench/failover.md),\n" +
		"[1.2x](docs/bench/two.md), [1.10-1.17x](docs/bench/two.md), [417 texts/s](docs/bench/raw.txt), [12 ms](docs/tools.md).\n\n" +
		"Bad: [851 ms](docs/bench/failover.md), [999 ms](docs/bench/failover.md), [31 ms](docs/bench/plain.md),\n" +
		"[32 ms](docs/bench/plain.md), [3 ms](docs/bench/missing.md).\n"
	problems, checked := figuresNotInResults(readme, readFile)
	// 153, 335, 10, 1.2, 1.10, 1.17, 851, 999: not those of a report without
	// Result lines, a missing one, a .txt report or a page that is no report
	if checked != 8 {
		t.Errorf("checked %d numbers, want 8: %q", checked, problems)
	}
	for _, want := range []string{`"851"`, `"999"`, "plain.md has no line", "missing.md"} {
		if !containsAny(problems, want) {
			t.Errorf("figuresNotInResults did not report %s: %q", want, problems)
		}
	}
	if len(problems) != 4 {
		t.Errorf("figuresNotInResults: %d problems, want 4 (plain.md once, not twice): %q", len(problems), problems)
	}
	if got := resultLines(pages["docs/bench/two.md"]); len(got) != 2 || got[1] != "1.10-1.17x for hybrid search" {
		t.Errorf("resultLines = %q, want both lines without \"Result:\"", got)
	}
	if got := resultLines(pages["docs/bench/failover.md"]); len(got) != 1 {
		t.Errorf("resultLines = %q, want the line outside code only", got)
	}
}
