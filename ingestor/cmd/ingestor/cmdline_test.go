package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/config/configtest"
)

func TestCommandLine(t *testing.T) {
	configtest.CheckCommandLine(t, func(fs *flag.FlagSet) { new(Config).RegisterFlags(fs) })
}

// TestScratchDirMustExist: a mistyped scratch directory is refused at start,
// not discovered at the first PDF with pictures.
func TestScratchDirMustExist(t *testing.T) {
	for dir, ok := range map[string]bool{"": true, t.TempDir(): true, t.TempDir() + "/missing": false} {
		fs := flag.NewFlagSet("ingestor", flag.ContinueOnError)
		var c Config
		c.RegisterFlags(fs)
		if err := fs.Parse([]string{"-s3-access-key", "a", "-s3-secret-key", "b", "-pdf-scratch-dir", dir}); err != nil {
			t.Fatal(err)
		}
		err := c.Validate()
		if mentions := err != nil && strings.Contains(err.Error(), "pdf-scratch-dir"); mentions == ok {
			t.Errorf("scratch dir %q: Validate() = %v", dir, err)
		}
	}
}
