package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/progress"
	"github.com/strata-kb/strata/deploy/syspkg"
	"github.com/strata-kb/strata/shared/testservers"
)

// installSteps is how many steps installSteps runs.
const installSteps = 5

// newSteps starts a command's steps, logging to .strata/logs/<name>.log.
func newSteps(state, name string, total int) (*progress.Steps, error) {
	return progress.NewSteps(os.Stdout, progress.IsTerminal(os.Stdout), filepath.Join(state, "logs", name+".log"), total)
}

// install builds what is missing, one step each: the three servers and the
// nats CLI (cached per user), then the embedding model and poppler-utils.
func install(ctx context.Context, s *progress.Steps) error {
	dir, err := testservers.CacheDir()
	if err != nil {
		return err
	}
	for _, b := range append(testservers.All[:len(testservers.All):len(testservers.All)], testservers.NATSCLI) {
		err := s.Run(fmt.Sprintf("%s %s", b.Name, b.Version), func(st *progress.Step) error {
			if b.Installed(dir) {
				st.Cached("cached in " + dir)
				return nil
			}
			st.Say("downloading its modules")
			n, err := b.Packages(ctx)
			if err != nil {
				return err
			}
			st.Say("")
			st.Expect(n, "packages built (fewer when Go's build cache has some)", isPackageLine)
			if b == testservers.NATSCLI {
				_, err = testservers.InstallNATSCLI(ctx, dir, st.Raw())
			} else {
				_, err = testservers.Install(ctx, dir, b, st.Raw())
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	if b := testservers.NATSCLI; b.Installed(dir) { // keep dir/nats pointing at the pinned version
		if _, err := testservers.InstallNATSCLI(ctx, dir, nopWriter{}); err != nil {
			return err
		}
	}
	return s.Run("local embedding model (USE-Lite), poppler-utils and tesseract-ocr", func(st *progress.Step) error {
		model, err := localstack.InstallModel(ctx, st.Raw())
		if err != nil {
			return err
		}
		for _, r := range []syspkg.Requirement{syspkg.Poppler, syspkg.Tesseract} {
			if err := syspkg.Ensure(ctx, r, st.Raw()); err != nil {
				return err
			}
		}
		st.Done("model in " + model + ", pdftotext and tesseract found")
		return nil
	})
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// isPackageLine: `go install -v` and `go build -v` print each package they
// compile as its import path alone on a line; messages have spaces.
func isPackageLine(line string) bool {
	return line != "" && !strings.ContainsAny(line, " \t:")
}

// buildServices is up's step that builds the services and the strata
// command, counting packages against `go list -deps` of them.
func buildServices(ctx context.Context, s *progress.Steps, root, state string) error {
	return s.Run("Strata services and the strata command", func(st *progress.Step) error {
		list := exec.CommandContext(ctx, "go", append([]string{"list", "-deps"}, localstack.ServicePackages()...)...)
		list.Dir = root
		out, err := list.Output()
		if err != nil {
			return fmt.Errorf("go list the services' packages: %w", err)
		}
		st.Expect(strings.Count(string(out), "\n"), "packages built (fewer when Go's build cache has the rest)", isPackageLine)
		return localstack.BuildServices(ctx, root, filepath.Join(state, "bin"), st.Raw())
	})
}

// test is `go tool task test`: install, vet, each module alone, then every
// test of the workspace; goTestArgs add go test flags and may name packages.
func test(ctx context.Context, root, state string, goTestArgs []string) error {
	s, err := newSteps(state, "test", installSteps+3)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := install(ctx, s); err != nil {
		return err
	}
	if err := s.Run("go vet work", func(st *progress.Step) error {
		return runLogged(ctx, st, root, nil, "go", "vet", "work")
	}); err != nil {
		return err
	}
	modules := []string{"shared", "ingestor", "embedder", "indexer", "queryd", "deploy"}
	if err := s.Run("each module builds alone (GOWORK=off), as an image build would", func(st *progress.Step) error {
		st.Expect(len(modules), "modules", nil)
		for _, m := range modules {
			fmt.Fprintf(st.Raw(), "cd %s && GOWORK=off go build ./...\n", m)
			if err := runLogged(ctx, st, filepath.Join(root, m), []string{"GOWORK=off"}, "go", "build", "./..."); err != nil {
				return fmt.Errorf("module %s alone: %w", m, err)
			}
			st.Add(1)
		}
		return nil
	}); err != nil {
		return err
	}
	flags, patterns := splitTestArgs(goTestArgs)
	// The end-to-end package runs 34-38 minutes on 2 cores beside the rest
	// of the suite: 60 leaves a slow machine room within CI's 90.
	flags = append([]string{"-count=1", "-timeout", "60m"}, flags...) // a flag given later wins
	cache, err := testservers.CacheDir()
	if err != nil {
		return err
	}
	times := "" // a filtered run's durations would mislead the next full run's estimate
	if len(goTestArgs) == 0 {
		times = filepath.Join(filepath.Dir(cache), "test-times.json")
	}
	return s.Run("go test "+strings.Join(patterns, " "), func(st *progress.Step) error {
		return progress.GoTest{Dir: root, Flags: flags, Patterns: patterns, TimesPath: times}.Run(ctx, st)
	})
}

// splitTestArgs separates `go test` flags from package patterns (the
// arguments after the flags that do not start with a dash).
func splitTestArgs(args []string) (flags, patterns []string) {
	i := len(args)
	for i > 0 && !strings.HasPrefix(args[i-1], "-") && (i < 2 || !takesValue(args[i-2])) {
		i--
	}
	flags, patterns = args[:i], args[i:]
	if len(patterns) == 0 {
		patterns = []string{"work"}
	}
	return flags, patterns
}

// takesValue: go test flags written as "-flag value".
func takesValue(flag string) bool {
	if strings.Contains(flag, "=") {
		return false
	}
	switch strings.TrimLeft(flag, "-") {
	case "run", "skip", "timeout", "count", "p", "parallel", "bench", "benchtime", "cpu", "tags", "fuzz", "fuzztime", "coverprofile", "cpuprofile", "memprofile", "o", "shuffle":
		return true
	}
	return false
}

// runLogged runs a command with its output in the step's log.
func runLogged(ctx context.Context, st *progress.Step, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = st.Raw(), st.Raw()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// flaky is `go tool task flaky`: the end-to-end tests (or the packages
// named) run -count times (5 unless given), then each test's passes and
// failures, so a flake is found before CI finds it.
func flaky(ctx context.Context, root, state string, goTestArgs []string) error {
	s, err := newSteps(state, "flaky", installSteps+1)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := install(ctx, s); err != nil {
		return err
	}
	flags, patterns := splitTestArgs(goTestArgs)
	if !slices.Contains(goTestArgs, "work") && slices.Equal(patterns, []string{"work"}) { // none named
		patterns = []string{"./deploy/e2e"}
	}
	flags = append([]string{"-count=5", "-timeout", "4h"}, flags...) // a flag given later wins
	var tally strings.Builder
	err = s.Run("go test "+strings.Join(append(flags, patterns...), " "), func(st *progress.Step) error {
		return progress.GoTest{Dir: root, Flags: flags, Patterns: patterns, Tally: &tally}.Run(ctx, st)
	})
	fmt.Print(tally.String())
	return err
}
