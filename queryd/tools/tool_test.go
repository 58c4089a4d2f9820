package tools

import (
	"embed"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// schemaFS is every schema file, as the tools' files embed them one by one.
//
//go:embed schemas/*.json
var schemaFS embed.FS

// TestEveryToolIsOneFile: each tool of the list is defined in its own file,
// tool_<name>.go, under a name and in a toolset of its own, and every file in
// schemas/ is the input or output schema of exactly one tool, byte for byte.
func TestEveryToolIsOneFile(t *testing.T) {
	names := map[string]bool{}
	for _, d := range all {
		if names[d.Name] {
			t.Errorf("tool %s is listed twice", d.Name)
		}
		names[d.Name] = true
		if !slices.Contains(AllToolsets, d.Toolset) {
			t.Errorf("tool %s: toolset %q is none of %v", d.Name, d.Toolset, AllToolsets)
		}
		if d.Description == "" || d.Input == "" || d.handle == nil {
			t.Errorf("tool %s has no description, input schema or handler", d.Name)
		}
		if _, err := os.Stat("tool_" + d.Name + ".go"); err != nil {
			t.Errorf("tool %s is not defined in its own file: %v", d.Name, err)
		}
	}
	files, err := fs.Glob(schemaFS, "schemas/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		raw, err := schemaFS.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimPrefix(f, "schemas/")
		tool, kind, _ := strings.Cut(base, ".")
		found := 0
		for _, d := range all {
			schema := d.Input
			if kind == "output.json" {
				schema = d.Output
			}
			if d.Name == tool && schema == string(raw) {
				found++
			}
		}
		if found != 1 {
			t.Errorf("%s is the %s schema of %d tools, want exactly 1", f, strings.TrimSuffix(kind, ".json"), found)
		}
	}
}
