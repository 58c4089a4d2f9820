// Package config loads a component's configuration from flags and the
// environment. Every flag -some-name can also be set as STRATA_SOME_NAME;
// a flag given on the command line wins over the environment, which wins over
// the default. Errors name the variable to fix.
package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// EnvName is the environment variable that sets flag name.
func EnvName(flagName string) string {
	return "STRATA_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flagName))
}

// Parse parses args into fs, then fills every flag not given on the command
// line from its environment variable.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		env := EnvName(f.Name)
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			}
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
