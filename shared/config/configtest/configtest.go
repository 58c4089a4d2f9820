// Package configtest checks a service's command line as an operator meets
// it: the built binary, its exit code and its output.
package configtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/testservers"
)

// CheckCommandLine builds the main package in the current directory and
// checks that -h exits 0 listing every flag register adds with its STRATA_
// variable, that -version exits 0 naming the pinned servers, and that a
// missing -config file stops it with an error naming the file.
func CheckCommandLine(t *testing.T, register func(*flag.FlagSet)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the service binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "service")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = cleanEnv()
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
		}
		return o.String(), e.String(), cmd.ProcessState.ExitCode()
	}

	for _, arg := range []string{"-h", "-help"} {
		help, stderr, code := run(arg)
		if code != 0 {
			t.Fatalf("%s exited %d: %s", arg, code, stderr)
		}
		lines := map[string]string{}
		for _, l := range strings.Split(help, "\n") {
			if !strings.HasPrefix(l, "  -") {
				continue
			}
			if !strings.Contains(l, "(STRATA_") {
				t.Errorf("%s: flag line without its variable: %q", arg, l)
			}
			lines[strings.Fields(l)[0]] = l
		}
		fs := flag.NewFlagSet("service", flag.ContinueOnError)
		register(fs)
		fs.String("config", "", "") // Parse adds it
		fs.VisitAll(func(f *flag.Flag) {
			if l := lines["-"+f.Name]; !strings.Contains(l, "("+config.EnvName(f.Name)) {
				t.Errorf("%s: -%s is not listed with %s: %q", arg, f.Name, config.EnvName(f.Name), l)
			}
		})
	}

	version, stderr, code := run("-version")
	if code != 0 {
		t.Fatalf("-version exited %d: %s", code, stderr)
	}
	for _, b := range append(append([]testservers.Binary{}, testservers.All...), testservers.NATSCLI) {
		if !strings.Contains(version, b.Name+" "+b.Version) {
			t.Errorf("-version lacks %s %s: %q", b.Name, b.Version, version)
		}
	}

	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if _, stderr, code := run("-config", missing); code == 0 || !strings.Contains(stderr, missing) {
		t.Errorf("-config %s: exit %d, stderr %q; want a failure naming the file", missing, code, stderr)
	}
}

// cleanEnv is the test's environment without STRATA_ variables, which
// would otherwise configure the service under test.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STRATA_") {
			env = append(env, kv)
		}
	}
	return env
}
