package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flags is one command's flag set with its usage text.
type flags struct {
	*flag.FlagSet
	name  string          // "strata ingest"
	usage string          // "DIR --project P [--prefix p]"
	about string          // what the command does, a paragraph
	conn  map[string]bool // connection flags, listed apart in the help
}

func newFlags(name, usage, about string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors become one line; --help is printed by parse
	return &flags{FlagSet: fs, name: name, usage: usage, about: about, conn: map[string]bool{}}
}

// parse parses args with flags and positional arguments in any order
// ("--" ends the flags) and checks the positional count. --help prints the
// command's help to a.stdout and returns errHelp.
func (f *flags) parse(a *app, args []string, minArgs, maxArgs int) ([]string, error) {
	var positional []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printHelp(a.stdout)
				return nil, errHelp
			}
			return nil, flagError(f.name, err)
		}
		rest := f.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" { // "--" ended the flags
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	switch {
	case len(positional) < minArgs:
		return nil, usagef("missing arguments: usage: %s %s", f.name, f.usage)
	case maxArgs >= 0 && len(positional) > maxArgs:
		return nil, usagef("unexpected argument %q: usage: %s %s", positional[maxArgs], f.name, f.usage)
	}
	return positional, nil
}

// flagError rewords the flag package's errors with --names.
func flagError(name string, err error) error {
	msg := err.Error()
	if n, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return usagef("unknown flag --%s (%s --help)", strings.TrimPrefix(n, "-"), name)
	}
	return usageError{strings.ReplaceAll(msg, "flag -", "flag --")}
}

func (f *flags) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n", f.name, f.usage, f.about)
	for _, conn := range []bool{false, true} {
		var list []*flag.Flag
		f.VisitAll(func(fl *flag.Flag) {
			if f.conn[fl.Name] == conn {
				list = append(list, fl)
			}
		})
		if len(list) == 0 {
			continue
		}
		if conn {
			fmt.Fprintln(w, "\nConnection flags (else STRATA_* variables, else the env file; strata --help):")
		} else {
			fmt.Fprintln(w, "\nFlags:")
		}
		printFlags(w, list)
	}
}

func printFlags(w io.Writer, list []*flag.Flag) {
	for _, fl := range list {
		typ, usage := flag.UnquoteUsage(fl)
		head := "  --" + fl.Name
		if typ != "" {
			head += " " + typ
		}
		fmt.Fprintln(w, head)
		line := "        " + usage
		if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" {
			line += fmt.Sprintf(" (default %s)", fl.DefValue)
		}
		fmt.Fprintln(w, line)
	}
}
