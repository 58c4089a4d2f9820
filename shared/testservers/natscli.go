package testservers

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// NATSCLI is the operators' `nats` command, pinned like the servers: v0.5.0
// is the newest whose dependencies the module proxy serves.
var NATSCLI = Binary{Name: "nats", Module: "github.com/nats-io/natscli", Package: "github.com/nats-io/natscli/nats", Version: "v0.5.0"}

// InstallNATSCLI builds the pinned `nats` CLI into dir (cached like the
// servers) and points dir/nats at it, so putting dir on the PATH gives the
// README's commands the pinned version. It returns the versioned binary's path.
func InstallNATSCLI(ctx context.Context, dir string, progress io.Writer) (string, error) {
	bin, err := Install(ctx, dir, NATSCLI, progress)
	if err != nil {
		return "", err
	}
	link := filepath.Join(dir, NATSCLI.Name)
	if target, err := os.Readlink(link); err == nil && target == filepath.Base(bin) {
		return bin, nil
	}
	// Replace the link atomically: another clone may be running `nats` through it.
	tmp := fmt.Sprintf("%s.%d.tmp", link, os.Getpid())
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(bin), tmp); err != nil {
		return "", fmt.Errorf("install nats: link %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("install nats: link %s: %w", link, err)
	}
	fmt.Fprintf(progress, "linked %s -> %s\n", link, filepath.Base(bin))
	return bin, nil
}
