package manifests

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/config"
)

// services are Strata's own programs; each is module <name> with cmd/<name>.
var services = []string{"ingestor", "embedder", "indexer", "queryd"}

// pendingFlags are flags the deployment files may set ahead of work landing
// in parallel, by service. A missing pending flag is logged, not failed;
// remove an entry once its flag exists. (The embedding flags that were
// pending here have landed in embedder/engine.)
var pendingFlags = map[string][]string{}

// flagRE finds flag registrations: fs.StringVar(&c.X, "name", ...),
// fs.Int("name", ...), fs.Func("name", ...), and so on.
// A name may be built on a prefix (prefix+"name", see engine.Config's
// RegisterFlagsWithPrefix); prefixRE finds the prefixes a service passes.
var flagRE = regexp.MustCompile(`\.(?:String|Int|Int64|Uint|Uint64|Bool|Duration|Float64|Func|BoolFunc|TextVar)(?:Var)?\(\s*(?:&[\w.\[\]]+\s*,\s*)?(\w+\s*\+\s*)?"([a-z][a-z0-9.-]*)"`)

var prefixRE = regexp.MustCompile(`RegisterFlagsWithPrefix\(\s*\w+\s*,\s*"([a-z0-9-]*)"`)

const modulePrefix = "github.com/strata-kb/strata/"

// repoRoot is the repository root (the go.work directory).
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	return root
}

// serviceFlags returns the flags service registers: those in its cmd package
// and in the Strata packages that package imports (the common flags of
// shared/config only when the service embeds config.Common). It reads the
// source, so it works while other modules are mid-edit.
func serviceFlags(t testing.TB, root, service string) map[string]bool {
	t.Helper()
	cmdDir := filepath.Join(root, service, "cmd", service)
	files := goFiles(t, cmdDir)
	if len(files) == 0 {
		t.Fatalf("%s: no Go files", cmdDir)
	}
	flags := map[string]bool{}
	var cmdSrc strings.Builder
	imports := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmdSrc.Write(src)
		addFlags(flags, string(src))
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, modulePrefix) {
				imports[strings.TrimPrefix(p, modulePrefix)] = true
			}
		}
	}
	prefixes := []string{""}
	for _, m := range prefixRE.FindAllStringSubmatch(cmdSrc.String(), -1) {
		prefixes = append(prefixes, m[1])
	}
	for rel := range imports {
		if rel == "shared/config" && !strings.Contains(cmdSrc.String(), "config.Common") {
			continue
		}
		for _, f := range goFiles(t, filepath.Join(root, filepath.FromSlash(rel))) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			addFlags(flags, string(src), prefixes...)
		}
	}
	return flags
}

// addFlags records the flags registered in src; a name built on a prefix
// is recorded with each of prefixes ("" = none).
func addFlags(flags map[string]bool, src string, prefixes ...string) {
	for _, m := range flagRE.FindAllStringSubmatch(src, -1) {
		if m[1] == "" {
			flags[m[2]] = true
			continue
		}
		for _, p := range append([]string{""}, prefixes...) {
			flags[p+m[2]] = true
		}
	}
}

func goFiles(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// flagChecker checks STRATA_* variables against the services' flags.
type flagChecker struct {
	t     testing.TB
	flags map[string]map[string]string // service -> env name -> flag
}

func newFlagChecker(t testing.TB) *flagChecker {
	root := repoRoot(t)
	fc := &flagChecker{t: t, flags: map[string]map[string]string{}}
	for _, s := range services {
		env := map[string]string{}
		for f := range serviceFlags(t, root, s) {
			env[config.EnvName(f)] = f
		}
		fc.flags[s] = env
	}
	return fc
}

// check reports the STRATA_* names in vars that are no flag of service.
func (fc *flagChecker) check(service string, vars []string) []string {
	known, ok := fc.flags[service]
	if !ok {
		return []string{"unknown service " + service}
	}
	var bad []string
	for _, v := range vars {
		if !strings.HasPrefix(v, "STRATA_") || known[v] != "" {
			continue
		}
		pending := false
		for _, f := range pendingFlags[service] {
			if config.EnvName(f) == v {
				pending = true
			}
		}
		if pending {
			fc.t.Logf("%s: %s sets flag that is still being added to %s (pendingFlags)", service, v, service)
			continue
		}
		bad = append(bad, v)
	}
	sort.Strings(bad)
	return bad
}

func TestServiceFlagsAreFound(t *testing.T) {
	root := repoRoot(t)
	// A few flags each service has had from the start: if these are not
	// found, the flag scanner (not the manifests) is broken.
	want := map[string][]string{
		"ingestor": {"nats-url", "http-addr", "s3-endpoint", "assets-bucket"},
		"embedder": {"nats-url", "http-addr", "embedding-provider"},
		"indexer":  {"nats-url", "http-addr", "weaviate-host", "weaviate-api-key"},
		"queryd":   {"addr", "weaviate-host", "api-keys", "cursor-secret"},
	}
	for s, names := range want {
		flags := serviceFlags(t, root, s)
		for _, n := range names {
			if !flags[n] {
				t.Errorf("%s: flag -%s not found (found %d flags)", s, n, len(flags))
			}
		}
	}
	if serviceFlags(t, root, "queryd")["http-addr"] {
		t.Error("queryd does not embed config.Common; -http-addr must not be attributed to it")
	}
}
