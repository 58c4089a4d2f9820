package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/apikeys"
	"github.com/strata-kb/strata/shared/freshness"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// revokeBound is the requirement: every replica refuses a revoked key (and
// accepts a new one) within this long.
const revokeBound = time.Second

func TestValidateAPIKeys(t *testing.T) {
	base := []string{"-cursor-secret", "0123456789abcdef0123", "-embedding-provider", "none"}
	for _, tc := range []struct {
		args []string
		want string // "" = valid
	}{
		{[]string{"-api-keys", "k1-0123456789abcdef=acme,beta|hr,finance;k2-0123456789abcdef=*|*"}, ""},
		{nil, "no API keys configured"},
		{[]string{"-nats-url", "nats://127.0.0.1:4222"}, ""}, // every key from the key store
		{[]string{"-api-keys", "k1-0123456789abcdef=acme|HR"}, `invalid group "HR"`},
		{[]string{"-transport", "stdio", "-api-keys", "k1-0123456789abcdef=acme", "-stdio-api-key", "k1-0123456789abcdef"}, ""},
		{[]string{"-transport", "stdio", "-api-keys", "k1-0123456789abcdef=acme", "-stdio-api-key", "other-0123456789abcdef"}, "stdio-api-key"},
		// With NATS the stdio key may be a stored one: checked once the store is loaded.
		{[]string{"-transport", "stdio", "-nats-url", "nats://127.0.0.1:4222", "-stdio-api-key", "sk-strata-stored-0123456789"}, ""},
	} {
		var c Config
		fs := flag.NewFlagSet("queryd", flag.ContinueOnError)
		c.RegisterFlags(fs)
		if err := fs.Parse(append(append([]string{}, base...), tc.args...)); err != nil {
			t.Fatal(err)
		}
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// natsWithBuckets starts a nats-server with what queryd expects at startup
// besides its own buckets: the object-state bucket the ingestor creates.
func natsWithBuckets(t *testing.T) string {
	t.Helper()
	url := serverstest.NATS(t)
	nc, js, err := pipeline.Connect(url, "queryd-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := freshness.Open(context.Background(), js, 1); err != nil {
		t.Fatal(err)
	}
	return url
}

// mcpStatus sends an MCP initialize with key and returns the HTTP status.
func mcpStatus(t *testing.T, addr, key string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"keys-test","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// awaitStatus polls every replica until each answers want for key; it fails
// the test if one does not within revokeBound of start, and returns how
// long the slowest took.
func awaitStatus(t *testing.T, what string, start time.Time, addrs []string, key string, want int) time.Duration {
	t.Helper()
	var slowest time.Duration
	for i, addr := range addrs {
		for got := mcpStatus(t, addr, key); got != want; got = mcpStatus(t, addr, key) {
			if time.Since(start) > revokeBound {
				t.Fatalf("%s: replica %d answers %d %s after, want %d within %s", what, i+1, got, time.Since(start), want, revokeBound)
			}
			time.Sleep(2 * time.Millisecond)
		}
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("%s: both replicas answer %d after %s", what, want, slowest.Round(10*time.Microsecond))
	return slowest
}

// buildStrata builds the operators' CLI from the workspace, or skips: it
// is another module, found only through go.work.
func buildStrata(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the strata command")
	}
	if out, err := exec.Command("go", "env", "GOWORK").Output(); err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == "off" {
		t.Skip("the strata command is in the deploy module: needs the go.work workspace")
	}
	bin := filepath.Join(t.TempDir(), "strata")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/strata-kb/strata/deploy/cmd/strata")
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=jsonv2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build strata: %v\n%s", err, out)
	}
	return bin
}

// strataCLI runs the strata command against natsURL, from an empty folder
// (no .strata/local.env to pick up).
func strataCLI(t *testing.T, bin, natsURL string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "STRATA_NATS_URL="+natsURL, "STRATA_ENV_FILE=")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), o.String(), e.String()
}

