// Package serverstest starts the real servers for a test: installed if
// missing, on free loopback ports, with data in the test's temp dir, stopped
// when the test ends.
package serverstest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/servers"
)

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// Start starts nats-server (with Strata's streams), minio and weaviate-server.
func Start(t testing.TB) *servers.Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir, err := servers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := servers.InstallAll(ctx, dir, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	ports, err := servers.FreeStackPorts()
	if err != nil {
		t.Fatal(err)
	}
	s, err := servers.StartStack(ctx, servers.StackOptions{
		Bins: bins, DataDir: t.TempDir(), Ports: ports,
		BeforeMinIO: func(ctx context.Context, natsURL string) error {
			nc, js, err := pipeline.Connect(natsURL, "test", nil)
			if err != nil {
				return err
			}
			defer nc.Close()
			return pipeline.EnsureStreams(ctx, js, 1)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(10 * time.Second) })
	return s
}

// NATS starts only a JetStream nats-server with Strata's streams and returns its URL.
func NATS(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir, err := servers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := servers.Install(ctx, dir, servers.NATSServer, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	ports, err := servers.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p, err := servers.StartNATS(ctx, bin, data, ports[0], ports[1], data, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	url := fmt.Sprintf("nats://127.0.0.1:%d", ports[0])
	nc, js, err := pipeline.Connect(url, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := pipeline.EnsureStreams(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	return url
}

var (
	sharedMu    sync.Mutex
	sharedStack *servers.Stack
	sharedDir   string
)

// StartShared starts the servers once per test binary and shares them
// between tests (each test uses its own projects); they stop when the process
// exits (the servers die with their parent).
func StartShared(t testing.TB) *servers.Stack {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedStack != nil {
		return sharedStack
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir, err := servers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := servers.InstallAll(ctx, dir, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	ports, err := servers.FreeStackPorts()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.MkdirTemp("", "strata-test-")
	if err != nil {
		t.Fatal(err)
	}
	s, err := servers.StartStack(ctx, servers.StackOptions{Bins: bins, DataDir: data, Ports: ports,
		BeforeMinIO: func(ctx context.Context, natsURL string) error {
			nc, js, err := pipeline.Connect(natsURL, "test", nil)
			if err != nil {
				return err
			}
			defer nc.Close()
			return pipeline.EnsureStreams(ctx, js, 1)
		}})
	if err != nil {
		t.Fatal(err)
	}
	sharedStack, sharedDir = s, data
	return s
}

// StopShared stops the shared servers and removes their data; call it from TestMain.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedStack != nil {
		sharedStack.Stop(10 * time.Second)
		os.RemoveAll(sharedDir)
		sharedStack = nil
	}
}
