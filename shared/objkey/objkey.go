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
func (k Key) Name() string { _, name := Split(k.Path); return name }

// Folder returns the folder part of the path ("" at the project root; a
// member's is what holds it, Split).
func (k Key) Folder() string { folder, _ := Split(k.Path); return folder }

func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C || r == 0xFEFF
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// MemberSeparator joins a container's path and the path of a file inside
// it (an attachment, an archive's file, a mailbox's message):
// "mail/launch.eml//notes.txt". It is an empty path segment, which no
// object key can have (Parse), so a member's path never collides with an
// uploaded file's. Members of members are joined the same way
// ("share/a.zip//b.zip//c.txt").
const MemberSeparator = "//"

// MemberPath is the path of member inside the file at container.
func MemberPath(container, member string) string { return container + MemberSeparator + member }

// ContainerOf returns the path of the uploaded file p is in: p itself for
// an uploaded file, the outermost container's path for a member (then
// member is true).
func ContainerOf(p string) (container string, member bool) {
	if i := strings.Index(p, MemberSeparator); i >= 0 {
		return p[:i], true
	}
	return p, false
}

// Split returns a document path's folder ("" at the project root) and
// name. A member's folder is what holds it: "mail/a.eml//notes.txt" is
// notes.txt in "mail/a.eml", "b.zip//reports/q3.docx" q3.docx in
// "b.zip//reports".
func Split(p string) (folder, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return strings.TrimSuffix(p[:i], "/"), p[i+1:]
}

// ParseDocument is Parse for a document's key, which may name a member
// (<project>[@<branch>]/<container path>//<member path>): the container's
// part must be a valid object key and each part of the member path a valid
// path, with no empty, relative or blank segment.
func ParseDocument(raw string) (Key, error) {
	head, member, isMember := strings.Cut(raw, MemberSeparator)
	if !isMember {
		return Parse(raw)
	}
	k, err := Parse(head)
	if err != nil {
		return Key{}, err
	}
	// Each member's path is checked as an uploaded file's path would be.
	if _, err := Parse(k.Project + "/" + strings.ReplaceAll(member, MemberSeparator, "/")); err != nil || len(raw) > MaxKeyBytes {
		return Key{}, fmt.Errorf("%w %q: member path: not a valid path", ErrInvalid, truncate(raw))
	}
	k.Raw, k.Path = raw, k.Path+MemberSeparator+member
	return k, nil
}
