package usercache

import (
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	t.Setenv("STRATA_TEST_CACHE", "/elsewhere")
	if d, err := Dir("STRATA_TEST_CACHE", "bin"); err != nil || d != "/elsewhere" {
		t.Fatalf("with the variable set: %q, %v", d, err)
	}
	t.Setenv("STRATA_TEST_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/cache")
	t.Setenv("HOME", "/home/u")
	d, err := Dir("STRATA_TEST_CACHE", "bin")
	if err != nil || d != filepath.Join("/cache", "strata", "bin") {
		t.Fatalf("without it: %q, %v", d, err)
	}
}
