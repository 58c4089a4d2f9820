package localstack

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-kb/strata/shared/testservers"
)

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// natsCLI is the pinned CLI, built into the shared cache if missing.
func natsCLI(t *testing.T) string {
	t.Helper()
	dir, err := testservers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := testservers.InstallNATSCLI(context.Background(), dir, logWriter{t})
	if err != nil {
		t.Fatalf("the nats CLI is needed (built with go install from the module proxy): %v", err)
	}
	return cli
}

// TestNATSContextSelectedAndRestored: `up` selects strata-local pointing at
// the stack and `down` selects the user's context again, whose definition is
// untouched; with none selected before, none is after; a selection the user
// changed since `up` is kept.
func TestNATSContextSelectedAndRestored(t *testing.T) {
	cli := natsCLI(t)
	ctx := context.Background()
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	state := t.TempDir()
	if err := runNATS(ctx, cli, "context", "save", "prod", "--server", "nats://prod.example:4222", "--select"); err != nil {
		t.Fatal(err)
	}
	prodFile := filepath.Join(cfg, "nats", "context", "prod.json")
	prodBefore, err := os.ReadFile(prodFile)
	if err != nil {
		t.Fatal(err)
	}

	for range 2 { // `up` twice must still remember prod, not strata-local
		if err := SelectNATSContext(ctx, cli, "nats://127.0.0.1:14222", state); err != nil {
			t.Fatal(err)
		}
	}
	if sel, _ := SelectedNATSContext(); sel != NATSContext {
		t.Fatalf("selected %q after up", sel)
	}
	var saved struct {
		URL string `json:"url"`
	}
	b, err := os.ReadFile(filepath.Join(cfg, "nats", "context", NATSContext+".json"))
	if err != nil || json.Unmarshal(b, &saved) != nil || saved.URL != "nats://127.0.0.1:14222" {
		t.Fatalf("strata-local context: %v %s", err, b)
	}
	if prev, err := RestoreNATSContext(ctx, cli, state); err != nil || prev != "prod" {
		t.Fatalf("down restored %q: %v", prev, err)
	}
	if sel, _ := SelectedNATSContext(); sel != "prod" {
		t.Fatalf("selected %q after down, want prod", sel)
	}
	if after, _ := os.ReadFile(prodFile); string(after) != string(prodBefore) {
		t.Fatalf("the user's context changed:\n%s\nwas\n%s", after, prodBefore)
	}

	// The user picks another context while the stack runs: down keeps it.
	if err := SelectNATSContext(ctx, cli, "nats://127.0.0.1:14222", state); err != nil {
		t.Fatal(err)
	}
	if err := runNATS(ctx, cli, "context", "save", "staging", "--server", "nats://staging.example:4222", "--select"); err != nil {
		t.Fatal(err)
	}
	if _, err := RestoreNATSContext(ctx, cli, state); err != nil {
		t.Fatal(err)
	}
	if sel, _ := SelectedNATSContext(); sel != "staging" {
		t.Fatalf("down replaced the user's later choice: %q", sel)
	}

	// Nothing selected before up: nothing selected after down.
	if err := runNATS(ctx, cli, "context", "unselect"); err != nil {
		t.Fatal(err)
	}
	if err := SelectNATSContext(ctx, cli, "nats://127.0.0.1:14222", state); err != nil {
		t.Fatal(err)
	}
	if _, err := RestoreNATSContext(ctx, cli, state); err != nil {
		t.Fatal(err)
	}
	if sel, _ := SelectedNATSContext(); sel != "" {
		t.Fatalf("selected %q after down, want none", sel)
	}
	// down without a previous up changes nothing.
	if prev, err := RestoreNATSContext(ctx, cli, state); err != nil || prev != "" {
		t.Fatalf("second down: %q %v", prev, err)
	}
}
