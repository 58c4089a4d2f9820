package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/config"
)

func TestWebConfigValidate(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" = valid
	}{
		{nil, ""},
		{[]string{"-cors-origins", "http://localhost:6274,https://app.example.com"}, ""},
		{[]string{"-cors-origins", "localhost:6274"}, "cors-origins"},
		{[]string{"-cors-any-origin-with-keys"}, "cors-origins"},
		{[]string{"-oauth-issuer", "https://auth.example.com"}, "required with -oauth-issuer"},
		{[]string{"-oauth-issuer", "https://auth.example.com", "-public-url", "https://kb.example.com/mcp"}, ""},
		{[]string{"-public-url", "/mcp"}, "public-url"},
		{[]string{"-resources-page-size", "0"}, "resources-page-size"},
	} {
		var w webConfig
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		w.RegisterFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		var p config.Problems
		w.validate(&p)
		err := p.Err()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
