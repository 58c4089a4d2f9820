package code

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func extractOK(t testing.TB, name string, data []byte) *extract.Document {
	t.Helper()
	doc, err := Extractor{}.Extract(context.Background(), data, name, extract.DefaultLimits())
	if err != nil {
		t.Fatalf("Extract(%s): %v", name, err)
	}
	extracttest.Verify(t, doc, data, profile)
	return doc
}

// profile is what every code document promises: the text is the source,
// byte for byte; blocks are declarations (headings, their comments and
// decorators through the signature line, nested up to maxLevel) and code,
// and together cover everything but white space.
var profile = extracttest.Profile{
	Format:       "code",
	TextIsInput:  true,
	Kinds:        []extract.Kind{extract.Heading, extract.Code},
	MaxLevel:     maxLevel,
	StepHeadings: true,
	Language:     true,
}

// titles lists "level signature" for each heading: its last line, which is
// the signature; the lines above it are its comments and decorators.
func titles(doc *extract.Document) []string {
	var out []string
	for _, b := range doc.Blocks {
		if b.Kind != extract.Heading {
			continue
		}
		s := doc.Text[b.Start:b.End]
		sig := s[strings.LastIndexByte(s, '\n')+1:]
		out = append(out, strconv.Itoa(b.Level)+" "+strings.TrimSpace(sig))
	}
	return out
}

