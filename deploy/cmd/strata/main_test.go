package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testApp runs commands in process with the given environment, in an empty
// working directory (no .strata/local.env above it).
func testApp(t *testing.T, env map[string]string) (*app, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	wd := t.TempDir()
	return &app{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] },
		getwd:      func() (string, error) { return wd, nil },
		executable: func() (string, error) { return filepath.Join(wd, "nowhere", "strata"), nil },
		now:        time.Now}, &stdout, &stderr
}

func runArgs(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	a, stdout, stderr := testApp(t, env)
	code := run(context.Background(), args, a)
	return code, stdout.String(), stderr.String()
}

// every runnable command, as its words.
func allCommands() [][]string {
	var out [][]string
	for name, c := range commands() {
		if c.subs == nil {
			out = append(out, []string{name})
			continue
		}
		for sub := range c.subs {
			out = append(out, []string{name, sub})
		}
	}
	return out
}

func TestHelpOnEveryCommand(t *testing.T) {
	cases := [][]string{{"--help"}, {"-h"}, {"help"}, {"release", "--help"}, {"deadletters", "-h"}, {"help", "ingest"}}
	for _, words := range allCommands() {
		cases = append(cases, append(append([]string{}, words...), "--help"), append(append([]string{}, words...), "-h"))
	}
	for _, args := range cases {
		code, stdout, stderr := runArgs(t, nil, args...)
		if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "Usage: strata") {
			t.Errorf("strata %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	// A command's help names it, its arguments and its flags, connection flags apart.
	_, out, _ := runArgs(t, nil, "ingest", "--help")
	for _, want := range []string{"Usage: strata ingest DIR --project P", "\nFlags:\n", "  --prefix string\n", "  --parallel int\n        concurrent uploads (default 4)",
		"Connection flags", "  --s3-endpoint string\n", "  --nats-url string\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("ingest --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--api-key") { // ingest does not use MCP
		t.Errorf("ingest --help offers --api-key:\n%s", out)
	}
	_, out, _ = runArgs(t, nil, "--help")
	for _, words := range allCommands() {
		if !strings.Contains(out, "  "+words[0]+" ") {
			t.Errorf("strata --help does not list %s:\n%s", words[0], out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitUsage, "strata: missing command: want deadletters, ingest, keys, reindex, release, search, status"},
		{[]string{"frobnicate"}, exitUsage, `strata: unknown command "frobnicate"`},
		{[]string{"release"}, exitUsage, "strata release: missing command: want create, list"},
		{[]string{"release", "delete"}, exitUsage, `strata release: unknown command "delete"`},
		{[]string{"ingest"}, exitUsage, "strata ingest: missing arguments: usage: strata ingest DIR --project P"},
		{[]string{"ingest", dir}, exitUsage, "strata ingest: missing --project"},
		{[]string{"ingest", dir, "--project", "bad project"}, exitUsage, `strata ingest: invalid --project "bad project"`},
		{[]string{"ingest", dir, dir, "--project", "acme"}, exitUsage, "strata ingest: unexpected argument"},
		{[]string{"ingest", "--bogus", dir}, exitUsage, "strata ingest: unknown flag --bogus (strata ingest --help)"},
		{[]string{"ingest", filepath.Join(dir, "missing"), "--project", "acme"}, exitError, "no such file or directory"},
		{[]string{"search"}, exitUsage, "strata search: missing arguments"},
		{[]string{"search", "x", "--top-k", "99"}, exitUsage, "strata search: --top-k must be 1 to 50, got 99"},
		{[]string{"search", "x", "--top-k", "many"}, exitUsage, `invalid value "many" for flag --top-k`},
		{[]string{"search", "x", "--branch", "b"}, exitUsage, "--branch and --release need --project"},
		{[]string{"search", "x"}, exitError, "strata search: no bearer API key for the MCP endpoint: set --api-key or STRATA_API_KEY"},
		{[]string{"status", "extra"}, exitUsage, `strata status: unexpected argument "extra"`},
		{[]string{"release", "create"}, exitUsage, "strata release create: missing arguments"},
		{[]string{"release", "create", "v1"}, exitUsage, "strata release create: missing --project"},
		{[]string{"release", "list", "--project", "a.b"}, exitUsage, `invalid project "a.b"`},
		{[]string{"reindex"}, exitUsage, "strata reindex: missing --project"},
		{[]string{"deadletters", "show"}, exitUsage, "strata deadletters show: missing arguments"},
		{[]string{"deadletters", "show", "x"}, exitUsage, `"x" is not a dead letter's sequence`},
		{[]string{"deadletters", "redrive"}, exitUsage, "missing sequences"},
		{[]string{"deadletters", "redrive", "3", "--all"}, exitUsage, "give sequences or --all, not both"},
		{[]string{"deadletters", "redrive", "3", "--stage", "indexer"}, exitUsage, "--stage and --project select dead letters for --all"},
		{[]string{"deadletters", "list", "--limit", "-1"}, exitUsage, "--limit must be >= 0"},
		{[]string{"status", "--env-file", filepath.Join(dir, "none.env")}, exitError, "strata status: env file: open"},
	} {
		code, stdout, stderr := runArgs(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("strata %s: exit %d (want %d), stdout %q, stderr %q (want one line with %q)",
				strings.Join(tc.args, " "), code, tc.code, stdout, stderr, tc.want)
		}
	}
}

func TestFlagsAndArgumentsInAnyOrder(t *testing.T) {
	for _, args := range [][]string{
		{"DIR", "--project", "acme", "--prefix", "p"},
		{"--project", "acme", "DIR", "--prefix", "p"},
		{"--project=acme", "--prefix=p", "DIR"},
		{"--project", "acme", "--prefix", "p", "--", "DIR"},
	} {
		f := newFlags("strata ingest", "DIR", "")
		project, prefix := f.String("project", "", ""), f.String("prefix", "", "")
		a, _, _ := testApp(t, nil)
		pos, err := f.parse(a, args, 1, 1)
		if err != nil || len(pos) != 1 || pos[0] != "DIR" || *project != "acme" || *prefix != "p" {
			t.Errorf("%q: positional %q, project %q, prefix %q, err %v", args, pos, *project, *prefix, err)
		}
	}
	// After "--" a word that looks like a flag is an argument.
	f := newFlags("strata search", "QUERY", "")
	top := f.Int("top-k", 10, "")
	a, _, _ := testApp(t, nil)
	pos, err := f.parse(a, []string{"--top-k", "3", "--", "--top-k", "x"}, 1, -1)
	if err != nil || *top != 3 || strings.Join(pos, " ") != "--top-k x" {
		t.Errorf("after --: positional %q, top-k %d, err %v", pos, *top, err)
	}
}

func TestConnectionSettings(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".strata")
	if err := os.MkdirAll(filepath.Join(state, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What `go tool task up` writes (localstack.Env.Lines).
	body := "NATS_URL=nats://127.0.0.1:14222\nSTRATA_API_KEY=sk-local-file\nSTRATA_BUCKET=strata\nSTRATA_MCP_URL=http://127.0.0.1:18090/mcp\n" +
		"STRATA_S3_ACCESS_KEY=strata\nSTRATA_S3_ENDPOINT=127.0.0.1:19000\nSTRATA_S3_SECRET_KEY=secret-from-file\n"
	if err := os.WriteFile(filepath.Join(state, "local.env"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "docs", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	resolve := func(wd, exe string, env map[string]string, args ...string) conn {
		t.Helper()
		a, _, _ := testApp(t, env)
		a.getwd = func() (string, error) { return wd, nil }
		a.executable = func() (string, error) { return exe, nil }
		f := newFlags("strata x", "", "")
		cf := addConnFlags(f, needMCP|needS3|needNATS)
		if _, err := f.parse(a, args, 0, 0); err != nil {
			t.Fatal(err)
		}
		c, err := cf.resolve(a)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Found from a sub-folder of the repository; the file's NATS_URL is the NATS URL.
	c := resolve(sub, "/usr/bin/strata", nil)
	if c.envFile != filepath.Join(state, "local.env") || c.get("api-key") != "sk-local-file" || c.get("nats-url") != "nats://127.0.0.1:14222" ||
		c.get("s3-endpoint") != "127.0.0.1:19000" || c.get("mcp-url") != "http://127.0.0.1:18090/mcp" {
		t.Errorf("from the env file: %+v", c)
	}
	// Found beside the binary (.strata/bin/strata) from anywhere.
	if c := resolve(t.TempDir(), filepath.Join(state, "bin", "strata"), nil); c.get("s3-secret-key") != "secret-from-file" {
		t.Errorf("beside the binary: %+v", c)
	}
	// Environment variables override the file, flags override both.
	c = resolve(sub, "", map[string]string{"STRATA_API_KEY": "sk-env", "STRATA_NATS_URL": "nats://env:4222", "STRATA_BUCKET": "other"},
		"--api-key", "sk-flag", "--bucket", "flagged")
	if c.get("api-key") != "sk-flag" || c.get("nats-url") != "nats://env:4222" || c.get("bucket") != "flagged" || c.get("s3-access-key") != "strata" {
		t.Errorf("overrides: %+v", c)
	}
	// Nothing anywhere: defaults, and a required key without a value is a one-line reason.
	c = resolve(t.TempDir(), "/usr/bin/strata", nil)
	if c.envFile != "" || c.get("mcp-url") != "http://127.0.0.1:8090/mcp" || c.get("nats-url") != "nats://127.0.0.1:4222" || c.get("bucket") != "strata" {
		t.Errorf("defaults: %+v", c)
	}
	if err := c.require("s3-access-key"); err == nil || !strings.Contains(err.Error(), "--s3-access-key or STRATA_S3_ACCESS_KEY") {
		t.Errorf("require: %v", err)
	}
	// STRATA_ENV_FILE names another file.
	other := filepath.Join(t.TempDir(), "prod.env")
	if err := os.WriteFile(other, []byte("# comment\nexport STRATA_MCP_URL=\"https://strata.example.com/mcp\"\n\nSTRATA_API_KEY='sk-prod'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c = resolve(sub, "", map[string]string{"STRATA_ENV_FILE": other})
	if c.get("mcp-url") != "https://strata.example.com/mcp" || c.get("api-key") != "sk-prod" || c.get("nats-url") != "nats://127.0.0.1:4222" {
		t.Errorf("STRATA_ENV_FILE: %+v", c)
	}
	if err := os.WriteFile(other, []byte("not a setting\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, _, _ := testApp(t, map[string]string{"STRATA_ENV_FILE": other})
	f := newFlags("strata x", "", "")
	cf := addConnFlags(f, needMCP)
	if _, err := cf.resolve(a); err == nil || !strings.Contains(err.Error(), "prod.env:1: want KEY=VALUE") {
		t.Errorf("bad env file: %v", err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("first\n  second\n"); got != "first; second" {
		t.Errorf("oneLine: %q", got)
	}
	var ue usageError
	if !errors.As(usagef("x %d", 1), &ue) || ue.Error() != "x 1" {
		t.Errorf("usagef: %v", ue)
	}
}
