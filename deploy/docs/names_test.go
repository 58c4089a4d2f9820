package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// This file checks that the documentation names only what exists: every
// task it tells to run (go tool task <name>) is one of Taskfile.yml's, and
// every repository path it writes as code or in a link (a program to go
// run, a package, a file) is in the repository.

// allowedPaths are the only repository paths the documentation may name
// that do not exist. Each entry must still be named somewhere (a stale
// entry fails the test).
var allowedPaths = []struct{ path, reason string }{
	{"docs/guide.md", "README's upload examples: the object key acme/docs/guide.md is docs/guide.md in project acme, not a repository path"},
	{"shared/embed", "docs/decisions.md tells where the embedding engine lived before it moved to embedder/engine"},
	{"embedder/embed", "docs/decisions.md tells the embedding engine's name before issue 51 renamed it embedder/engine"},
}

// pages returns README.md and every Markdown page under docs/, recursively, by
// their path from the root (slashes), in a fixed order.
func pages(t *testing.T, dir string) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(dir, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out[1:])
	return out
}

// snippet is a piece of a page's code: an inline code span, or one line of
// a fenced code block, with the page's line it is on.
type snippet struct {
	line int
	text string
}

// code returns a page's code: its inline code spans (outside fenced
// blocks) and every line of its fenced blocks.
func code(page string) []snippet {
	var out []snippet
	fenced := false
	for i, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			out = append(out, snippet{i + 1, line})
			continue
		}
		for _, span := range inlineCode.FindAllString(line, -1) {
			out = append(out, snippet{i + 1, strings.Trim(span, "`")})
		}
	}
	return out
}

// mention is a name the documentation gives, and where.
type mention struct {
	line int
	name string
}

// taskName is what may follow "task": a task of Taskfile.yml, or of an
// included one as namespace:task.
const taskName = `([A-Za-z_][\w:.-]*)`

var (
	// goToolTask is the command anywhere in a page, prose or code, even
	// when a line break falls inside it.
	goToolTask = regexp.MustCompile(`\bgo\s+tool\s+task\s+` + taskName)
	// bareTask is the task program run by hand, in code only: in prose
	// "a task" is a word, and so it is in a shell comment.
	bareTask     = regexp.MustCompile(`(?:^|[\s;&|(])task\s+` + taskName)
	shellComment = regexp.MustCompile(`(?:^|\s)#.*`)
)

