package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// env is a fake environment for parse.
type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "strata.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type testFlags struct {
	url     *string
	workers *int
	secure  *bool
	timeout *time.Duration
}

func newFlags() (*flag.FlagSet, testFlags) {
	fs := flag.NewFlagSet("svc", flag.ContinueOnError)
	return fs, testFlags{
		url:     fs.String("nats-url", "nats://default:4222", "NATS `url`"),
		workers: fs.Int("workers", 1, "workers at once"),
		secure:  fs.Bool("s3-secure", false, "use TLS"),
		timeout: fs.Duration("timeout", time.Second, "per request"),
	}
}

func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	for _, tc := range []struct {
		flag, env, file bool
		want            string
	}{
		{false, false, false, "nats://default:4222"},
		{false, false, true, "nats://file:4222"},
		{false, true, false, "nats://env:4222"},
		{false, true, true, "nats://env:4222"},
		{true, false, false, "nats://flag:4222"},
		{true, false, true, "nats://flag:4222"},
		{true, true, false, "nats://flag:4222"},
		{true, true, true, "nats://flag:4222"},
	} {
		name := fmt.Sprintf("flag=%v,env=%v,file=%v", tc.flag, tc.env, tc.file)
		t.Run(name, func(t *testing.T) {
			// The file always exists and sets another flag, so a file that is
			// read but loses is told apart from one that is not read.
			text := "workers: 5\n"
			if tc.file {
				text += "nats-url: nats://file:4222\n"
			}
			args := []string{"-config", writeConfig(t, text)}
			if tc.flag {
				args = append(args, "-nats-url", "nats://flag:4222")
			}
			e := env{}
			if tc.env {
				e["STRATA_NATS_URL"] = "nats://env:4222"
			}
			fs, f := newFlags()
			if err := parse(fs, args, e.lookup, &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			if *f.url != tc.want || *f.workers != 5 || *f.timeout != time.Second {
				t.Fatalf("nats-url %q (want %q), workers %d, timeout %v", *f.url, tc.want, *f.workers, *f.timeout)
			}
		})
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	path := writeConfig(t, "# comment\nworkers: 9\ns3-secure: true\ntimeout: 2m\nnats-url: \"nats://q:1\"\n")
	fs, f := newFlags()
	if err := parse(fs, nil, env{"STRATA_CONFIG": path}.lookup, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if *f.workers != 9 || !*f.secure || *f.timeout != 2*time.Minute || *f.url != "nats://q:1" {
		t.Fatalf("got %+v", f)
	}
	// -config on the command line wins over STRATA_CONFIG.
	other := writeConfig(t, "workers: 3\n")
	fs, f = newFlags()
	if err := parse(fs, []string{"-config=" + other}, env{"STRATA_CONFIG": path}.lookup, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if *f.workers != 3 || *f.secure {
		t.Fatalf("got workers %d secure %v, want the -config file only", *f.workers, *f.secure)
	}
}

func TestConfigFileErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		text string
		want []string // all in the error
	}{
		"unknown key":   {"workers: 2\nnats-urll: nats://x:1\n", []string{"strata.yaml:2", "nats-urll", "unknown key"}},
		"bad int":       {"workers: many\n", []string{"strata.yaml:1", "workers", `"many" is not a valid int`, "parse error"}},
		"bad bool":      {"s3-secure: yes\n", []string{"strata.yaml:1", "s3-secure", `"yes" is not a valid bool`}},
		"bad duration":  {"\ntimeout: 5\n", []string{"strata.yaml:2", "timeout", "not a valid duration (want a number with a unit"}},
		"list value":    {"nats-url: [a, b]\n", []string{"strata.yaml:1", "nats-url", "one value"}},
		"twice":         {"workers: 1\nworkers: 2\n", []string{"strata.yaml:2", "workers", "set twice"}},
		"config key":    {"config: other.yaml\n", []string{"strata.yaml:1", "config", "cannot be set"}},
		"not a map":     {"- workers\n", []string{"strata.yaml:1", "flag-name: value"}},
		"every mistake": {"bogus: 1\nworkers: many\n", []string{"bogus", "many"}},
		"bad yaml":      {"workers: [\n", []string{"strata.yaml", "yaml"}},
	} {
		t.Run(name, func(t *testing.T) {
			fs, _ := newFlags()
			err := parse(fs, []string{"-config", writeConfig(t, tc.text)}, env{}.lookup, &bytes.Buffer{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestConfigFileMissingOrEmpty(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	fs, _ := newFlags()
	err := parse(fs, nil, env{"STRATA_CONFIG": missing}.lookup, &bytes.Buffer{})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "STRATA_CONFIG") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("got %v", err)
	}
	fs, f := newFlags()
	if err := parse(fs, []string{"-config", writeConfig(t, "# nothing yet\n")}, env{}.lookup, &bytes.Buffer{}); err != nil || *f.workers != 1 {
		t.Fatalf("empty file: %v, workers %d", err, *f.workers)
	}
}

// A value the environment overrides is not used, so it is not checked;
// the environment's own bad values still are.
func TestEnvironmentErrorsWithFile(t *testing.T) {
	fs, f := newFlags()
	path := writeConfig(t, "workers: many\ntimeout: 3s\n")
	err := parse(fs, []string{"-config", path}, env{"STRATA_WORKERS": "4", "STRATA_S3_SECURE": "maybe"}.lookup, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "STRATA_S3_SECURE") || strings.Contains(err.Error(), "many") {
		t.Fatalf("got %v", err)
	}
	if *f.workers != 4 || *f.timeout != 3*time.Second {
		t.Fatalf("workers %d timeout %v", *f.workers, *f.timeout)
	}
}
