package main

import (
	"slices"
	"strings"
	"testing"
)

// TestWeaviateEnvFlag: -weaviate-env takes comma-separated KEY=VALUE pairs
// (a value may itself hold "="), skips empty items and refuses anything else
// with the offending item named.
func TestWeaviateEnvFlag(t *testing.T) {
	c, err := parseConfig([]string{"-weaviate-env", "GOGC=200,,PERSISTENCE_LSM_ACCESS_STRATEGY=pread,X=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"GOGC=200", "PERSISTENCE_LSM_ACCESS_STRATEGY=pread", "X=a=b"}; !slices.Equal(c.WeaviateEnv, want) {
		t.Errorf("WeaviateEnv = %q, want %q", c.WeaviateEnv, want)
	}
	if c, err := parseConfig(nil); err != nil || c.WeaviateEnv != nil {
		t.Errorf("no flag: WeaviateEnv %q, err %v; want none", c.WeaviateEnv, err)
	}
	for _, bad := range []string{"GOGC", "=200", "GOGC=200,oops"} {
		_, err := parseConfig([]string{"-weaviate-env", bad})
		if err == nil || !strings.Contains(err.Error(), "-weaviate-env") {
			t.Errorf("-weaviate-env %q: err %v, want a -weaviate-env error", bad, err)
		}
	}
}

// TestLoadPathFlag: -load-path is commit by default, batch only with -sizes
// (it measures loading alone), and nothing else.
func TestLoadPathFlag(t *testing.T) {
	if c, err := parseConfig(nil); err != nil || c.LoadPath != loadCommit {
		t.Errorf("default: LoadPath %q, err %v; want %q", c.LoadPath, err, loadCommit)
	}
	if c, err := parseConfig([]string{"-load-path", "batch", "-sizes", "1000,2000"}); err != nil || c.LoadPath != loadBatch {
		t.Errorf("batch with -sizes: LoadPath %q, err %v", c.LoadPath, err)
	}
	for _, bad := range [][]string{{"-load-path", "batch"}, {"-load-path", "raw", "-sizes", "1000"}} {
		if _, err := parseConfig(bad); err == nil || !strings.Contains(err.Error(), "-load-path") {
			t.Errorf("%q: err %v, want a -load-path error", bad, err)
		}
	}
}

// TestAccessFlags: -access is off by default, takes -access-every (10 by
// default, at least 2) and -access-checks, refuses -sizes, and the
// -access-* flags without -access are refused by name.
func TestAccessFlags(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil || c.Access {
		t.Fatalf("default: Access %v, err %v; want off", c.Access, err)
	}
	c, err = parseConfig([]string{"-access", "-chunks", "10000"})
	if err != nil || !c.Access || c.AccessEvery != 10 || c.AccessChecks != 100 {
		t.Errorf("-access: %+v, err %v; want on, every 10, 100 checks", c, err)
	}
	if c, err := parseConfig([]string{"-access", "-access-every", "4", "-access-checks", "0", "-access-flat-cutoff", "5000"}); err != nil ||
		c.AccessEvery != 4 || c.AccessChecks != 0 || c.AccessFlatCutoff != 5000 {
		t.Errorf("-access-every 4 -access-checks 0 -access-flat-cutoff 5000: every %d checks %d cutoff %d, err %v", c.AccessEvery, c.AccessChecks, c.AccessFlatCutoff, err)
	}
	if c.AccessFlatCutoff != 0 {
		t.Errorf("-access: flat cutoff experiment %d, want none by default", c.AccessFlatCutoff)
	}
	for _, bad := range [][]string{
		{"-access", "-access-every", "1"},
		{"-access", "-access-every", "0"},
		{"-access", "-access-checks", "-1"},
		{"-access", "-access-flat-cutoff", "-1"},
		{"-access", "-sizes", "1000,2000"},
	} {
		if _, err := parseConfig(bad); err == nil || !strings.Contains(err.Error(), "-access") {
			t.Errorf("%q: err %v, want an -access error", bad, err)
		}
	}
	for _, stray := range [][]string{{"-access-every", "10"}, {"-access-checks", "5"}, {"-access-flat-cutoff", "5000"}} {
		_, err := parseConfig(stray)
		if err == nil || !strings.Contains(err.Error(), stray[0]) || !strings.Contains(err.Error(), "only apply with -access") {
			t.Errorf("%q without -access: err %v, want it refused by name", stray, err)
		}
	}
}
