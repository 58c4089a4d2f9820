package e2e

import (
	"bytes"
	"context"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The official MCP conformance suite, pinned: 0.1.13 is the newest that runs
// on Node 20 (later versions need Node 22).
const conformanceSuite = "@modelcontextprotocol/conformance@0.1.13"

// conformanceApplies are the suite's server scenarios that test what any
// server with Strata's capabilities (tools, resources, logging; no prompts,
// no completions, no subscriptions) must do. Every one must pass.
// server-sse-multiple-streams only needs concurrent POSTs of one session.
var conformanceApplies = []string{
	"server-initialize", "ping", "tools-list", "dns-rebinding-protection", "logging-set-level", "resources-list", "server-sse-multiple-streams",
}

// conformanceNotApplicable are the other scenarios, with why: they call the
// suite's own test tools, resources and prompts (its reference server's
// test_simple_text, test://static-text, test_prompt_with_arguments, ...),
// which a knowledge base does not have.
var conformanceNotApplicable = map[string]string{
	"completion-complete":           "completes an argument of the suite's prompt test_prompt_with_arguments; Strata serves no prompts",
	"tools-call-simple-text":        "calls the suite's tool test_simple_text",
	"tools-call-image":              "calls the suite's tool test_image_content",
	"tools-call-audio":              "calls the suite's tool test_audio_content",
	"tools-call-embedded-resource":  "calls the suite's tool test_embedded_resource",
	"tools-call-mixed-content":      "calls the suite's tool test_multiple_content_types",
	"tools-call-with-logging":       "calls the suite's tool test_tool_with_logging",
	"tools-call-error":              "calls the suite's tool test_error_handling",
	"tools-call-with-progress":      "calls the suite's tool test_tool_with_progress",
	"tools-call-sampling":           "calls the suite's tool test_sampling; Strata's tools never ask the client to sample",
	"tools-call-elicitation":        "calls the suite's tool test_elicitation; Strata's tools never elicit",
	"json-schema-2020-12":           "lists the suite's tool json_schema_2020_12_tool",
	"elicitation-sep1034-defaults":  "calls the suite's tool test_elicitation_sep1034_defaults",
	"elicitation-sep1330-enums":     "calls the suite's elicitation enum tool",
	"server-sse-polling":            "calls the suite's tool test_reconnection",
	"resources-read-text":           "reads the suite's resource test://static-text",
	"resources-read-binary":         "reads the suite's resource test://static-binary",
	"resources-templates-read":      "reads the suite's template test://template/{id}/data",
	"resources-subscribe":           "subscribes to the suite's test://watched-resource; Strata offers no subscriptions",
	"resources-unsubscribe":         "unsubscribes from the suite's test://watched-resource",
	"prompts-list":                  "Strata serves no prompts",
	"prompts-get-simple":            "gets the suite's prompt test_simple_prompt",
	"prompts-get-with-args":         "gets the suite's prompt test_prompt_with_arguments",
	"prompts-get-embedded-resource": "gets the suite's prompt test_prompt_with_embedded_resource",
	"prompts-get-with-image":        "gets the suite's prompt test_prompt_with_image",
}

var (
	conformanceOnce sync.Once
	conformanceBin  string
	conformanceErr  string
)

// conformanceCLI installs the suite once into the npm cache directory
// ($STRATA_NPM_CACHE or ~/.cache/strata/npm), as tsClient does the SDK.
// Without node or npm the test fails and says what to install.
func conformanceCLI(t *testing.T) string {
	t.Helper()
	conformanceOnce.Do(func() {
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				conformanceErr = tool + " is not on PATH: the MCP conformance suite needs Node.js >= 20 and npm (as root on Debian/Ubuntu: apt-get install nodejs npm)"
				return
			}
		}
		base := os.Getenv("STRATA_NPM_CACHE")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				conformanceErr = "no home directory for the npm cache: set STRATA_NPM_CACHE"
				return
			}
			base = filepath.Join(home, ".cache", "strata", "npm")
		}
		dir := filepath.Join(base, "mcp-conformance-"+strings.TrimPrefix(conformanceSuite, "@modelcontextprotocol/conformance@"))
		bin := filepath.Join(dir, "node_modules", ".bin", "conformance")
		if _, err := os.Stat(bin); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				conformanceErr = "npm cache: " + err.Error()
				return
			}
			_ = os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"strata-e2e-mcp-conformance","private":true}`), 0o644)
			cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, conformanceSuite)
			if out, err := cmd.CombinedOutput(); err != nil {
				conformanceErr = "npm install " + conformanceSuite + ": " + err.Error() + "\n" + string(out)
				return
			}
		}
		conformanceBin = bin
	})
	if conformanceErr != "" {
		t.Fatal(conformanceErr)
	}
	return conformanceBin
}

// keyProxy forwards to queryd with the API key added (the suite has no option
// for headers). The client's Host and Origin pass unchanged, so queryd's
// DNS-rebinding checks see what the suite sent.
func keyProxy(t *testing.T, mcpURL, key string) string {
	t.Helper()
	target, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+key)
		},
		FlushInterval: -1, // SSE answers stream through
		// Its errors (a failed copy of an answer) go to the test's log,
		// timed, beside the suite's output.
		ErrorLog: log.New(testLog{t}, "keyProxy: ", log.Lmicroseconds),
	}
	// A POST whose request context ended before its answer was copied lost
	// its client's connection first (net/http cancels it when the
	// connection reads EOF): said with the time, to tell that apart from
	// queryd closing the answer (a run failed once with "terminated").
	logged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// Full duplex, or the proxy can cut an answer it is copying (the
		// one failure of tools-list, "terminated"; golang/go#40747): an
		// HTTP/1 server drains and closes a request's body when the
		// handler first writes its answer, and the proxy's transport,
		// having sent the body, reads it once more to check it was not
		// longer than declared. When that read comes after the close (a
		// loaded machine delays it past queryd's answer), the transport
		// takes it for a failed request, closes its connection to queryd
		// and the answer being copied ends with "use of closed network
		// connection". Full duplex leaves the body to the handler.
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("keyProxy: full duplex: %v", err)
		}
		proxy.ServeHTTP(w, r)
		if err := r.Context().Err(); err != nil && r.Method == http.MethodPost {
			t.Logf("keyProxy: %s POST %s: its context ended %v after it came (%v) before its answer was copied",
				start.Format("15:04:05.000000"), r.URL.Path, time.Since(start), context.Cause(r.Context()))
		}
	})
	srv := httptest.NewServer(logged) // on 127.0.0.1: the suite's rebinding test needs a loopback URL
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// testLog writes a logger's lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestMCPConformanceSuite runs the official conformance suite against queryd
// of a real stack (with a file indexed, so resources/list has a resource).
func TestMCPConformanceSuite(t *testing.T) {
	bin := conformanceCLI(t)
	listed := conformanceScenarios(t, bin)
	for _, s := range listed {
		if !slices.Contains(conformanceApplies, s) && conformanceNotApplicable[s] == "" {
			t.Errorf("scenario %s of %s is new: decide whether it applies (conformanceApplies) or why not (conformanceNotApplicable)", s, conformanceSuite)
		}
	}
	for _, s := range conformanceApplies {
		if !slices.Contains(listed, s) {
			t.Fatalf("scenario %s is not in %s's list %v", s, conformanceSuite, listed)
		}
	}
	h := start(t)
	h.put("acme/docs/guide.md", guideV1)
	h.settle()
	endpoint := keyProxy(t, h.stack.Env.MCPURL, h.stack.Env.APIKey)
	for _, s := range conformanceApplies {
		t.Run(s, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "server", "--url", endpoint, "--scenario", s)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			t.Logf("%s", out.String())
			m := suiteTotals.FindStringSubmatch(out.String())
			if err != nil || m == nil || m[1] != m[2] || m[1] == "0" {
				t.Fatalf("scenario %s did not pass every check without warnings (%v)", s, err)
			}
		})
	}
}

// suiteTotals is the suite's summary line of a scenario that passed every
// check with no failure and no warning.
var suiteTotals = regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed, 0 warnings`)

// conformanceScenarios is the suite's own list of server scenarios.
func conformanceScenarios(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command(bin, "list", "--server").CombinedOutput()
	if err != nil {
		t.Fatalf("%s list --server: %v\n%s", conformanceSuite, err, out)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("no scenarios in:\n%s", out)
	}
	return names
}
