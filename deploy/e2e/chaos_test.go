package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/deploy/measure/strata-chaos/chaos"
)

// TestChaosShort is strata-chaos for 2 minutes (package chaos): a loopback
// cluster of 3 NATS, 4 MinIO and 3 Weaviate nodes with two processes of
// every service, loaded with uploads, overwrites and deletes of five
// formats and MCP reads, a random process killed with SIGKILL every 20 s
// and started again. At the end the index must match the bucket (nothing
// lost, duplicated or stale) and every read must have been served within
// 2 s (a retry on the other queryd replica included). It takes about 6-8
// minutes.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run starts a 10-node cluster and 8 service processes for several minutes; skipped with -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := chaos.DefaultConfig(2 * time.Minute)
	cfg.Root, cfg.StateDir = root, t.TempDir()
	cfg.Progress, cfg.Log = logWriter{t}, t.Logf
	res, err := chaos.Run(context.Background(), cfg)
	if res != nil {
		var report strings.Builder
		if werr := res.WriteMarkdown(&report); werr == nil {
			t.Log("\n" + report.String())
		}
	}
	if err != nil || !res.OK() {
		keepChaosLogs(t, cfg.StateDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary())
	if !res.OK() {
		t.Fatalf("the cluster did not survive: %s", res.Summary())
	}
}

// keepChaosLogs copies the cluster's logs (servers and services) out of the
// test's temporary directory, as dumpLogsOnFailure does for other tests.
func keepChaosLogs(t *testing.T, state string) {
	dir := filepath.Join(os.TempDir(), "strata-e2e-failures", t.Name()+"-"+time.Now().UTC().Format("20060102T150405.000"))
	logs := filepath.Join(state, "data", "logs")
	entries, err := os.ReadDir(logs)
	if err != nil {
		t.Logf("no logs kept: %v", err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("no logs kept: %v", err)
		return
	}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(logs, e.Name())); err == nil {
			_ = os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
	}
	t.Logf("whole cluster logs kept in %s", dir)
}