// TestStoredKeysAcrossReplicas runs two queryd replicas (in process, with a
// stand-in Weaviate) on one real nats-server and the strata command: a key
// made with strata keys create authenticates on both within a second; after
// strata keys revoke both refuse it within a second; the -api-keys key works
// throughout; list never prints the key; revoking an unknown name exits 1.
func TestStoredKeysAcrossReplicas(t *testing.T) {
	bin := buildStrata(t)
	url := natsWithBuckets(t)
	addrs := []string{startQueryd(t, "-nats-url", url), startQueryd(t, "-nats-url", url)}

	code, out, errOut := strataCLI(t, bin, url, "keys", "create", "--name", "replica-test", "--project", "acme", "--groups", "hr,finance")
	created := time.Now()
	if code != 0 {
		t.Fatalf("strata keys create: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := lines[len(lines)-1]
	if !strings.HasPrefix(key, "sk-strata-") || len(key) < 16 {
		t.Fatalf("strata keys create: the last line is not a key:\n%s", out)
	}
	awaitStatus(t, "created", created, addrs, key, http.StatusOK)

	if code, out, _ := strataCLI(t, bin, url, "keys", "list", "--json"); code != 0 || strings.Contains(out, key) || strings.Contains(out, apikeys.Hash(key)) ||
		!strings.Contains(out, `"replica-test"`) {
		t.Fatalf("strata keys list --json: exit %d:\n%s", code, out)
	}

	start := time.Now()
	if code, _, errOut := strataCLI(t, bin, url, "keys", "revoke", "replica-test"); code != 0 {
		t.Fatalf("strata keys revoke: exit %d: %s", code, errOut)
	}
	revoked := time.Now()
	took := awaitStatus(t, "revoked", revoked, addrs, key, http.StatusUnauthorized)
	t.Logf("revoke propagation: %s after strata keys revoke returned (%s including the command's own run)",
		took.Round(10*time.Microsecond), time.Since(start).Round(time.Millisecond))

	if code, _, errOut := strataCLI(t, bin, url, "keys", "revoke", "replica-test"); code != 1 || !strings.Contains(errOut, `no key named "replica-test"`) {
		t.Fatalf("revoke an unknown name: exit %d, %q", code, errOut)
	}
	for i, addr := range addrs {
		if got := mcpStatus(t, addr, testKey); got != http.StatusOK {
			t.Errorf("replica %d: the -api-keys key answers %d", i+1, got)
		}
	}
}

// TestFlagKeysWithoutNATS: without -nats-url, -api-keys alone authenticate.
func TestFlagKeysWithoutNATS(t *testing.T) {
	addr := startQueryd(t)
	if got := mcpStatus(t, addr, testKey); got != http.StatusOK {
		t.Fatalf("-api-keys key: %d", got)
	}
	if got := mcpStatus(t, addr, "sk-strata-not-a-key-0123456789"); got != http.StatusUnauthorized {
		t.Fatalf("unknown key: %d", got)
	}
}

// TestStdioKeyLookedUpPerCall serves stdio (serveStdio, as run does) with a
// key of a real key store: a tool call sees the key's principal, and once
// the key is revoked the next call is not authenticated, within a second.
func TestStdioKeyLookedUpPerCall(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := serverstest.NATS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nc, js, err := pipeline.Connect(url, "stdio-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	log := slog.New(slog.DiscardHandler)
	store, err := watchKeys(ctx, js, 1, log)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := auth.OpenKeysBucket(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	key := "sk-strata-stdio-0123456789abcdef"
	rec, _ := json.Marshal(apikeys.Record{Name: "desktop", Hash: apikeys.Hash(key), Projects: []string{"acme"}, Groups: []string{"hr"}, CreatedAt: time.Now()})
	if _, err := kv.Put(ctx, "desktop", rec); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(revokeBound); ; time.Sleep(time.Millisecond) {
		if _, ok := store.Lookup(key); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("stored key not known within 1 s")
		}
	}
	keys := auth.Lookups{(*auth.Keys)(nil), store}
	if err := serveStdio(ctx, server.NewMCPServer("t", "1"), keys, "sk-strata-unknown-0123456789", strings.NewReader(""), io.Discard, log); err == nil ||
		!strings.Contains(err.Error(), "-stdio-api-key is neither one of -api-keys nor a key of the key store") {
		t.Fatalf("an unknown stdio key: %v", err)
	}

	srv := server.NewMCPServer("t", "1")
	srv.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, ok := auth.FromContext(ctx)
		if !ok {
			return mcp.NewToolResultError("not authenticated"), nil
		}
		return mcp.NewToolResultText(p.KeyName + " " + strings.Join(p.Groups(), ",")), nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveStdio(ctx, srv, keys, key, inR, outW, log) }()
	c := client.NewClient(transport.NewIO(outR, inW, nil))
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "stdio-keys-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	whoami := func() string {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = "whoami"
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mcp.TextContent).Text
	}
	if got := whoami(); got != "desktop hr" {
		t.Fatalf("whoami with the stored key: %q", got)
	}
	start := time.Now()
	if err := kv.Purge(ctx, "desktop"); err != nil {
		t.Fatal(err)
	}
	for got := whoami(); got != "not authenticated"; got = whoami() {
		if time.Since(start) > revokeBound {
			t.Fatalf("stdio call still authenticated %s after revoking: %q", time.Since(start), got)
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("stdio: a call is refused %s after the key was revoked", time.Since(start).Round(10*time.Microsecond))
	cancel()
	inW.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("serveStdio did not return")
	}
}
