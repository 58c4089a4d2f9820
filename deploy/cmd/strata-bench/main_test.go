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
