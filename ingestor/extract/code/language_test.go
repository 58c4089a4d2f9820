package code

import "testing"

func TestLanguage(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		// By extension, case-insensitively, with any directory.
		{"main.go", "", "go"},
		{"src/app/Main.java", "", "java"},
		{`C:\work\tool.PY`, "", "python"},
		{"stubs.pyi", "", "python"},
		{"index.js", "", "javascript"},
		{"mod.mjs", "", "javascript"},
		{"conf.cjs", "", "javascript"},
		{"App.jsx", "", "javascript"},
		{"api.ts", "", "typescript"},
		{"View.tsx", "", "typescript"},
		{"lib.rs", "", "rust"},
		{"x.c", "", "c"},
		{"x.h", "", "c"},
		{"x.cc", "", "cpp"},
		{"x.cpp", "", "cpp"},
		{"x.cxx", "", "cpp"},
		{"x.hpp", "", "cpp"},
		{"x.hh", "", "cpp"},
		{"x.hxx", "", "cpp"},
		{"run.sh", "", "shell"},
		{"run.bash", "", "shell"},
		{"app.rb", "", "ruby"},
		{"index.php", "", "php"},
		{"Main.kt", "", "kotlin"},
		{"build.gradle.kts", "", "kotlin"},
		{"View.swift", "", "swift"},
		{"Program.cs", "", "csharp"},
		{"schema.sql", "", "sql"},
		// Well-known names.
		{"Makefile", "", "make"},
		{"sub/GNUmakefile", "", "make"},
		{"Dockerfile", "", "dockerfile"},
		{"Dockerfile.dev", "", "dockerfile"},
		{"Gemfile", "", "ruby"},
		{".bashrc", "", "shell"},
		// The name wins over a shebang.
		{"x.py", "#!/bin/sh\n", "python"},
		// Shebangs when the name says nothing.
		{"tool", "#!/usr/bin/env python3\nprint(1)\n", "python"},
		{"tool", "#!/usr/bin/python3.12 -u\n", "python"},
		{"tool", "#!/bin/bash\n", "shell"},
		{"tool", "#!/bin/sh", "shell"},
		{"tool", "#! /usr/bin/env -S node --harmony\n", "javascript"},
		{"tool", "#!/usr/bin/env LANG=C ruby\n", "ruby"},
		{"tool", "#!/usr/local/bin/php\n", "php"},
		{"tool.cgi", "#!/usr/bin/env bash\n", "shell"},
		{"tool", "#!/usr/bin/env perl\n", ""},
		{"tool", "#!\n", ""},
		{"tool", "#!/usr/bin/env\n", ""},
		// Not code: data and prose formats, unknown files.
		{"data.csv", "", ""},
		{"data.json", "", ""},
		{"conf.yaml", "", ""},
		{"conf.yml", "", ""},
		{"notes.txt", "#!/bin/sh\n", ""},
		{"README.md", "", ""},
		{"README", "hello", ""},
		{"photo.bin", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Language(tt.name, []byte(tt.data)); got != tt.want {
			t.Errorf("Language(%q, %q) = %q, want %q", tt.name, tt.data, got, tt.want)
		}
	}
}

// TestEveryLanguageHasASpec keeps Language and the splitter in step: a
// language Language can return must be extractable.
func TestEveryLanguageHasASpec(t *testing.T) {
	for _, m := range []map[string]string{byExtension, byName, byInterpreter} {
		for k, lang := range m {
			if specs[lang] == nil {
				t.Errorf("%q maps to %q, which has no spec", k, lang)
			}
		}
	}
}
