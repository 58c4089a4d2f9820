package main

import (
	"flag"
	"testing"

	"github.com/strata-kb/strata/shared/config/configtest"
)

func TestCommandLine(t *testing.T) {
	configtest.CheckCommandLine(t, func(fs *flag.FlagSet) { new(Config).RegisterFlags(fs) })
}
