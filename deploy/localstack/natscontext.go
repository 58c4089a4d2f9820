package localstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NATSContext is the `nats` CLI context `up` saves and selects, so the
// README's `nats` commands reach the local stack without --server.
const NATSContext = "strata-local"

// previousContextFile (in the state directory) remembers which context the
// user had selected before `up`, for `down` to select it again.
const previousContextFile = "nats-context.previous"

// natsConfigDir is where the CLI keeps its contexts and the selection
// ($XDG_CONFIG_HOME/nats, else ~/.config/nats), as jsm.go's natscontext does.
func natsConfigDir() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "nats"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("nats context: no home directory (set XDG_CONFIG_HOME): %w", err)
	}
	return filepath.Join(home, ".config", "nats"), nil
}

// SelectedNATSContext is the CLI's selected context, "" when none is.
func SelectedNATSContext() (string, error) {
	dir, err := natsConfigDir()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "context.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("nats context: read the selection: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// SelectNATSContext saves the context NATSContext for natsURL with the CLI
// cli and selects it, remembering in stateDir the context that was selected
// before (unless that was NATSContext itself, from an earlier `up`).
func SelectNATSContext(ctx context.Context, cli, natsURL, stateDir string) error {
	prev, err := SelectedNATSContext()
	if err != nil {
		return err
	}
	if prev != NATSContext {
		if err := os.WriteFile(filepath.Join(stateDir, previousContextFile), []byte(prev+"\n"), 0o644); err != nil {
			return fmt.Errorf("nats context: remember the selected context: %w", err)
		}
	}
	return runNATS(ctx, cli, "context", "save", NATSContext, "--server", natsURL,
		"--description", "Strata's local stack (go tool task up)", "--select")
}

// RestoreNATSContext undoes SelectNATSContext's selection: if NATSContext is
// still selected, the context selected before `up` is selected again (none if
// there was none or it was removed since). A selection the user changed since
// `up` is left alone, and so are all contexts' definitions.
func RestoreNATSContext(ctx context.Context, cli, stateDir string) (restored string, err error) {
	remembered := filepath.Join(stateDir, previousContextFile)
	b, err := os.ReadFile(remembered)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil // `up` never selected a context
	}
	if err != nil {
		return "", fmt.Errorf("nats context: %w", err)
	}
	prev := strings.TrimSpace(string(b))
	current, err := SelectedNATSContext()
	if err != nil {
		return "", err
	}
	if current == NATSContext {
		if prev != "" {
			err = runNATS(ctx, cli, "context", "select", prev)
		}
		if prev == "" || err != nil { // none before, or it is gone: select none
			prev = ""
			if err = runNATS(ctx, cli, "context", "unselect"); err != nil {
				return "", err
			}
		}
	} else {
		prev = current
	}
	if err := os.Remove(remembered); err != nil {
		return "", fmt.Errorf("nats context: %w", err)
	}
	return prev, nil
}

func runNATS(ctx context.Context, cli string, args ...string) error {
	cmd := exec.CommandContext(ctx, cli, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("nats %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// PrintPATHHint tells how to put the cached binaries (the `nats` CLI among
// them) on the PATH, unless they already are.
func PrintPATHHint(w io.Writer, binDir string) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.Clean(d) == filepath.Clean(binDir) {
			return
		}
	}
	home, _ := os.UserHomeDir()
	shown := binDir
	if home != "" && strings.HasPrefix(binDir, home+string(filepath.Separator)) {
		shown = "$HOME" + strings.TrimPrefix(binDir, home)
	}
	fmt.Fprintf(w, "The nats CLI (context %q selected) is in %s; put it on the PATH:\n  export PATH=\"%s:$PATH\"\n", NATSContext, binDir, shown)
}