// taskMentions returns the tasks a page tells to run: go tool task <name>
// anywhere, task <name> in code but for shell comments. Flags (go tool task
// --list) are not names.
func taskMentions(page string) []mention {
	seen := map[mention]bool{}
	var out []mention
	add := func(line int, name string) {
		name = strings.TrimRight(name, ".:")
		m := mention{line, name}
		if name != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, m := range goToolTask.FindAllStringSubmatchIndex(page, -1) {
		add(1+strings.Count(page[:m[2]], "\n"), page[m[2]:m[3]])
	}
	for _, s := range code(page) {
		for _, m := range bareTask.FindAllStringSubmatch(shellComment.ReplaceAllString(s.text, ""), -1) {
			add(s.line, m[1])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

// taskfileTasks returns the task names a Taskfile defines: the keys of its
// top-level tasks: map and their aliases: [a, b], and those of the
// Taskfiles it includes, as namespace:name. readFile reads a Taskfile by
// its path from the root; an include's path is relative to the including
// Taskfile and may name a directory holding Taskfile.yml. It reads the YAML
// by indentation, which is enough for Taskfiles written as Task's
// documentation writes them.
func taskfileTasks(path string, readFile func(path string) (string, error)) (map[string]bool, error) {
	text, err := readFile(path)
	if err != nil {
		return nil, err
	}
	tasks := map[string]bool{}
	for _, e := range mapEntries(text, "tasks") {
		tasks[e[0]] = true
		for _, line := range strings.Split(e[2], "\n") {
			if v, ok := strings.CutPrefix(line, "aliases:"); ok {
				for _, a := range strings.Split(strings.Trim(strings.TrimSpace(v), "[]"), ",") {
					if a = strings.Trim(strings.TrimSpace(a), `'"`); a != "" {
						tasks[a] = true
					}
				}
			}
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no tasks found", path)
	}
	for _, inc := range includes(text) {
		target := filepath.ToSlash(filepath.Join(filepath.Dir(path), inc.taskfile))
		if !strings.HasSuffix(target, ".yml") && !strings.HasSuffix(target, ".yaml") {
			target += "/Taskfile.yml"
		}
		sub, err := taskfileTasks(target, readFile)
		if err != nil {
			return nil, fmt.Errorf("%s: include %s: %w", path, inc.namespace, err)
		}
		for name := range sub {
			tasks[inc.namespace+":"+name] = true
		}
	}
	return tasks, nil
}

var yamlKey = regexp.MustCompile(`^(\s*)(['"]?)([^\s'":#][^'":]*)['"]?\s*:(?:\s+(.*))?$`)

// mapEntries returns the [key, inline value, block] of each entry of the
// top-level mapping named section: block is the entry's indented lines.
func mapEntries(text, section string) [][3]string {
	var out [][3]string
	in, indent := false, -1
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		m := yamlKey.FindStringSubmatch(line)
		depth := len(line) - len(strings.TrimLeft(line, " "))
		if depth == 0 {
			in = m != nil && m[3] == section
			indent = -1
			continue
		}
		if !in {
			continue
		}
		if indent < 0 {
			indent = depth
		}
		switch {
		case depth == indent && m != nil:
			out = append(out, [3]string{strings.TrimSpace(m[3]), strings.Trim(strings.TrimSpace(m[4]), `'"`), ""})
		case depth > indent && len(out) > 0:
			out[len(out)-1][2] += strings.TrimSpace(line) + "\n"
		}
	}
	return out
}

type include struct{ namespace, taskfile string }

// includes returns a Taskfile's includes, written either as namespace:
// path or as namespace: with taskfile: path below it.
func includes(text string) []include {
	var out []include
	for _, e := range mapEntries(text, "includes") {
		path := e[1]
		for _, line := range strings.Split(e[2], "\n") {
			if v, ok := strings.CutPrefix(line, "taskfile:"); ok {
				path = strings.Trim(strings.TrimSpace(v), `'"`)
			}
		}
		if path != "" {
			out = append(out, include{e[0], path})
		}
	}
	return out
}

// TestDocsNameOnlyExistingTasks: every go tool task <name> in README.md and
// docs/**/*.md, and every task <name> in their code, is a task of
// Taskfile.yml (or of a Taskfile it includes).
func TestDocsNameOnlyExistingTasks(t *testing.T) {
	dir := root(t)
	tasks, err := taskfileTasks("Taskfile.yml", func(path string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		return string(b), err
	})
	if err != nil {
		t.Fatal(err)
	}
	problems, checked := undefinedTasks(readPages(t, dir), tasks)
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 10 {
		t.Errorf("only %d task mentions found: the parser is broken", checked)
	}
}

// page is a Markdown page: its path from the root and its text.
type page struct{ path, text string }

func readPages(t *testing.T, dir string) []page {
	t.Helper()
	var out []page
	for _, p := range pages(t, dir) {
		out = append(out, page{p, read(t, filepath.Join(dir, filepath.FromSlash(p)))})
	}
	return out
}

// undefinedTasks returns the task mentions of pages that tasks does not
// define, and how many mentions it checked.
func undefinedTasks(pages []page, tasks map[string]bool) (problems []string, checked int) {
	for _, p := range pages {
		for _, m := range taskMentions(p.text) {
			checked++
			if !tasks[m.name] {
				problems = append(problems, fmt.Sprintf("%s:%d: task %q is not defined in Taskfile.yml (tasks: %s)", p.path, m.line, m.name, strings.Join(sortedKeys(tasks), ", ")))
			}
		}
	}
	return problems, checked
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pathToken splits code into the words that may be paths: a command's
// arguments, a flag's value after =, a word in parentheses or quotes.
var pathToken = regexp.MustCompile("[^\\s()\\[\\],;\"'`=|]+")

// repoPaths returns the repository paths in a piece of code or a link's
// text: words that start with one of the repository's top-level entries
// (top, e.g. deploy, docs, queryd, Taskfile.yml), with or without ./,
// followed by a slash. Placeholders (<...>, {a,b}, $VAR) are not paths; a
// glob (queryd/store/catalog*.go) is one when it matches a file; a Go
// package pattern ./deploy/... names deploy; a trailing :line or #anchor is
// not part of the path. Everything else (URLs,
// /tmp, ~/.cache, .strata/..., a path relative to some package) is not a
// repository path written from the root, and is left alone.
func repoPaths(text string, top map[string]bool) []string {
	var out []string
	for _, w := range pathToken.FindAllString(text, -1) {
		if strings.ContainsAny(w, "<>{}$%") || strings.Contains(w, "://") {
			continue
		}
		w = strings.TrimPrefix(w, "./")
		if !strings.Contains(w, "/") {
			continue
		}
		w = strings.TrimSuffix(w, "/...")
		if i := strings.IndexByte(w, '#'); i >= 0 {
			w = w[:i]
		}
		w = lineSuffix.ReplaceAllString(w, "")
		w = strings.TrimRight(w, ".:")
		first, _, _ := strings.Cut(w, "/")
		if !top[first] {
			continue
		}
		out = append(out, w)
	}
	return out
}

var lineSuffix = regexp.MustCompile(`(:\d+)+$`)

// goSelector is a path ending in a Go package's exported name, e.g.
// deploy/localstack.GoExperiment or shared/schema.RescoreLimit.
var goSelector = regexp.MustCompile(`^(.*[^/])\.[A-Z]\w*(\.\w+)*$`)

// exists reports whether a repository path names a file or directory (a
// glob: at least one), or an exported name of a package that exists (match
// tells whether a path or glob from the root matches anything).
func exists(path string, match func(string) bool) bool {
	if match(path) {
		return true
	}
	if m := goSelector.FindStringSubmatch(path); m != nil {
		return match(m[1])
	}
	return false
}

// topLevel are the repository's top-level entries a path may start with;
// hidden ones (.git, .strata) are not the repository's content.
func topLevel(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	return top
}

// pathMentions returns the repository paths a page names in its code
// (inline spans and fenced blocks) and in its links' text.
func pathMentions(page string, top map[string]bool) []mention {
	var out []mention
	for _, s := range code(page) {
		for _, p := range repoPaths(s.text, top) {
			out = append(out, mention{s.line, p})
		}
	}
	for _, b := range prose(page) {
		for _, l := range links(b) {
			for _, p := range repoPaths(l.text, top) {
				out = append(out, mention{b.lineAt(l.start), p})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

// TestDocsNameOnlyExistingPaths: every repository path README.md and
// docs/**/*.md write as code or as a link's text (a program to go run, a
// package, a file, a glob of files) exists, or is in allowedPaths with a
// reason. Links'
// targets are checked by TestDocsLinksResolve.
func TestDocsNameOnlyExistingPaths(t *testing.T) {
	dir := root(t)
	top := topLevel(t, dir)
	match := func(path string) bool {
		m, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(path)))
		return err == nil && len(m) > 0
	}
	var allowed []string
	for _, a := range allowedPaths {
		allowed = append(allowed, a.path)
	}
	problems, checked, unused := missingPaths(readPages(t, dir), top, match, allowed)
	for _, p := range problems {
		t.Error(p)
	}
	for _, a := range unused {
		t.Errorf("allowedPaths: %s is no longer named in the documentation: remove the entry", a)
	}
	if checked < 30 {
		t.Errorf("only %d repository paths found: the parser is broken", checked)
	}
}

// missingPaths returns the repository paths pages name that match (a path
// or glob from the root) finds nothing for and allowed does not list, how
// many paths it checked, and the allowed paths no page names.
func missingPaths(pages []page, top map[string]bool, match func(string) bool, allowed []string) (problems []string, checked int, unused []string) {
	used := map[string]bool{}
	for _, p := range pages {
		for _, m := range pathMentions(p.text, top) {
			checked++
			if slices.Contains(allowed, m.name) {
				used[m.name] = true
				continue
			}
			if !exists(m.name, match) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s does not exist in the repository (moved? name where it is now; or, if it is meant to be created, add it to allowedPaths with a reason)", p.path, m.line, m.name))
			}
		}
	}
	for _, a := range allowed {
		if !used[a] {
			unused = append(unused, a)
		}
	}
	return problems, checked, unused
}

// TestTaskChecksCatch runs the task check's parts on made-up pages and
// Taskfiles, so that each way it can fail is seen failing.
func TestTaskChecksCatch(t *testing.T) {
	readme := "Run `go tool task up`, then go tool\ntask test. A task is a word in prose, task down too.\n\n" +
		"```sh\ntask bench && task ns:build\n# the task list is long\ngo tool task --list\n```\n\n`task up.`\n"
	got := taskMentions(readme)
	want := []mention{{1, "up"}, {2, "test"}, {5, "bench"}, {5, "ns:build"}, {10, "up"}}
	if !slices.Equal(got, want) {
		t.Errorf("taskMentions = %v, want %v", got, want)
	}

	files := map[string]string{
		"Taskfile.yml": "version: '3'\n\nincludes:\n  ns: ./sub\n  other:\n    taskfile: ./other/Tasks.yml\n    dir: ./other\n\n" +
			"# a comment\ntasks:\n  up:\n    desc: \"Start: everything\"\n    cmds:\n      - task: install\n  install:\n    aliases: [i, 'inst']\n    cmds:\n      - go run ./x\n\nvars:\n  notatask: 1\n",
		"sub/Taskfile.yml":    "version: '3'\ntasks:\n  build:\n    cmds: [go build ./...]\n",
		"other/Tasks.yml":     "tasks:\n  lint: {cmds: [go vet ./...]}\n",
		"broken/Taskfile.yml": "version: '3'\n",
	}
	readFile := func(path string) (string, error) {
		if f, ok := files[path]; ok {
			return f, nil
		}
		return "", os.ErrNotExist
	}
	tasks, err := taskfileTasks("Taskfile.yml", readFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedKeys(tasks), []string{"i", "inst", "install", "ns:build", "other:lint", "up"}; !slices.Equal(got, want) {
		t.Errorf("taskfileTasks = %q, want %q", got, want)
	}
	if _, err := taskfileTasks("broken/Taskfile.yml", readFile); err == nil {
		t.Errorf("taskfileTasks of a Taskfile without tasks: no error")
	}
	files["Taskfile.yml"] += "includes:\n  gone: ./gone.yml\n"
	if _, err := taskfileTasks("Taskfile.yml", readFile); err == nil {
		t.Errorf("taskfileTasks with an include that does not exist: no error")
	}

	problems, checked := undefinedTasks([]page{{"README.md", readme}, {"docs/x.md", "`go tool task deploy`"}}, tasks)
	if checked != 6 {
		t.Errorf("undefinedTasks checked %d mentions, want 6", checked)
	}
	if len(problems) != 3 || !containsAny(problems, `README.md:2: task "test"`) || !containsAny(problems, `README.md:5: task "bench"`) || !containsAny(problems, `docs/x.md:1: task "deploy"`) {
		t.Errorf("undefinedTasks = %q, want test, bench and deploy reported", problems)
	}
}

// TestPathChecksCatch runs the path check's parts on made-up text, so that
// each way it can fail is seen failing.
func TestPathChecksCatch(t *testing.T) {
	top := map[string]bool{"deploy": true, "docs": true, "queryd": true, "Taskfile.yml": true}
	text := "go run ./deploy/measure/strata-bench -out=docs/bench/x.md && ls /tmp/a ~/.cache/strata <root>/deploy/x " +
		"https://example.com/deploy/x queryd/store/catalog*.go go vet ./deploy/... ./... deploy/localstack.GoExperiment " +
		"(queryd/tools/search.go:12) cmd/strata-local .strata/bin/strata docs/{a,b}.md docs/access.md#keys, deploy/ acme/docs/guide.md queryd"
	got := repoPaths(text, top)
	want := []string{"deploy/measure/strata-bench", "docs/bench/x.md", "queryd/store/catalog*.go", "deploy", "deploy/localstack.GoExperiment",
		"queryd/tools/search.go", "docs/access.md", "deploy/"}
	if !slices.Equal(got, want) {
		t.Errorf("repoPaths =\n%q, want\n%q", got, want)
	}

	files := []string{"deploy", "deploy/localstack", "deploy/measure/strata-bench", "docs/access.md", "queryd/store/catalog.go", "queryd/tools/search.go"}
	match := func(pattern string) bool {
		for _, f := range files {
			if ok, _ := filepath.Match(strings.TrimSuffix(pattern, "/"), f); ok {
				return true
			}
		}
		return false
	}
	for path, want := range map[string]bool{
		"deploy/measure/strata-bench":    true,
		"deploy/cmd/strata-bench":        false,
		"deploy/localstack.GoExperiment": true,
		"deploy/localstack.goExperiment": false, // not an exported name
		"deploy/gone.Name":               false,
		"queryd/store/catalog*.go":       true,
		"queryd/store/nothing*.go":       false,
	} {
		if got := exists(path, match); got != want {
			t.Errorf("exists(%q) = %v, want %v", path, got, want)
		}
	}

	report := "# R\n\nProduced by `go run ./deploy/cmd/strata-bench -out docs/bench/r.md`.\n" +
		"(Moved since: the program is now deploy/measure/strata-bench; this run named it deploy/cmd/strata-bench.)\n\n" +
		"```sh\ngo run ./deploy/measure/strata-bench   # fine\ngo run ./deploy/cmd/strata-eval\n```\n\n" +
		"See [queryd/tools/gone.go](../../queryd/tools/gone.go) and [docs/access.md](../access.md) (targets: TestDocsLinksResolve); upload `acme/docs/guide.md`, i.e. `docs/guide.md`.\n"
	problems, checked, unused := missingPaths([]page{{"docs/bench/r.md", report}}, top, match, []string{"docs/guide.md", "docs/stale.md"})
	if checked != 7 { // strata-bench twice, docs/bench/r.md, strata-eval, gone.go, access.md, guide.md
		t.Errorf("missingPaths checked %d paths, want 7: %q", checked, problems)
	}
	for _, want := range []string{"r.md:3: deploy/cmd/strata-bench", "r.md:3: docs/bench/r.md", "r.md:8: deploy/cmd/strata-eval", "r.md:11: queryd/tools/gone.go"} {
		if !containsAny(problems, want) {
			t.Errorf("missingPaths did not report %s: %q", want, problems)
		}
	}
	if len(problems) != 4 {
		t.Errorf("missingPaths: %d problems, want 4 (not the note in prose, the allowed path or the existing ones): %q", len(problems), problems)
	}
	if !slices.Equal(unused, []string{"docs/stale.md"}) {
		t.Errorf("missingPaths: unused allowed paths %q, want docs/stale.md", unused)
	}
}
