package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ServicePackages are the main packages BuildServices builds: the four
// services, the ingestor's PDF picture reader (which it finds beside itself)
// and the strata command.
func ServicePackages() []string {
	pkgs := make([]string, 0, len(Services)+2)
	for _, name := range Services {
		pkgs = append(pkgs, "./"+name+"/cmd/"+name)
	}
	return append(pkgs, "./ingestor/cmd/strata-pdf-pictures", "./deploy/cmd/strata")
}

// GoExperiment is the GOEXPERIMENT the services are built with. jsonv2
// puts encoding/json on the json/v2 implementation: the same output, but
// queryd's answers encode in half the time (a large list_file_chunks page:
// 0.95 -> 0.46 ms in process, 6.6 -> 3.4 ms over HTTP with mcp-go's client;
// BenchmarkListFileChunksLarge), and so do Weaviate's answers decoded by
// the client. The Dockerfiles and the Taskfile set the same value
// (deploy/manifests checks they agree).
const GoExperiment = "jsonv2"

// WithGoExperiment returns env with GOEXPERIMENT set to GoExperiment
// (replacing any GOEXPERIMENT env had).
func WithGoExperiment(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOEXPERIMENT=") {
			out = append(out, kv)
		}
	}
	return append(out, "GOEXPERIMENT="+GoExperiment)
}

// BuildServices builds the four services and the strata command from the
// workspace at root into binDir, in one go build (-v: a line per package).
func BuildServices(ctx context.Context, root, binDir string, progress io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-v", "-o", binDir + string(filepath.Separator)}, ServicePackages()...)...)
	cmd.Dir = root
	cmd.Env = WithGoExperiment(os.Environ())
	cmd.Stdout, cmd.Stderr = progress, progress
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build the Strata services: %w", err)
	}
	return nil
}

// WorkspaceRoot finds the directory holding go.work, from the working directory up.
func WorkspaceRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work found: run from inside the Strata repository")
		}
		dir = parent
	}
}
