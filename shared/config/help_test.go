package config

import (
	"bytes"
	"errors"
	"flag"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/testservers"
)

func TestHelpListsEveryFlag(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		fs, _ := newFlags()
		var stderr, stdout bytes.Buffer
		fs.SetOutput(&stderr)
		err := parse(fs, []string{"-workers", "2", arg}, env{"STRATA_WORKERS": "x"}.lookup, &stdout)
		if !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s: want flag.ErrHelp, got %v", arg, err)
		}
		if stderr.Len() != 0 {
			t.Errorf("%s: help went to stderr too: %q", arg, stderr.String())
		}
		help := stdout.String()
		for _, want := range []string{
			`  -nats-url url (STRATA_NATS_URL, default "nats://default:4222"): NATS url`,
			"  -workers int (STRATA_WORKERS, default 1): workers at once",
			"  -s3-secure (STRATA_S3_SECURE, default false): use TLS",
			"  -timeout duration (STRATA_TIMEOUT, default 1s): per request",
			"  -config file (STRATA_CONFIG): YAML file",
			"-version prints the version",
			"wins over the variable, which wins over the file",
		} {
			if !strings.Contains(help, want) {
				t.Errorf("%s: help lacks %q:\n%s", arg, want, help)
			}
		}
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name != versionFlag && !strings.Contains(help, "  -"+f.Name+" ") {
				t.Errorf("help lacks -%s", f.Name)
			}
		})
		for _, line := range strings.Split(help, "\n") {
			if strings.HasPrefix(line, "  -") && !strings.Contains(line, "(STRATA_") {
				t.Errorf("flag line without its variable: %q", line)
			}
		}
	}
}

func TestBadFlagIsReturnedNotPrinted(t *testing.T) {
	fs, _ := newFlags()
	var stderr, stdout bytes.Buffer
	fs.SetOutput(&stderr)
	err := parse(fs, []string{"-wokers", "2"}, env{}.lookup, &stdout)
	if err == nil || errors.Is(err, flag.ErrHelp) || !strings.Contains(err.Error(), "-wokers") || !strings.Contains(err.Error(), "-h lists the flags") {
		t.Fatalf("got %v", err)
	}
	if stderr.Len()+stdout.Len() != 0 {
		t.Fatalf("printed %q %q; the caller prints the error", stderr.String(), stdout.String())
	}
}

func TestVersion(t *testing.T) {
	fs, _ := newFlags()
	var stdout bytes.Buffer
	// -version answers even when the rest of the configuration is broken.
	err := parse(fs, []string{"-version"}, env{"STRATA_WORKERS": "x", "STRATA_CONFIG": "/nonexistent"}.lookup, &stdout)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("want flag.ErrHelp, got %v", err)
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "svc ") {
		t.Errorf("version does not start with the service name: %q", out)
	}
	for _, b := range append(append([]testservers.Binary{}, testservers.All...), testservers.NATSCLI) {
		if b.Version == "" || !strings.Contains(out, b.Name+" "+b.Version) {
			t.Errorf("version lacks %s %s: %q", b.Name, b.Version, out)
		}
	}
	// STRATA_VERSION is no way to ask for it: a service would exit at once.
	fs, _ = newFlags()
	stdout.Reset()
	if err := parse(fs, nil, env{"STRATA_VERSION": "true"}.lookup, &stdout); err != nil || stdout.Len() != 0 {
		t.Fatalf("STRATA_VERSION: %v, %q", err, stdout.String())
	}
}

func TestBuildVersion(t *testing.T) {
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{nil, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "679e434"}, {Key: "vcs.modified", Value: "true"}}}, "devel (revision 679e434, modified)"},
	} {
		if got := buildVersion(tc.info, tc.info != nil); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
