// Package servers installs and runs the real third-party servers Strata is
// built on (nats-server, minio, weaviate-server) as local processes, for the
// local stack and for integration tests. Binaries are built from source with
// `go install` at pinned versions and cached per user, so a second run starts
// in seconds.
package servers

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Binary is a server built from a Go module at a pinned version.
type Binary struct {
	Name    string // executable name
	Package string // package path for go install
	Version string
}

// The pinned servers: versions known to build with this Go and to work together.
var (
	NATSServer = Binary{Name: "nats-server", Package: "github.com/nats-io/nats-server/v2", Version: "v2.15.2"}
	MinIO      = Binary{Name: "minio", Package: "github.com/minio/minio", Version: "v0.0.0-20260212201848-7aac2a2c5b7c"}
	Weaviate   = Binary{Name: "weaviate-server", Package: "github.com/weaviate/weaviate/cmd/weaviate-server", Version: "v1.35.2"}
)

// All lists every pinned server.
var All = []Binary{NATSServer, MinIO, Weaviate}

// CacheDir is where built servers are kept: $STRATA_BIN_CACHE, else the user
// cache directory. It outlives clones of the repository, so CI and a new
// checkout reuse one build.
func CacheDir() (string, error) {
	if d := os.Getenv("STRATA_BIN_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate cache dir (set STRATA_BIN_CACHE): %w", err)
	}
	return filepath.Join(d, "strata", "bin"), nil
}

// Path is where b is cached: the version is part of the name, so a new pin
// installs beside the old one.
func (b Binary) Path(dir string) string { return filepath.Join(dir, b.Name+"-"+b.Version) }

// Install builds b into dir unless it is already there, printing go's
// progress to progress. Concurrent installers (parallel test packages) wait
// for each other through a lock file.
func Install(ctx context.Context, dir string, b Binary, progress io.Writer) (string, error) {
	dst := b.Path(dir)
	if isExecutable(dst) {
		return dst, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("install %s: %w", b.Name, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "."+b.Name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("install %s: lock: %w", b.Name, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("install %s: lock: %w", b.Name, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if isExecutable(dst) { // another process built it while we waited
		return dst, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("install %s: the go command is needed to build it from source: %w", b.Name, err)
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", fmt.Errorf("install %s: %w", b.Name, err)
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "building %s %s from source with go install (several minutes on a cold cache)...\n", b.Name, b.Version)
	cmd := exec.CommandContext(ctx, goBin, "install", "-v", b.Package+"@"+b.Version)
	// Outside any module, so the workspace's go.work does not apply.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	cmd.Stdout = progress
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("install %s %s (go install %s@%s): %w; the Go module proxy must be reachable", b.Name, b.Version, b.Package, b.Version, err)
	}
	built := filepath.Join(tmp, b.Name) // go install names the binary after the package, as Name does
	if err := os.Rename(built, dst); err != nil {
		return "", fmt.Errorf("install %s: %w", b.Name, err)
	}
	fmt.Fprintf(progress, "installed %s\n", dst)
	return dst, nil
}

// InstallAll installs every pinned server into dir and returns their paths by name.
func InstallAll(ctx context.Context, dir string, progress io.Writer) (map[string]string, error) {
	paths := map[string]string{}
	for _, b := range All {
		p, err := Install(ctx, dir, b, progress)
		if err != nil {
			return nil, err
		}
		paths[b.Name] = p
	}
	return paths, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
