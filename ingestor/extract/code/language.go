package code

import (
	"bytes"
	"path"
	"strings"
)

// byExtension maps a lower-case file extension to a language.
var byExtension = map[string]string{
	".go":         "go",
	".py":         "python",
	".pyw":        "python",
	".pyi":        "python",
	".js":         "javascript",
	".mjs":        "javascript",
	".cjs":        "javascript",
	".jsx":        "javascript",
	".ts":         "typescript",
	".tsx":        "typescript",
	".mts":        "typescript",
	".cts":        "typescript",
	".java":       "java",
	".rs":         "rust",
	".c":          "c",
	".h":          "c",
	".cc":         "cpp",
	".cpp":        "cpp",
	".cxx":        "cpp",
	".c++":        "cpp",
	".hpp":        "cpp",
	".hh":         "cpp",
	".hxx":        "cpp",
	".h++":        "cpp",
	".ipp":        "cpp",
	".sh":         "shell",
	".bash":       "shell",
	".zsh":        "shell",
	".ksh":        "shell",
	".rb":         "ruby",
	".rake":       "ruby",
	".php":        "php",
	".kt":         "kotlin",
	".kts":        "kotlin",
	".swift":      "swift",
	".cs":         "csharp",
	".sql":        "sql",
	".mk":         "make",
	".mak":        "make",
	".dockerfile": "dockerfile",
}

// byName maps well-known file names (lower case) that carry no useful
// extension to a language.
var byName = map[string]string{
	"makefile":      "make",
	"gnumakefile":   "make",
	"dockerfile":    "dockerfile",
	"containerfile": "dockerfile",
	"rakefile":      "ruby",
	"gemfile":       "ruby",
	"guardfile":     "ruby",
	"vagrantfile":   "ruby",
	"podfile":       "ruby",
	".bashrc":       "shell",
	".bash_profile": "shell",
	".bash_logout":  "shell",
	".profile":      "shell",
	".zshrc":        "shell",
	".zprofile":     "shell",
	".kshrc":        "shell",
}

// notCode lists extensions that say the file is data or prose. Their name
// is decisive: a shebang-looking first line does not make them code.
var notCode = map[string]bool{
	".txt": true, ".text": true, ".md": true, ".markdown": true, ".rst": true,
	".csv": true, ".tsv": true, ".json": true, ".jsonl": true, ".ndjson": true,
	".yaml": true, ".yml": true, ".toml": true, ".xml": true, ".html": true,
	".htm": true, ".ini": true, ".log": true, ".svg": true, ".pdf": true,
	".docx": true, ".png": true, ".jpg": true, ".jpeg": true, ".gif": true,
}

// byInterpreter maps the interpreter named by a shebang, without version
// digits, to a language.
var byInterpreter = map[string]string{
	"python":  "python",
	"pypy":    "python",
	"sh":      "shell",
	"bash":    "shell",
	"zsh":     "shell",
	"ksh":     "shell",
	"mksh":    "shell",
	"dash":    "shell",
	"ash":     "shell",
	"node":    "javascript",
	"nodejs":  "javascript",
	"bun":     "javascript",
	"deno":    "typescript",
	"ts-node": "typescript",
	"tsx":     "typescript",
	"ruby":    "ruby",
	"jruby":   "ruby",
	"php":     "php",
	"swift":   "swift",
	"kscript": "kotlin",
	"make":    "make",
}

// Language returns the language of a source file from its name (extension,
// and well-known names like Makefile/Dockerfile) and, when the name says
// nothing, from a shebang line (#!/usr/bin/env python3, #!/bin/bash...).
// "" when it is not recognised as code.
func Language(name string, data []byte) string {
	base := baseName(name)
	lower := strings.ToLower(base)
	if lang, ok := byName[lower]; ok {
		return lang
	}
	// Dockerfile.dev, Dockerfile.prod...
	if strings.HasPrefix(lower, "dockerfile.") || strings.HasPrefix(lower, "containerfile.") {
		return "dockerfile"
	}
	ext := path.Ext(lower)
	if lang, ok := byExtension[ext]; ok {
		return lang
	}
	if notCode[ext] {
		return ""
	}
	return shebangLanguage(data)
}

// baseName is the last element of a slash or backslash separated name, so
// names from any client OS work.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// shebangLanguage reads the interpreter from a "#!" first line.
func shebangLanguage(data []byte) string {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return ""
	}
	first := data[2:]
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	const maxShebang = 256 // the kernel reads no more; longer is not a shebang
	if len(first) > maxShebang {
		first = first[:maxShebang]
	}
	fields := strings.Fields(string(first))
	if len(fields) == 0 {
		return ""
	}
	interp := baseName(fields[0])
	if interp == "env" {
		// #!/usr/bin/env -S python3 -u, #!/usr/bin/env LANG=C bash
		interp = ""
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
				continue
			}
			interp = baseName(f)
			break
		}
	}
	// python3.12 -> python, ruby2.7 -> ruby
	interp = strings.TrimRight(interp, "0123456789.")
	return byInterpreter[interp]
}
