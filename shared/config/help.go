package config

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/strata-kb/strata/shared/testservers"
)

// writeHelp lists every flag of fs on one line with its variable and
// default, so `-h | grep` finds both spellings of a setting.
func writeHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s [flags]\n\n", fs.Name())
	fmt.Fprintln(w, "Every flag can also be set by its STRATA_ variable or as a key of the -config file;")
	fmt.Fprintln(w, "a flag given wins over the variable, which wins over the file, which wins over the default.")
	fmt.Fprintln(w)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == versionFlag {
			return // listed below: it has no variable
		}
		kind, usage := flag.UnquoteUsage(f)
		var b strings.Builder
		b.WriteString("  -" + f.Name)
		if kind != "" {
			b.WriteString(" " + kind)
		}
		b.WriteString(" (" + EnvName(f.Name))
		switch {
		case f.DefValue == "":
		case isString(f):
			fmt.Fprintf(&b, ", default %q", f.DefValue)
		default:
			b.WriteString(", default " + f.DefValue)
		}
		b.WriteString("): " + usage)
		fmt.Fprintln(w, b.String())
	})
	fmt.Fprintln(w)
	fmt.Fprintln(w, "-h or -help prints this help; -version prints the version and the server versions it is tested with.")
}

// isString reports whether f holds a string, whose default is quoted so
// that spaces and "" show.
func isString(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}

// writeVersion prints the service's version and the pinned servers its tests
// run against, which are the versions known to work with it.
func writeVersion(w io.Writer, service string) {
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintf(w, "%s %s\n", service, buildVersion(info, ok))
	var tested []string
	for _, b := range append(append([]testservers.Binary{}, testservers.All...), testservers.NATSCLI) {
		tested = append(tested, b.Name+" "+b.Version)
	}
	fmt.Fprintf(w, "tested with %s\n", strings.Join(tested, ", "))
}

// buildVersion is the main module's version, with the VCS revision when the
// build recorded one, or "devel".
func buildVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "devel"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += " (revision " + rev
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return v
}
