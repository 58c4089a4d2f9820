package main

import (
	"slices"
	"testing"
)

func TestSplitTestArgs(t *testing.T) {
	for _, c := range []struct {
		args            []string
		flags, patterns []string
	}{
		{nil, nil, []string{"work"}},
		{[]string{"-run", "TestLive"}, []string{"-run", "TestLive"}, []string{"work"}},
		{[]string{"-run", "TestLive", "./deploy/e2e"}, []string{"-run", "TestLive"}, []string{"./deploy/e2e"}},
		{[]string{"-v", "./shared/...", "./queryd/..."}, []string{"-v"}, []string{"./shared/...", "./queryd/..."}},
		{[]string{"-run=X", "./a"}, []string{"-run=X"}, []string{"./a"}},
	} {
		flags, patterns := splitTestArgs(c.args)
		if !slices.Equal(flags, c.flags) || !slices.Equal(patterns, c.patterns) {
			t.Errorf("splitTestArgs(%q) = %q %q, want %q %q", c.args, flags, patterns, c.flags, c.patterns)
		}
	}
}

func TestIsPackageLine(t *testing.T) {
	for line, want := range map[string]bool{
		"github.com/minio/minio/internal/logger": true,
		"net/http":                               true,
		"go: downloading github.com/x/y v1.2.3":  false,
		"building minio v0 from source with go install (several minutes on a cold cache)...": false,
		"# github.com/x/y":            false,
		"./main.go:3:2: undefined: z": false,
	} {
		if got := isPackageLine(line); got != want {
			t.Errorf("isPackageLine(%q) = %v", line, got)
		}
	}
}
