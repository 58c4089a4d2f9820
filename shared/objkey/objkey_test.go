package objkey

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw                   string
		project, branch, path string
		wantErr               string
	}{
		{raw: "acme/docs/guide.md", project: "acme", path: "docs/guide.md"},
		{raw: "acme@preview-42/docs/guide.md", project: "acme", branch: "preview-42", path: "docs/guide.md"},
		{raw: "acme/README", project: "acme", path: "README"},
		{raw: "acme/ünïcode name.md", project: "acme", path: "ünïcode name.md"},
		{raw: "", wantErr: "empty key"},
		{raw: "acme", wantErr: "want <project>/<path>"},
		{raw: "acme/", wantErr: "want <project>/<path>"},
		{raw: "acme/../beta/x.md", wantErr: "relative path segment"},
		{raw: "acme/./x.md", wantErr: "relative path segment"},
		{raw: "acme//x.md", wantErr: "empty path segment"},
		{raw: "acme/a/ /x.md", wantErr: "blank path segment"},
		{raw: "acme/x\x00.md", wantErr: "control"},
		{raw: "acme/x\n.md", wantErr: "control"},
		{raw: "acme/evil\u202egnp.md", wantErr: "bidi"},
		{raw: "acme/a\\b.md", wantErr: "backslash"},
		{raw: "acme/\xff.md", wantErr: "UTF-8"},
		{raw: "../etc/passwd", wantErr: "project"},
		{raw: "ac me/x.md", wantErr: "project"},
		{raw: "acme@main/x.md", wantErr: "not be main"},
		{raw: "acme@/x.md", wantErr: "branch"},
		{raw: "acme/" + strings.Repeat("a", 1100), wantErr: "longer than"},
	}
	for _, tt := range tests {
		k, err := Parse(tt.raw)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.raw, err)
			continue
		}
		if k.Project != tt.project || k.Branch != tt.branch || k.Path != tt.path {
			t.Errorf("Parse(%q) = %+v", tt.raw, k)
		}
	}
}

func TestNameAndFolder(t *testing.T) {
	k, _ := Parse("acme/docs/api/guide.md")
	if k.Name() != "guide.md" || k.Folder() != "docs/api" {
		t.Fatalf("name %q folder %q", k.Name(), k.Folder())
	}
	k, _ = Parse("acme/guide.md")
	if k.Name() != "guide.md" || k.Folder() != "" {
		t.Fatalf("name %q folder %q", k.Name(), k.Folder())
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"acme/docs/guide.md", "acme@b/x", "../x", "a/\u202e", "a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		k, err := Parse(raw)
		if err != nil {
			return
		}
		if k.Project == "" || k.Path == "" || strings.Contains("/"+k.Path+"/", "/../") {
			t.Fatalf("accepted unsafe key %q as %+v", raw, k)
		}
	})
}

func TestMemberPaths(t *testing.T) {
	for _, tt := range []struct{ path, folder, name, container string }{
		{"guide.md", "", "guide.md", "guide.md"},
		{"docs/guide.md", "docs", "guide.md", "docs/guide.md"},
		{"mail/a.eml//notes.txt", "mail/a.eml", "notes.txt", "mail/a.eml"},
		{"b.zip//reports/q3.docx", "b.zip//reports", "q3.docx", "b.zip"},
		{"b.zip//c.zip//x.txt", "b.zip//c.zip", "x.txt", "b.zip"},
	} {
		if f, n := Split(tt.path); f != tt.folder || n != tt.name {
			t.Errorf("Split(%q) = %q, %q, want %q, %q", tt.path, f, n, tt.folder, tt.name)
		}
		c, member := ContainerOf(tt.path)
		if c != tt.container || member != (c != tt.path) {
			t.Errorf("ContainerOf(%q) = %q, %v, want %q", tt.path, c, member, tt.container)
		}
	}
	if got := MemberPath("mail/a.eml", "notes.txt"); got != "mail/a.eml//notes.txt" {
		t.Errorf("MemberPath = %q", got)
	}
}

func TestParseDocument(t *testing.T) {
	k, err := ParseDocument("acme@b1/mail/a.eml//att/notes.txt//x.txt")
	if err != nil || k.Project != "acme" || k.Branch != "b1" || k.Path != "mail/a.eml//att/notes.txt//x.txt" || k.Name() != "x.txt" {
		t.Fatalf("ParseDocument = %+v, %v", k, err)
	}
	if k, err := ParseDocument("acme/docs/guide.md"); err != nil || k.Path != "docs/guide.md" {
		t.Fatalf("ParseDocument of a file = %+v, %v", k, err)
	}
	for _, bad := range []string{"acme//x.md", "acme/a.eml//", "acme/a.eml///x", "acme/a.eml//../x", "acme/a.eml//x/./y", "acme/a.eml// /x", "acme/a.eml//x\u202e", "../a.eml//x"} {
		if _, err := ParseDocument(bad); err == nil || !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseDocument(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}
