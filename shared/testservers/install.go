// Package testservers installs and runs the real third-party servers Strata is
// built on (nats-server, minio, weaviate-server) as local processes, for the
// local stack and for integration tests. Binaries are built from source with
// `go install` at pinned versions and cached per user, so a second run starts
// in seconds.
package testservers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/strata-kb/strata/shared/usercache"
)

// Binary is a server built from a Go module at a pinned version.
type Binary struct {
	Name    string // executable name
	Module  string // module the package is in
	Package string // package path for go install
	Version string
}

// The pinned servers: versions known to build with this Go and to work together.
var (
	NATSServer = Binary{Name: "nats-server", Module: "github.com/nats-io/nats-server/v2", Package: "github.com/nats-io/nats-server/v2", Version: "v2.15.2"}
	MinIO      = Binary{Name: "minio", Module: "github.com/minio/minio", Package: "github.com/minio/minio", Version: "v0.0.0-20260212201848-7aac2a2c5b7c"}
	Weaviate   = Binary{Name: "weaviate-server", Module: "github.com/weaviate/weaviate", Package: "github.com/weaviate/weaviate/cmd/weaviate-server", Version: "v1.35.2"}
)

// All lists every pinned server.
var All = []Binary{NATSServer, MinIO, Weaviate}

// CacheDir is where built servers are kept: $STRATA_BIN_CACHE, else the user
// cache directory. It outlives clones of the repository, so CI and a new
// checkout reuse one build.
func CacheDir() (string, error) { return usercache.Dir("STRATA_BIN_CACHE", "bin") }

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
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false",
		// As upstream builds it: Strata's own GOEXPERIMENT (Taskfile) is not theirs.
		"GOEXPERIMENT=")
	// go install -v prints each package it compiles, one per line: progress counts them.
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

// Installed reports whether b is already built into dir.
func (b Binary) Installed(dir string) bool { return isExecutable(b.Path(dir)) }

// Packages counts the packages a cold build of b compiles (what `go install
// -v` prints, one per line), downloading b's module and its dependencies
// first, so a progress count has its total.
func (b Binary) Packages(ctx context.Context) (int, error) {
	tmp, err := os.MkdirTemp("", "strata-list-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	env := append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	dl := exec.CommandContext(ctx, "go", "mod", "download", "-json", b.Module+"@"+b.Version)
	dl.Dir, dl.Env = tmp, env
	out, err := dl.Output()
	if err != nil {
		return 0, fmt.Errorf("download %s@%s: %w", b.Module, b.Version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return 0, fmt.Errorf("download %s@%s: no module directory in %q", b.Module, b.Version, out)
	}
	pkg := "." + strings.TrimPrefix(b.Package, b.Module)
	list := exec.CommandContext(ctx, "go", "list", "-deps", pkg)
	list.Dir, list.Env = mod.Dir, env
	out, err = list.Output()
	if err != nil {
		return 0, fmt.Errorf("list the packages of %s: %w", b.Package, err)
	}
	return strings.Count(string(out), "\n"), nil
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
