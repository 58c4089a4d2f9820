// Package config loads a component's configuration from flags, the
// environment and an optional YAML file. Every flag -some-name can also be set
// as STRATA_SOME_NAME or as the key some-name of the -config file (itself also
// STRATA_CONFIG); a flag given on the command line wins over the environment,
// which wins over the file, which wins over the default. Errors name the flag,
// variable or file line to fix.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// The flags Parse adds to every service.
const (
	configFlag  = "config"
	versionFlag = "version"
)

// EnvName is the environment variable that sets flag name.
func EnvName(flagName string) string {
	return "STRATA_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flagName))
}

// Parse adds -config and -version to fs, parses args into it, then fills
// every flag not given on the command line from its environment variable,
// else from the -config file. After -h, -help or -version it has printed what
// was asked to stdout and returns flag.ErrHelp: the caller should exit 0.
func Parse(fs *flag.FlagSet, args []string) error {
	return parse(fs, args, os.LookupEnv, os.Stdout)
}

func parse(fs *flag.FlagSet, args []string, lookupEnv func(string) (string, bool), stdout io.Writer) error {
	path := fs.String(configFlag, "", "YAML `file` of flag-name: value settings; flags and variables win over it")
	version := fs.Bool(versionFlag, false, "print the version and the server versions it is tested with")
	// flag would print the error and the usage itself; the error is returned
	// instead (the caller prints it once) and help goes to stdout, as asked.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = func() { writeHelp(fs.Output(), fs) }
	switch {
	case errors.Is(err, flag.ErrHelp):
		writeHelp(stdout, fs)
		return flag.ErrHelp
	case err != nil:
		return fmt.Errorf("%w (-h lists the flags)", err)
	case *version:
		writeVersion(stdout, fs.Name())
		return flag.ErrHelp
	}

	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	if !given[configFlag] {
		if v, ok := lookupEnv(EnvName(configFlag)); ok {
			*path = v
		}
	}
	var file *fileSettings
	if *path != "" {
		if file, err = readFile(*path, fs); err != nil {
			errs = append(errs, err)
		}
	}
	// Each flag is set once, from the source that wins, so a flag.Value that
	// accumulates is not fed two sources.
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || f.Name == configFlag || f.Name == versionFlag {
			return
		}
		env := EnvName(f.Name)
		if v, ok := lookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			}
			return
		}
		if err := file.apply(fs, f); err != nil {
			errs = append(errs, err)
		}
	})
	return errors.Join(errs...)
}

// Problems collects validation failures, each naming the flag and variable to fix.
type Problems struct{ errs []error }

// Addf records a problem with flag name.
func (p *Problems) Addf(flagName, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("-%s (%s): %s", flagName, EnvName(flagName), fmt.Sprintf(format, args...)))
}

// Err returns all problems as one error, or nil.
func (p *Problems) Err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid configuration:\n  %w", errors.Join(p.errs...))
}
