// Package objkey maps bucket object keys to Strata's project, branch and path,
// and rejects keys that could escape a project or confuse a reader.
//
// The key convention is "<project>[@<branch>]/<path>": "acme/docs/guide.md" is
// docs/guide.md on acme's main branch, "acme@preview-42/docs/guide.md" the same
// path on branch preview-42.
package objkey

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyBytes is S3's own limit on object key length.
const MaxKeyBytes = 1024

// Project and branch names must be valid Weaviate tenant names (one tenant per project).
var (
	projectRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)
	branchRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
)

// ErrInvalid is wrapped by every rejection, so callers can treat it as permanent.
var ErrInvalid = errors.New("invalid object key")

// Key is a parsed object key.
type Key struct {
	Raw     string // the object key as stored in the bucket
	Project string
	Branch  string // "" for main
	Path    string // project-relative path, never empty
}

// Parse validates an object key and splits it into project, branch and path.
func Parse(raw string) (Key, error) {
	fail := func(format string, args ...any) (Key, error) {
		return Key{}, fmt.Errorf("%w %q: %s", ErrInvalid, truncate(raw), fmt.Sprintf(format, args...))
	}
	if raw == "" {
		return fail("empty key")
	}
	if len(raw) > MaxKeyBytes {
		return fail("longer than %d bytes", MaxKeyBytes)
	}
	if !utf8.ValidString(raw) {
		return fail("not valid UTF-8")
	}
	for _, r := range raw {
		if unicode.IsControl(r) || isBidiControl(r) || r == '\\' || r == utf8.RuneError {
			return fail("contains control, bidi or backslash character %U", r)
		}
	}
	head, path, ok := strings.Cut(raw, "/")
	if !ok || path == "" {
		return fail("want <project>/<path>")
	}
	for _, seg := range strings.Split(path, "/") {
		switch seg {
		case "":
			return fail("empty path segment")
		case ".", "..":
			return fail("relative path segment %q", seg)
		}
		if strings.TrimSpace(seg) == "" {
			return fail("blank path segment")
		}
	}
	project, branch, hasBranch := strings.Cut(head, "@")
	if !projectRE.MatchString(project) {
		return fail("project %q must match %s", project, projectRE)
	}
	if hasBranch {
		if !branchRE.MatchString(branch) || branch == "main" {
			return fail("branch %q must match %s and not be main", branch, branchRE)
		}
	}
	return Key{Raw: raw, Project: project, Branch: branch, Path: path}, nil
}

// ValidProject reports whether name is a valid project name.
func ValidProject(name string) bool { return projectRE.MatchString(name) }

// Name returns the last path segment, the file's display name.
func (k Key) Name() string { return k.Path[strings.LastIndexByte(k.Path, '/')+1:] }

// Folder returns the folder part of the path ("" at the project root).
func (k Key) Folder() string {
	if i := strings.LastIndexByte(k.Path, '/'); i >= 0 {
		return k.Path[:i]
	}
	return ""
}

func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C || r == 0xFEFF
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
