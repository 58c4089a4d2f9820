// Command strata is Strata's command line for users and operators of a
// running stack:
//
//	strata ingest DIR --project P [--prefix p]   upload a folder and wait until it is searchable
//	strata search QUERY [--project P] [--top-k N] hybrid search through queryd's MCP endpoint
//	strata status                                  what the index holds, per project
//	strata release create|list                     pin and list releases (NATS requests)
//	strata reindex --project P                     re-list the bucket and re-emit work
//	strata deadletters list|show|redrive           inspect and re-drive dead letters
//	strata keys create|list|revoke                 API keys for queryd, shared through NATS KV
//
// Connection settings come from .strata/local.env (written by `go tool task
// up`), overridden by STRATA_* environment variables and by flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], newApp())
	stop()
	os.Exit(code)
}

// app is what a command reads and writes besides its arguments, so tests
// can run commands in process.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	getwd          func() (string, error)
	executable     func() (string, error)
	tty            bool // stdout is a terminal: progress lines redraw in place
	now            func() time.Time
}

func newApp() *app {
	tty := false
	if fi, err := os.Stdout.Stat(); err == nil {
		tty = fi.Mode()&os.ModeCharDevice != 0
	}
	return &app{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, getwd: os.Getwd,
		executable: os.Executable, tty: tty, now: time.Now}
}

// command is one subcommand; a group (release, deadletters) has subs instead of run.
type command struct {
	summary string
	run     func(ctx context.Context, a *app, name string, args []string) error
	subs    map[string]*command
}

func commands() map[string]*command {
	return map[string]*command{
		"ingest": {summary: "upload every file under a folder, then wait until all are searchable", run: runIngest},
		"search": {summary: "hybrid (keyword + vector) search of the index", run: runSearch},
		"status": {summary: "documents, chunks, embeddings and failures per project", run: runStatus},
		"release": {summary: "pin a project's current state under a version, or list its releases", subs: map[string]*command{
			"create": {summary: "pin the current state of a project (or branch) as a release", run: runReleaseCreate},
			"list":   {summary: "list a project's releases", run: runReleaseList},
		}},
		"reindex": {summary: "re-list a project's objects and re-emit work for them", run: runReindex},
		"deadletters": {summary: "list, show and re-drive dead-lettered messages", subs: map[string]*command{
			"list":    {summary: "list dead letters with their sequence, stage and error", run: runDeadLettersList},
			"show":    {summary: "show one dead letter: headers and body", run: runDeadLettersShow},
			"redrive": {summary: "publish dead letters again to their original subject", run: runDeadLettersRedrive},
		}},
		"keys": {summary: "create, list and revoke queryd's API keys (kept hashed in NATS KV)", subs: map[string]*command{
			"create": {summary: "make a key for projects and groups; prints it once", run: runKeysCreate},
			"list":   {summary: "list keys: names, projects, groups, creation times (never a key)", run: runKeysList},
			"revoke": {summary: "withdraw a key by name: refused within a second", run: runKeysRevoke},
		}},
	}
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the command failed (or some files failed)
	exitUsage = 2 // bad arguments
)

// errHelp: --help was asked and printed.
var errHelp = errors.New("help")

// usageError is a mistake in the arguments.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run dispatches args and returns the exit code; errors are printed as one line.
func run(ctx context.Context, args []string, a *app) int {
	name, err := dispatch(ctx, args, a)
	switch {
	case err == nil || errors.Is(err, errHelp):
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintf(a.stderr, "%s: interrupted\n", name)
		return exitError
	}
	fmt.Fprintf(a.stderr, "%s: %s\n", name, oneLine(err.Error()))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func dispatch(ctx context.Context, args []string, a *app) (string, error) {
	cmds := commands()
	name := "strata"
	if len(args) == 0 {
		return name, usagef("missing command: want %s (strata --help)", strings.Join(names(cmds), ", "))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" { // strata help ingest == strata ingest --help
			return dispatch(ctx, append(args[1:], "--help"), a)
		}
		printGroupHelp(a.stdout, name, "Strata's command line for a running stack.", cmds)
		return name, errHelp
	}
	for {
		c, ok := cmds[args[0]]
		if !ok {
			return name, usagef("unknown command %q: want %s (%s --help)", args[0], strings.Join(names(cmds), ", "), name)
		}
		name += " " + args[0]
		args = args[1:]
		if c.subs == nil {
			return name, c.run(ctx, a, name, args)
		}
		cmds = c.subs
		if len(args) == 0 {
			return name, usagef("missing command: want %s (%s --help)", strings.Join(names(cmds), ", "), name)
		}
		if isHelpFlag(args[0]) {
			printGroupHelp(a.stdout, name, strings.ToUpper(c.summary[:1])+c.summary[1:]+".", cmds)
			return name, errHelp
		}
	}
}

func isHelpFlag(s string) bool { return s == "-h" || s == "-help" || s == "--help" || s == "help" }

func names(cmds map[string]*command) []string {
	var out []string
	for n := range cmds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func printGroupHelp(w io.Writer, name, about string, cmds map[string]*command) {
	fmt.Fprintf(w, "Usage: %s <command> [arguments] [flags]\n\n%s\n\nCommands:\n", name, about)
	for _, n := range names(cmds) {
		fmt.Fprintf(w, "  %-12s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "\nRun \"%s <command> --help\" for a command's arguments and flags.\n", name)
	if name == "strata" {
		fmt.Fprint(w, "\n"+connectionHelp)
	}
}

// oneLine folds a multi-line error into one line.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}
