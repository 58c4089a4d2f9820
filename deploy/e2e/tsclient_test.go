package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The official MCP TypeScript SDK, pinned: 1.32.2 runs on Node >= 18 and
// speaks protocols 2024-11-05 to 2025-11-25 (2026-07-28 is tested with raw
// HTTP requests).
const tsSDK = "@modelcontextprotocol/sdk@1.32.2"

var (
	tsOnce sync.Once
	tsDir  string
	tsErr  string
)

// tsClient installs the SDK once into the npm cache directory
// ($STRATA_NPM_CACHE or ~/.cache/strata/npm) and copies the scripted client
// next to its node_modules (ES modules resolve packages from the script's
// folder). Without node or npm the test fails and says what to install.
func tsClient(t *testing.T) string {
	t.Helper()
	tsOnce.Do(func() {
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				tsErr = tool + " is not on PATH: the TypeScript SDK client needs Node.js >= 18 and npm (as root on Debian/Ubuntu: apt-get install nodejs npm)"
				return
			}
		}
		base := os.Getenv("STRATA_NPM_CACHE")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				tsErr = "no home directory for the npm cache: set STRATA_NPM_CACHE"
				return
			}
			base = filepath.Join(home, ".cache", "strata", "npm")
		}
		dir := filepath.Join(base, "mcp-sdk-"+strings.TrimPrefix(tsSDK, "@modelcontextprotocol/sdk@"))
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				tsErr = "npm cache: " + err.Error()
				return
			}
			_ = os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"strata-e2e-mcp-client","private":true}`), 0o644)
			cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, tsSDK)
			if out, err := cmd.CombinedOutput(); err != nil {
				tsErr = "npm install " + tsSDK + ": " + err.Error() + "\n" + string(out)
				return
			}
		}
		script, err := os.ReadFile(filepath.Join("testdata", "mcpclient", "client.mjs"))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "client.mjs"), script, 0o644)
		}
		if err != nil {
			tsErr = "client script: " + err.Error()
			return
		}
		tsDir = dir
	})
	if tsErr != "" {
		t.Fatal(tsErr)
	}
	return filepath.Join(tsDir, "client.mjs")
}

// tsPlan is what the scripted client does (testdata/mcpclient/client.mjs).
type tsPlan struct {
	Transport       string            `json:"transport,omitempty"`
	URL             string            `json:"url,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	ClientName      string            `json:"clientName,omitempty"`
	Command         string            `json:"command,omitempty"`
	Args            []string          `json:"args,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	OAuth           map[string]string `json:"oauth,omitempty"`
	Steps           []map[string]any  `json:"steps"`
}

// tsResult is what it saw.
type tsResult struct {
	ConnectError    string            `json:"connectError"`
	ProtocolVersion string            `json:"protocolVersion"`
	SessionID       string            `json:"sessionId"`
	Steps           []json.RawMessage `json:"steps"`
}

// tsCall is one tool answer.
type tsCall struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

func runTS(t *testing.T, plan tsPlan) tsResult {
	t.Helper()
	script := tsClient(t)
	b, _ := json.Marshal(plan)
	cmd := exec.Command("node", script, string(b))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var res tsResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("TypeScript client output: %v: %s", err, stdout.String())
	}
	return res
}

func (r tsResult) calls(t *testing.T, step int) []tsCall {
	t.Helper()
	var calls []tsCall
	if err := json.Unmarshal(r.Steps[step], &calls); err != nil {
		t.Fatalf("step %d: %v: %s", step, err, r.Steps[step])
	}
	return calls
}

func (r tsResult) step(t *testing.T, i int, into any) {
	t.Helper()
	if err := json.Unmarshal(r.Steps[i], into); err != nil {
		t.Fatalf("step %d: %v: %s", i, err, r.Steps[i])
	}
}
