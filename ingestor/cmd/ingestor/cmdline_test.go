package main

import (
	"flag"
	"os"
	"path/filepath"
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
		checkFlag(t, "pdf-scratch-dir", dir, ok)
	}
}

// checkFlag validates a configuration with flag set to value: Validate
// must name the flag exactly when the value is not ok.
func checkFlag(t *testing.T, flagName, value string, ok bool) {
	t.Helper()
	fs := flag.NewFlagSet("ingestor", flag.ContinueOnError)
	var c Config
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"-s3-access-key", "a", "-s3-secret-key", "b", "-" + flagName, value}); err != nil {
		t.Fatal(err)
	}
	err := c.Validate()
	if mentions := err != nil && strings.Contains(err.Error(), flagName); mentions == ok {
		t.Errorf("-%s %q: Validate() = %v", flagName, value, err)
	}
}

// TestPictureReaderMustRun: -pdf-picture-reader names an executable file or
// nothing (pdfimages only); a mistyped path is refused at start.
func TestPictureReaderMustRun(t *testing.T) {
	dir := t.TempDir()
	exe, notExe := filepath.Join(dir, "strata-pdf-pictures"), filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notExe, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, ok := range map[string]bool{"": true, exe: true, notExe: false, dir: false, dir + "/missing": false} {
		checkFlag(t, "pdf-picture-reader", path, ok)
	}
}

// TestPictureReaderBesideTheIngestor: the default is strata-pdf-pictures in
// the ingestor's own directory, as the image and task up install it.
func TestPictureReaderBesideTheIngestor(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sibling := filepath.Join(filepath.Dir(exe), pictureReaderName)
	if err := os.WriteFile(sibling, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(sibling)
	if got := defaultPictureReader(); got != sibling {
		t.Errorf("defaultPictureReader() = %q, want %q", got, sibling)
	}
}
