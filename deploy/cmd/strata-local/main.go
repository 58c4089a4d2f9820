// Command strata-local runs Strata's local stack: `install` builds the pinned
// servers and the `nats` CLI, `up` starts everything in the background, selects
// a `nats` CLI context for it and prints how to reach it, `down` stops it
// keeping the data and selects the user's previous context again, `status`
// says what runs.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/progress"
	"github.com/strata-kb/strata/shared/testservers"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "strata-local:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 || (len(args) > 1 && args[0] != "test" && args[0] != "flaky") {
		return errors.New("usage: strata-local install|up|down|status|test|flaky [go test flags and packages]")
	}
	root, err := localstack.WorkspaceRoot()
	if err != nil {
		return err
	}
	state := filepath.Join(root, ".strata")
	switch args[0] {
	case "install":
		s, err := newSteps(state, "install", installSteps)
		if err != nil {
			return err
		}
		defer s.Close()
		return install(ctx, s)
	case "test":
		return test(ctx, root, state, args[1:])
	case "flaky":
		return flaky(ctx, root, state, args[1:])
	case "up":
		return up(ctx, root, state)
	case "down":
		if err := localstack.Down(state, 30*time.Second, os.Stdout); err != nil {
			return err
		}
		if err := restoreNATSContext(ctx, state); err != nil {
			return err
		}
		fmt.Println("stopped; data kept in", filepath.Join(state, "data"))
		return nil
	case "status":
		running := localstack.Running(state)
		if len(running) == 0 {
			fmt.Println("not running")
			return nil
		}
		for name, pid := range running {
			fmt.Printf("%-16s pid %d\n", name, pid)
		}
		return nil
	default:
		return fmt.Errorf("unknown command %q: want install, up, down, status, test or flaky", args[0])
	}
}

func up(ctx context.Context, root, state string) error {
	ports, err := localstack.DefaultPorts()
	if err != nil {
		return err
	}
	running := localstack.Running(state)
	if len(running) == 7 {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := localstack.Ready(rctx, ports); err == nil {
			fmt.Println("Strata is already running.")
			if err := buildCLI(ctx, root, state); err != nil {
				return err
			}
			return printEnv(ctx, state)
		}
	}
	if len(running) > 0 {
		fmt.Println("a previous stack is partly running; stopping it first")
		if err := localstack.Down(state, 30*time.Second, os.Stdout); err != nil {
			return err
		}
	}
	var busy []string
	for _, p := range []struct {
		name string
		port int
	}{{"nats", ports.NATS}, {"nats_monitor", ports.NATSMonitor}, {"minio", ports.MinIO}, {"minio_console", ports.MinIOConsole},
		{"weaviate", ports.Weaviate}, {"weaviate_grpc", ports.WeaviateGRPC}, {"weaviate_gossip", ports.WeaviateGossip},
		{"weaviate_data", ports.WeaviateData}, {"raft", ports.Raft}, {"raft_rpc", ports.RaftRPC}, {"ingestor", ports.Ingestor},
		{"embedder", ports.Embedder}, {"indexer", ports.Indexer}, {"queryd", ports.Queryd}} {
		if !testservers.PortFree(p.port) {
			busy = append(busy, fmt.Sprintf("port %d (%s) is in use: free it or set STRATA_PORT_%s", p.port, p.name, strings.ToUpper(p.name)))
		}
	}
	if len(busy) > 0 {
		return errors.New(strings.Join(busy, "\n"))
	}
	start := time.Now()
	s, err := newSteps(state, "up", installSteps+2)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := install(ctx, s); err != nil {
		return err
	}
	if err := buildServices(ctx, s, root, state); err != nil {
		return err
	}
	if err := s.Run("starting the stack", func(st *progress.Step) error {
		_, err := localstack.Up(ctx, localstack.Options{Root: root, StateDir: state, Ports: ports, Detach: true, Progress: st.Raw(), Prebuilt: true})
		if err != nil {
			return fmt.Errorf("%w\nthe servers' and services' logs are in %s", err, filepath.Join(state, "data", "logs"))
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Printf("Strata is up (%s).\n", progress.Duration(time.Since(start)))
	return printEnv(ctx, state)
}

// buildCLI builds the strata command (deploy/cmd/strata) into the state
// folder's bin/, beside the services.
func buildCLI(ctx context.Context, root, state string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(state, "bin", "strata"), "./deploy/cmd/strata")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build the strata command: %w", err)
	}
	return nil
}

// selectNATSContext installs the pinned nats CLI (cached) and selects a
// context for the stack at natsURL, so the README's commands need no --server.
func selectNATSContext(ctx context.Context, natsURL, state string) error {
	dir, err := testservers.CacheDir()
	if err != nil {
		return err
	}
	cli, err := testservers.InstallNATSCLI(ctx, dir, os.Stdout)
	if err != nil {
		return err
	}
	if err := localstack.SelectNATSContext(ctx, cli, natsURL, state); err != nil {
		return err
	}
	localstack.PrintPATHHint(os.Stdout, dir)
	return nil
}

// restoreNATSContext selects again the nats context the user had before
// `up`; without the CLI (never installed) there is nothing to restore.
func restoreNATSContext(ctx context.Context, state string) error {
	dir, err := testservers.CacheDir()
	if err != nil {
		return err
	}
	cli := testservers.NATSCLI.Path(dir)
	if _, err := os.Stat(cli); err != nil {
		return nil
	}
	prev, err := localstack.RestoreNATSContext(ctx, cli, state)
	if err != nil {
		return err
	}
	if prev != "" {
		fmt.Printf("nats context %q selected again\n", prev)
	}
	return nil
}

func printEnv(ctx context.Context, state string) error {
	b, err := os.ReadFile(filepath.Join(state, "local.env"))
	if err != nil {
		return err
	}
	env := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	if err := selectNATSContext(ctx, env["NATS_URL"], state); err != nil {
		return err
	}
	cli := filepath.Join(state, "bin", "strata")
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, cli); err == nil && !strings.HasPrefix(rel, "..") {
			cli = "./" + rel // e.g. ./.strata/bin/strata from the repository root
		}
	}
	fmt.Printf(`
  MCP endpoint:  %s
  API key:       %s   (send as Authorization: Bearer <key>)
                 an %s; strata keys create makes narrower ones
  S3 endpoint:   http://%s   bucket %q
  S3 access key: %s
  S3 secret key: %s
  NATS:          %s   (nats CLI context %q selected: nats consumer report OBJECTS)

These are also in %s (KEY=VALUE lines), which the strata command reads.
Upload a folder: %s ingest ./docs --project acme   (waits until it is searchable)
Search, status:  %s search "how to deploy" --project acme;  %s status   (%s --help for the rest)
Upload a file:   mc cp guide.md local/%s/acme/docs/guide.md   (project "acme")
Stop:            go tool task down   (data is kept)
`, env["STRATA_MCP_URL"], env["STRATA_API_KEY"], localstack.APIKeyMeaning, env["STRATA_S3_ENDPOINT"], env["STRATA_BUCKET"], env["STRATA_S3_ACCESS_KEY"],
		env["STRATA_S3_SECRET_KEY"], env["NATS_URL"], localstack.NATSContext, filepath.Join(state, "local.env"),
		cli, cli, cli, cli, env["STRATA_BUCKET"])
	return nil
}
