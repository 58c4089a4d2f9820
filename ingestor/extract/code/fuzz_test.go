package code

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// fuzzNames are the file names the fuzzer's ext byte chooses from: one
// per language, and one without an extension so shebangs are exercised.
var fuzzNames = []string{
	"x.go", "x.py", "x.js", "x.ts", "x.java", "x.rs", "x.c", "x.cpp",
	"x.sh", "x.rb", "x.php", "x.kt", "x.swift", "x.cs", "x.sql",
	"Makefile", "Dockerfile", "script",
}

func FuzzExtract(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "langs", "*"))
	paths = append(paths, filepath.Join("testdata", "sample.go"), filepath.Join("testdata", "sample.py"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		lang := Language(p, data)
		ext := slices.IndexFunc(fuzzNames, func(n string) bool { return Language(n, nil) == lang })
		if ext < 0 {
			ext = len(fuzzNames) - 1 // a shebang script
		}
		f.Add(data, uint8(ext))
	}
	f.Add([]byte("#!/bin/sh\nf() {\n  cat <<EOF\ng() {\nEOF\n}\n"), uint8(len(fuzzNames)-1))
	f.Add([]byte("r#\"\n'\\u{1F600}'\nR\"x(\n)x\"\n@\"\"\"\n$$ $a$\n"), uint8(5))

	lim := extract.DefaultLimits()
	f.Fuzz(func(t *testing.T, data []byte, ext uint8) {
		name := fuzzNames[int(ext)%len(fuzzNames)]
		doc, err := Extractor{}.Extract(context.Background(), data, name, lim)
		if err != nil {
			if !errors.Is(err, extract.ErrCorrupt) && !errors.Is(err, extract.ErrUnsupported) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, data, profile)
	})
}