func TestSections(t *testing.T) {
	tests := []struct {
		file   string
		lang   string
		titles []string
	}{
		{"../sample.go", "go", []string{
			`1 var ErrClosed = errors.New("closed")`,
			`1 const (`,
			"1 var tmpl = `", // its raw string holds "func fake() {" at column 0
			`1 type Server struct {`,
			`1 func (s *Server) Run(ctx context.Context) error {`,
			`1 func (s Server) Addr() string { return s.addr }`,
			`1 func helper(`,
		}},
		{"../sample.py", "python", []string{
			`1 def cached(n):`,
			`1 class Base:`,
			`2 def __init__(self):`,
			`2 def value(self):`,
			`2 async def fetch(url: str) -> str:`,
			`2 class Inner:`,
			`3 def deep(self):`,
			`1 async def main():`,
		}},
		{"tool", "python", []string{`1 def main(argv):`}},
		{"lib.rs", "rust", []string{
			`1 pub struct Value<'a> {`,
			`1 const LIMIT: usize = 10;`,
			`1 impl<'a> Value<'a> {`,
			`2 pub fn new(raw: &'a str) -> Self {`,
			`2 fn len(&self) -> usize {`,
			`1 impl fmt::Display for Value<'_> {`,
			`2 fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {`,
			`1 pub fn parse(input: &str) -> Result<Value<'_>, String> {`,
			`1 macro_rules! square {`,
			`1 mod tests {`,
			`2 fn parses() {`,
		}},
		{"Main.java", "java", []string{
			`1 public class Main {`,
			`2 public Main(List<String> names) {`,
			`2 public String toString() {`,
			`2 public static <T> List<T> copy(List<T> in) {`,
			`2 static class Helper {`,
			`3 int twice(int x) {`,
			`2 enum Color {`,
			`2 public static void main(String[] args) {`,
		}},
		{"util.c", "c", []string{
			`1 #define SWAP(a, b) do { \`,
			`1 struct point {`,
			`1 typedef struct {`,
			`1 int add(int a, int b)`, // '{' on the next line
			`1 helper(int a)`,         // return type on the line above
			`1 int main(int argc, char **argv) {`,
		}},
		{"shapes.cpp", "cpp", []string{
			`1 namespace geo {`,
			`1 T area(T w, T h) {`,
			`1 class Shape {`,
			`2 std::string name() const {`,
			`1 int main() {`,
		}},
		{"app.js", "javascript", []string{
			`1 export const double = (x) => x * 2;`,
			`1 const load = async (path) => {`,
			`1 export const handler = async event => event;`,
			"1 const tpl = `", // a multi-line initializer; "function fake" inside is not split
			`1 function plain(a, b) {`,
			`1 export default class App {`,
			`2 constructor(name) {`,
			`2 async start() {`,
			`2 static create() {`,
			`2 onClick = (e) => {`,
			`1 export async function* gen() {`,
		}},
		{"api.ts", "typescript", []string{
			`1 export interface User {`,
			`1 export type ID = string | number;`,
			`1 enum Role {`,
			`1 export class UserService {`,
			`2 constructor(private readonly db: Db) {}`,
			`2 async find(id: ID): Promise<User | undefined> {`,
			`2 get count(): number {`,
			`1 export const toName = (u: User): string => u.name;`,
			`1 export function greet<T extends User>(u: T): string {`,
		}},
		{"deploy.sh", "shell", []string{
			`1 log() {`,
			`1 function build {`,
			`1 cleanup () {`,
			`1 main() {`,
		}},
		{"shop.rb", "ruby", []string{
			`1 module Shop`,
			`2 class Item`,
			`3 def initialize(price)`,
			`3 def to_json(*)`,
			`2 def self.total(items)`,
			`1 def main`,
		}},
		{"Cart.php", "php", []string{
			`1 final class Cart implements Countable`,
			`2 public function add(string $sku): void`,
			`2 public function count(): int`,
			`1 function helper(): string`,
		}},
		{"Repo.kt", "kotlin", []string{
			`1 data class Repo(val name: String) {`,
			`2 init {`,
			`2 fun describe(): String {`,
			`2 companion object {`,
			`3 fun of(name: String) = Repo(name)`,
			`1 value class Id(val v: Int)`,
			`1 fun main() {`,
		}},
		{"Counter.swift", "swift", []string{
			`1 struct Counter {`,
			`2 mutating func increment() {`,
			`2 init(start: Int) {`,
			`1 extension Counter: CustomStringConvertible {`,
			`1 final class ViewModel {`,
			`2 func load() async throws {`,
			`1 func main() {`,
		}},
		{"Program.cs", "csharp", []string{
			`1 namespace Demo`,
			`2 public class Greeter`,
			`3 public Greeter(string name)`,
			`3 public async Task<int> RunAsync(int n)`,
			`2 public enum Mode { A, B }`,
		}},
		{"schema.sql", "sql", []string{
			`1 CREATE TABLE users (`,
			`1 CREATE INDEX users_name ON users (name);`,
			`1 create or replace function touch() returns trigger as $$`,
			`1 ALTER TABLE users ADD COLUMN email text;`,
		}},
		{"Makefile", "make", []string{
			`1 .PHONY: all test`,
			`1 all: build test`,
			`1 build:`,
			`1 test: build`,
		}},
		{"Dockerfile", "dockerfile", []string{
			`1 FROM golang:1.26 AS build`,
			`1 FROM gcr.io/distroless/static`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "langs", tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			doc := extractOK(t, path, data)
			if doc.Language != tt.lang {
				t.Errorf("Language = %q, want %q", doc.Language, tt.lang)
			}
			if doc.Title != filepath.Base(tt.file) {
				t.Errorf("Title = %q, want %q", doc.Title, filepath.Base(tt.file))
			}
			if got := titles(doc); !slices.Equal(got, tt.titles) {
				t.Errorf("titles:\n got %q\nwant %q", got, tt.titles)
			}
			if len(doc.Warnings) > 0 {
				t.Errorf("warnings: %q", doc.Warnings)
			}
		})
	}
}

func TestUnterminatedWarning(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"a.go", "package x\n\nvar s = `\nfunc fake() {\n", "line 3"},
		{"a.c", "int a;\n/* open\n/* still\nint f(void) {\n", "line 2"},
		{"a.sh", "f() {\n  cat <<EOF\n}\ng() {\n}\n", "line 2"},
		{"a.py", "x = 1\n\"\"\"\n", "line 2"},
	}
	for _, tt := range tests {
		doc := extractOK(t, tt.name, []byte(tt.src))
		if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], tt.want) {
			t.Errorf("%s: warnings %q, want one about %s", tt.name, doc.Warnings, tt.want)
		}
	}
	doc := extractOK(t, "b.go", []byte("/* a */\nvar s = `\n`\n"))
	if len(doc.Warnings) > 0 {
		t.Errorf("closed comment and string: warnings %q", doc.Warnings)
	}
}

// headingText returns the full text of the heading whose signature
// contains sig.
func headingText(t *testing.T, doc *extract.Document, sig string) string {
	t.Helper()
	for _, b := range doc.Blocks {
		if s := doc.Text[b.Start:b.End]; b.Kind == extract.Heading && strings.Contains(s, sig) {
			return s
		}
	}
	t.Fatalf("no heading with %q", sig)
	return ""
}

// TestLeadingLines checks that comments, decorators, attributes and
// annotations open their declaration's heading.
func TestLeadingLines(t *testing.T) {
	tests := []struct {
		file, sig, first string
	}{
		{"../sample.py", "def cached", "# A comment about the decorator."},
		{"../sample.py", "def value", "    @property"},
		{"../sample.py", "async def fetch", "    @staticmethod"},
		{"../sample.go", "func (s *Server) Run", "// Run runs the server until ctx is done."},
		{"../sample.go", "type Server", "/*"},
		{"lib.rs", "pub struct Value", "/// A parsed value."},
		{"lib.rs", "mod tests", "#[cfg(test)]"},
		{"lib.rs", "fn parses", "    #[test]"},
		{"Main.java", "public class Main", "/**"},
		{"Main.java", "public String toString", "    @Override"},
		{"util.c", "helper(int a)", "static int"},
		{"shapes.cpp", "T area", "template <typename T>"},
		{"api.ts", "export class UserService", "@Injectable()"},
		{"Program.cs", "public class Greeter", "    /// <summary>A greeter.</summary>"},
		{"Cart.php", "public function count", "    #[\\ReturnTypeWillChange]"},
		{"deploy.sh", "log() {", "# Logs a message."},
	}
	for _, tt := range tests {
		path := filepath.Join("testdata", "langs", tt.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h := headingText(t, extractOK(t, path, data), tt.sig)
		if first, _, _ := strings.Cut(h, "\n"); first != tt.first {
			t.Errorf("%s: heading of %q starts with %q, want %q", tt.file, tt.sig, first, tt.first)
		}
	}
}

func TestSmallCases(t *testing.T) {
	tests := []struct {
		name, src string
		titles    []string
	}{
		{"empty.go", "", nil},
		{"blank.go", "\n\n  \t\n", nil},
		{"nbsp.go", "\u00a0\n\u00a0 \n", nil},
		{"nodecl.go", "package x\n", nil},
		{"crlf.go", "package x\r\n\r\nfunc A() {\r\n}\r\n\r\nfunc B() {}\r\n", []string{"1 func A() {", "1 func B() {}"}},
		{"nonl.go", "func A() {}", []string{"1 func A() {}"}},
		{"raw.go", "package x\n\nvar s = `\nfunc fake() {\n}\n`\n\nfunc real() {}\n", []string{"1 var s = `", "1 func real() {}"}},
		{"unterminated.go", "package x\n\nvar s = `\nfunc fake() {\n", []string{"1 var s = `"}},
		{"comment.go", "/*\nfunc fake() {}\n*/\nfunc real() {}\n", []string{"1 func real() {}"}},
		{"docstring.py", "x = '''\ndef fake():\n'''\ndef real():\n    pass\n", []string{"1 def real():"}},
		{"tabs.py", "class A:\n\tdef f(self):\n\t\tpass\n\tdef g(self):\n\t\tpass\n", []string{"1 class A:", "2 def f(self):", "2 def g(self):"}},
		{"oneline.py", "class A: pass\nclass B: pass\n", []string{"1 class A: pass", "1 class B: pass"}},
		{"template.js", "a = `\nfunction fake() {}\n`;\nfunction real() {}\n", []string{"1 function real() {}"}},
		{"init.ts", "export const styles = {\n  a: 1,\n};\nexport const thunk = createThunk(\n  'x',\n);\nconst n = 1;\n", []string{"1 export const styles = {", "1 export const thunk = createThunk("}},
		{"lifetime.rs", "fn a<'a>(x: &'a str) -> &'a str { \"x\" }\nfn b() {}\n", []string{"1 fn a<'a>(x: &'a str) -> &'a str { \"x\" }", "1 fn b() {}"}},
		{"multistr.rs", "const S: &str = \"\nfn fake() {}\n\";\nfn real() {}\n", []string{"1 const S: &str = \"", "1 fn real() {}"}},
		{"proto.c", "int f(int);\nint g(void)\n{\n  return 0;\n}\n", []string{"1 int g(void)"}},
		{"ifelse.c", "int x;\nif (x) {\n}\n", nil},
		{"herestr.sh", "cat <<< \"$x\"\nf() { :; }\n", []string{"1 f() { :; }"}},
		{"quoted.sh", "cat <<'END'\nfake() {\nEND\nreal() {\n}\n", []string{"1 real() {"}},
		{"dashed.sh", "\tcat <<-END\nfake() {\n\tEND\nreal() {\n}\n", []string{"1 real() {"}},
		{"verbatim.cs", "class A\n{\n    string s = @\"\n    void Fake() {\n\"\"\";\n    void Real()\n    {\n    }\n}\n", []string{"1 class A", "2 void Real()"}},
		{"rawcs.cs", "class A\n{\n    string s = \"\"\"\n    void Fake() {\n    \"\"\";\n    void Real() { }\n}\n", []string{"1 class A", "2 void Real() { }"}},
		{"dollar.sql", "CREATE FUNCTION f() AS $body$\nCREATE TABLE fake();\n$body$;\nALTER TABLE t OWNER TO x;\n", []string{"1 CREATE FUNCTION f() AS $body$", "1 ALTER TABLE t OWNER TO x;"}},
		{"assign.mk", "A := 1\nB = 2\nall: $(A)\n\techo $(B)\n", []string{"1 all: $(A)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := extractOK(t, tt.name, []byte(tt.src))
			if got := titles(doc); !slices.Equal(got, tt.titles) {
				t.Errorf("titles:\n got %q\nwant %q", got, tt.titles)
			}
		})
	}
}

// TestBlocksCoverLines checks the exact spans for a small Go file: the
// preamble, each heading and each body, without the blank lines between.
func TestBlocksCoverLines(t *testing.T) {
	src := "package x\n\n// A does.\nfunc A() {\n\treturn\n}\n\n\nfunc B() {}\n"
	doc := extractOK(t, "x.go", []byte(src))
	var got []string
	for _, b := range doc.Blocks {
		got = append(got, b.Kind.String()+":"+doc.Text[b.Start:b.End])
	}
	want := []string{
		"code:package x",
		"heading:// A does.\nfunc A() {",
		"code:\treturn\n}",
		"heading:func B() {}",
	}
	if !slices.Equal(got, want) {
		t.Errorf("blocks:\n got %q\nwant %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	small := extract.DefaultLimits()
	small.MaxTextBytes = 10
	tests := []struct {
		name string
		ctx  context.Context
		data string
		lim  extract.Limits
		want error
	}{
		{"bad.go", context.Background(), "package x\n\xff\xfe", extract.DefaultLimits(), extract.ErrCorrupt},
		{"nul.go", context.Background(), "package x\x00", extract.DefaultLimits(), extract.ErrCorrupt},
		{"big.go", context.Background(), "package main\n", small, extract.ErrTooLarge},
		{"late.go", canceled, "package x\n", extract.DefaultLimits(), extract.ErrTimeout},
		{"notes.txt", context.Background(), "hello", extract.DefaultLimits(), extract.ErrUnsupported},
	}
	for _, tt := range tests {
		doc, err := Extractor{}.Extract(tt.ctx, []byte(tt.data), tt.name, tt.lim)
		if !errors.Is(err, tt.want) || doc != nil {
			t.Errorf("%s: got %v, %v; want %v", tt.name, doc, err, tt.want)
		}
	}
}

// TestTimeoutMidway cancels while a large file is being scanned.
func TestTimeoutMidway(t *testing.T) {
	data := []byte(strings.Repeat("func f() {}\n", 500_000))
	lim := extract.DefaultLimits()
	lim.Timeout = time.Nanosecond
	_, err := Extractor{}.Extract(context.Background(), data, "x.go", lim)
	if !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
}

// TestLargeInputs makes sure pathological files stay linear: a million
// short lines, one 10 MB line, and inputs built to trigger look-aheads
// and long attachment runs.
func TestLargeInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	tests := []struct {
		name string
		data string
	}{
		{"lines.go", strings.Repeat("x\n", 1_000_000)},
		{"funcs.go", strings.Repeat("func f() {}\n", 1_000_000)},
		{"line.go", "package x\nvar s = \"" + strings.Repeat("a", 10<<20) + "\"\n"},
		{"line.py", strings.Repeat("def f(", 2<<20)},
		{"calls.c", strings.Repeat("f(\n", 1_000_000)},
		{"calls2.c", strings.Repeat("int f(int a, int b, int c)\n", 300_000)},
		{"decorators.py", strings.Repeat("@d(\n", 1_000_000)},
		{"comments.rs", strings.Repeat("/* /*\n", 1_000_000)},
		{"quotes.cs", strings.Repeat("\"\"\"\"\"\"\"\"", 1<<20)},
		{"heredocs.sh", strings.Repeat("<<A <<B\n", 1_000_000)},
		{"class.java", "class A {\n" + strings.Repeat("    void f() {\n", 1_000_000)},
		{"nested.py", strings.Repeat(" ", 1<<20) + "def f():\n"},
		{"hash.dockerfile", strings.Repeat("#", 10<<20)},
	}
	for _, tt := range tests {
		start := time.Now()
		doc := extractOK(t, tt.name, []byte(tt.data))
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: %v for %d bytes, %d blocks", tt.name, d, len(tt.data), len(doc.Blocks))
		}
	}
}
