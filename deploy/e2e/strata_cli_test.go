package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// strataCLI runs the strata command (deploy/cmd/strata) as a user would
// after `go tool task up`: its connection settings from the env file the
// stack wrote (STRATA_ENV_FILE here; .strata/local.env for a user), no
// STRATA_* variables of the test's environment.
type strataCLI struct {
	t       *testing.T
	bin     string
	env     []string
	envFile string
}

func newStrataCLI(t *testing.T, h *harness) *strataCLI {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "strata")
	build := exec.Command("go", "build", "-o", bin, "./deploy/cmd/strata")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the strata command: %v\n%s", err, out)
	}
	envFile := filepath.Join(t.TempDir(), "local.env")
	if err := os.WriteFile(envFile, []byte(strings.Join(h.stack.Env.Lines(), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "STRATA_") && name != "NATS_URL" {
			env = append(env, kv)
		}
	}
	return &strataCLI{t: t, bin: bin, env: append(env, "STRATA_ENV_FILE="+envFile), envFile: envFile}
}

// run runs the command and returns its exit code, stdout and stderr.
func (c *strataCLI) run(args ...string) (int, string, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env, cmd.Dir = c.env, c.t.TempDir()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	c.t.Fatalf("strata %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

// ok runs a command that must succeed and returns its stdout.
func (c *strataCLI) ok(args ...string) string {
	c.t.Helper()
	code, stdout, stderr := c.run(args...)
	if code != 0 || stderr != "" {
		c.t.Fatalf("strata %s: exit %d, stderr %q\n%s", strings.Join(args, " "), code, stderr, stdout)
	}
	return stdout
}

// TestStrataCLI runs every strata subcommand against a real stack: ingest
// of a folder with a broken PDF, search, status, releases, reindex and the
// dead letters.
func TestStrataCLI(t *testing.T) {
	h := start(t)
	cli := newStrataCLI(t, h)

	if code, out, errOut := cli.run("ingest", "--help"); code != 0 || errOut != "" || !strings.HasPrefix(out, "Usage: strata ingest DIR --project P") {
		t.Fatalf("ingest --help: exit %d, %q\n%s", code, errOut, out)
	}

	// Ingest a folder; the PDF of garbage fails with its reason, the rest becomes searchable.
	dir := t.TempDir()
	files := map[string]string{
		"guide.md":        "# Guide\n\n## Deploy\n\nThe clitestword deploy runs the migrations first, then the services.\n",
		"notes/todo.txt":  "Remember the clitestword checklist before every release.\n",
		"code/main.go":    "package main\n\n// main prints the clitestword greeting.\nfunc main() { println(\"hello\") }\n",
		"reports/bad.pdf": "%PDF-1.7\n" + strings.Repeat("\x00garbage", 200),
		"notes/deep/a.md": "# A\n\nAnother note about deployments.\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	code, out, errOut := cli.run("ingest", dir, "--project", "acme", "--prefix", "kb")
	h.events += uint64(len(files))
	t.Logf("strata ingest (%s):\n%s%s", time.Since(started).Round(time.Millisecond), out, errOut)
	if code != 1 || errOut != "strata ingest: 1 file of 5 not searchable (see above)\n" {
		t.Fatalf("ingest with a broken file: exit %d, stderr %q", code, errOut)
	}
	// Not a terminal: plain progress lines, no carriage returns; the summary names the failure and why.
	if strings.Contains(out, "\r") || !strings.Contains(out, "uploading: 5/5 files") || !regexp.MustCompile(`(?m)^waiting [^:]+: \d+ pending, \d+ extracted, \d+ committed, \d+ embedded, \d+ failed \(of 5\)$`).MatchString(out) ||
		!strings.Contains(out, "\nUploaded 5 files (") || !strings.Contains(out, ": 4 embedded (keyword and vector search), 1 failed.\n") {
		t.Errorf("ingest output:\n%s", out)
	}
	failed := regexp.MustCompile(`\nFailed \(1\):\n  acme/kb/reports/bad\.pdf: (.+)\n`).FindStringSubmatch(out)
	if failed == nil {
		t.Fatalf("the broken PDF is not listed with its reason:\n%s", out)
	}
	// The reason is the one the index records (the status tool lists it too).
	status, _ := h.call("status", map[string]any{})
	var recorded string
	for _, p := range status["projects"].([]any) {
		for _, f := range p.(map[string]any)["failures"].([]any) {
			if f := f.(map[string]any); f["path"] == "kb/reports/bad.pdf" {
				recorded, _ = f["error"].(string)
			}
		}
	}
	if recorded == "" || strings.Join(strings.Fields(recorded), " ") != strings.Join(strings.Fields(failed[1]), " ") {
		t.Errorf("ingest reports the broken PDF's reason as %q, the index records %q", failed[1], recorded)
	}
	if sr, _ := h.call("search_keyword", map[string]any{"query": "clitestword"}); len(results(sr)) != 3 {
		t.Errorf("after ingest returned, keyword search finds %d of the 3 files", len(results(sr)))
	}

	// Search: readable, and --json raw; settings from flags instead of the env file.
	out = cli.ok("search", "clitestword", "deploy", "--project", "acme", "--top-k", "3")
	t.Logf("strata search:\n%s", out)
	if !strings.Contains(out, `results for "clitestword deploy"`) || !strings.Contains(out, " 1. acme/kb/guide.md › Guide › Deploy  (score ") ||
		!strings.Contains(out, "keyword #1 (bm25 ") || !strings.Contains(out, "The clitestword deploy runs the migrations first") {
		t.Errorf("search:\n%s", out)
	}
	out = cli.ok("search", "clitestword", "--json", "--env-file", os.DevNull, "--mcp-url", h.stack.Env.MCPURL, "--api-key", h.stack.Env.APIKey)
	var answer struct {
		Results []struct {
			DocumentPath string `json:"document_path"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &answer); err != nil || len(answer.Results) < 3 {
		t.Errorf("search --json: %v\n%s", err, out)
	}
	if code, _, errOut := cli.run("search", "x", "--env-file", os.DevNull, "--mcp-url", h.stack.Env.MCPURL, "--api-key", "sk-wrong"); code != 1 ||
		!strings.HasPrefix(errOut, "strata search: MCP endpoint ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("a wrong API key: exit %d, %q", code, errOut)
	}

	// Status, with the pipeline's lag.
	out = cli.ok("status", "--pipeline")
	t.Logf("strata status --pipeline:\n%s", out)
	if !regexp.MustCompile(`(?m)^acme +4 +\d+ +\d+ +1 +0 +\d+$`).MatchString(out) || !strings.Contains(out, "acme/kb/reports/bad.pdf (failed): ") ||
		!regexp.MustCompile(`(?m)^CHUNKS +embedder +\d+ +\d+$`).MatchString(out) || !regexp.MustCompile(`(?m)^DEADLETTER +\(dead letters\) +0 +-$`).MatchString(out) ||
		!strings.Contains(out, "3 worker replicas without a full disk or memory over budget") {
		t.Errorf("status:\n%s", out)
	}

	// Releases: create pins the watermark; a version is never reused; list shows it.
	wm := h.watermark("acme")
	out = cli.ok("release", "create", "v1.0.0", "--project", "acme")
	if want := "release v1.0.0 of acme pins sequence " + jsonNumber(wm) + "\n"; !strings.HasPrefix(out, want) {
		t.Errorf("release create: %q, want %q", out, want)
	}
	if code, out, errOut := cli.run("release", "create", "v1.0.0", "--project", "acme"); code != 1 || out != "" ||
		!strings.HasPrefix(errOut, `strata release create: release "v1.0.0" of project "acme" already exists`) {
		t.Errorf("a reused version: exit %d, %q, %q", code, out, errOut)
	}
	out = cli.ok("release", "list", "--project", "acme")
	if !regexp.MustCompile(`(?m)^v1\.0\.0 +main +` + jsonNumber(wm) + ` `).MatchString(out) {
		t.Errorf("release list:\n%s", out)
	}

	// Reindex: forced, every file of the project is re-emitted.
	h.settle()
	from := h.lastObjectsSeq()
	out = cli.ok("reindex", "--project", "acme", "--force")
	if !strings.HasPrefix(out, "reindex of acme requested: every file (forced) (stored in OBJECTS at sequence ") {
		t.Errorf("reindex: %q", out)
	}
	h.events += 1 + uint64(len(files))
	h.settle()
	var want []string
	for name := range files {
		want = append(want, "acme/kb/"+name)
	}
	slices.Sort(want)
	if got := h.reemitted(from); !slices.Equal(got, want) {
		t.Errorf("reindex re-emitted %v, want %v", got, want)
	}

	// Dead letters: a key outside the convention is dead-lettered by the ingestor.
	h.put("bad project/x.md", "dead-lettered")
	h.settle()
	out = cli.ok("deadletters", "list")
	t.Logf("strata deadletters list:\n%s", out)
	row := regexp.MustCompile(`(?m)^(\d+) +\S+ \S+ +ingestor +\d+ +bad project/x\.md +.*invalid object key`).FindStringSubmatch(out)
	if row == nil {
		t.Fatalf("deadletters list:\n%s", out)
	}
	seq := row[1]
	out = cli.ok("deadletters", "show", seq)
	if !strings.Contains(out, "Object: bad project/x.md\n") || !strings.Contains(out, "  Strata-Stage: ingestor\n") ||
		!strings.Contains(out, "  Strata-Original-Subject: strata.objects.events\n") {
		t.Errorf("deadletters show %s:\n%s", seq, out)
	}
	// Re-driven, the event is dead-lettered again (the key is still outside the convention).
	out = cli.ok("deadletters", "redrive", seq)
	if !strings.HasPrefix(out, "dead letter "+seq+" re-driven to strata.objects.events (stored at sequence ") {
		t.Errorf("redrive: %q", out)
	}
	h.events++
	h.settle()
	var letters []struct {
		Seq    uint64 `json:"seq"`
		Object string `json:"object"`
	}
	for deadline := time.Now().Add(30 * time.Second); len(letters) < 2; time.Sleep(200 * time.Millisecond) {
		if err := json.Unmarshal([]byte(cli.ok("deadletters", "list", "--stage", "ingestor", "--json")), &letters); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the re-driven event was not dead-lettered again: %+v", letters)
		}
	}
	if letters[1].Object != "bad project/x.md" || strconv.FormatUint(letters[1].Seq, 10) == seq {
		t.Errorf("dead letters after the re-drive: %+v", letters)
	}

	// With the embedder stopped an upload is committed but never embedded:
	// ingest gives up after --timeout without progress and says where it stopped.
	if err := h.stack.Services["embedder"].Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	stalled := t.TempDir()
	if err := os.WriteFile(filepath.Join(stalled, "x.md"), []byte("# X\n\nwaits for its vectors\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli.run("ingest", stalled, "--project", "acme", "--prefix", "stall", "--timeout", "3s")
	if code != 1 || errOut != "strata ingest: 1 file of 1 not searchable (see above)\n" ||
		!strings.Contains(out, "\nNot searchable yet (1, nothing moved for 3.0s):\n  acme/stall/x.md: committed\n") {
		t.Errorf("ingest without an embedder: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// TestStrataCLIKeywordOnly: without an embedding provider no vectors come,
// and ingest ends once the files are committed (keyword-searchable).
func TestStrataCLIKeywordOnly(t *testing.T) {
	h := startWith(t, map[string][]string{"embedder": {"STRATA_EMBEDDING_PROVIDER=none"}, "queryd": {"STRATA_EMBEDDING_PROVIDER=none"}})
	cli := newStrataCLI(t, h)
	dir := t.TempDir()
	for name, body := range map[string]string{"a.md": "# A\n\nkeywordonlyword one\n", "b/c.txt": "keywordonlyword two\n"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := cli.ok("ingest", dir, "--project", "plain")
	t.Logf("strata ingest:\n%s", out)
	if !strings.Contains(out, ": 2 committed without vectors (keyword search; no chunks or no embedding provider).\n") || strings.Contains(out, "Failed") {
		t.Errorf("ingest without embeddings:\n%s", out)
	}
	out = cli.ok("search", "keywordonlyword", "--project", "plain")
	if !strings.HasPrefix(out, `2 results for "keywordonlyword" (relative fusion, alpha 0; read at plain@2)`) || strings.Contains(out, "vector #") {
		t.Errorf("keyword-only search:\n%s", out)
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
