package engine

import (
	"flag"
	"strings"
	"testing"
)

// TestFlagHelpHasNoBackquotes: the flag package takes a back-quoted word of
// a usage text as the value's name, so "-h" would print a mangled line.
func TestFlagHelpHasNoBackquotes(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var c Config
	c.RegisterFlags(fs)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if strings.Contains(f.Usage, "`") {
			name, _ := flag.UnquoteUsage(f)
			t.Errorf("-%s: usage %q would print the value name %q", f.Name, f.Usage, name)
		}
	})
	if n == 0 {
		t.Fatal("no flags registered")
	}
}
