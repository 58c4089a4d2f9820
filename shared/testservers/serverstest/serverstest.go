// Package serverstest starts the real servers for a test: installed if
// missing, on free loopback ports, with data in a temp dir.
package serverstest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
)

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// installCtx bounds a first install (a cold build takes minutes).
func installCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Minute)
}

// cacheDir is where the servers are installed (testservers.CacheDir).
func cacheDir(t testing.TB) string {
	t.Helper()
	dir, err := testservers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// createStreams is StackOptions.BeforeMinIO: MinIO's notification target needs the stream.
func createStreams(ctx context.Context, natsURL string) error {
	nc, js, err := pipeline.Connect(natsURL, "test", nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	return pipeline.EnsureStreams(ctx, js, 1)
}

// startStack installs what is missing and starts the three servers in dataDir.
func startStack(t testing.TB, dataDir string) *testservers.Stack {
	t.Helper()
	ctx, cancel := installCtx()
	defer cancel()
	dir := cacheDir(t)
	bins, err := testservers.InstallAll(ctx, dir, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	ports, err := testservers.FreeStackPorts()
	if err != nil {
		t.Fatal(err)
	}
	s, err := testservers.StartStack(ctx, testservers.StackOptions{Bins: bins, DataDir: dataDir, Ports: ports, BeforeMinIO: createStreams})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NATS starts only a JetStream nats-server with Strata's streams and returns its URL.
func NATS(t testing.TB) string {
	t.Helper()
	ctx, cancel := installCtx()
	defer cancel()
	dir := cacheDir(t)
	bin, err := testservers.Install(ctx, dir, testservers.NATSServer, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	ports, err := testservers.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p, err := testservers.StartNATS(ctx, bin, data, ports[0], ports[1], data, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	url := fmt.Sprintf("nats://127.0.0.1:%d", ports[0])
	if err := createStreams(ctx, url); err != nil {
		t.Fatal(err)
	}
	return url
}

var (
	sharedMu    sync.Mutex
	sharedStack *testservers.Stack
	sharedDir   string
)

// StartShared starts the servers once per test binary and shares them
// between tests (each test uses its own projects); call StopShared from TestMain.
func StartShared(t testing.TB) *testservers.Stack {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedStack != nil {
		return sharedStack
	}
	data, err := os.MkdirTemp("", "strata-test-")
	if err != nil {
		t.Fatal(err)
	}
	sharedStack, sharedDir = startStack(t, data), data
	return sharedStack
}

// StopShared stops the shared servers and removes their data.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedStack != nil {
		sharedStack.Stop(10 * time.Second)
		os.RemoveAll(sharedDir)
		sharedStack = nil
	}
}
