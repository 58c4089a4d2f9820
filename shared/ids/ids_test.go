package ids

import "testing"

func TestDeterministicAndDistinct(t *testing.T) {
	a := File("acme", "", "docs/guide.md")
	if a != File("acme", "", "docs/guide.md") {
		t.Fatal("File is not deterministic")
	}
	distinct := map[string]string{
		"file":         a,
		"other-path":   File("acme", "", "docs/guide2.md"),
		"other-proj":   File("beta", "", "docs/guide.md"),
		"branch":       File("acme", "preview", "docs/guide.md"),
		"folder":       Folder("acme", "", "docs/guide.md"),
		"joined-parts": File("acme", "pre", "viewdocs/guide.md"),
	}
	seen := map[string]string{}
	for name, id := range distinct {
		if !Valid(id) {
			t.Errorf("%s: %q is not a canonical UUID", name, id)
		}
		if prev, ok := seen[id]; ok {
			t.Errorf("%s and %s share ID %s", name, prev, id)
		}
		seen[id] = name
	}
	v := FileVersion(a, "etag1", "sum")
	if Chunk(v, 0) == Chunk(v, 1) || Chunk(v, 0) != Chunk(v, 0) {
		t.Fatal("chunk IDs must be deterministic and distinct per index")
	}
	if Section(v, 0) == Chunk(v, 0) {
		t.Fatal("section and chunk IDs collide")
	}
}

func TestValid(t *testing.T) {
	for in, want := range map[string]bool{
		"6f2d3a4e-8c1b-5e7f-9a0d-2b4c6e8f0a1c":   true,
		"6F2D3A4E-8C1B-5E7F-9A0D-2B4C6E8F0A1C":   false,
		"{6f2d3a4e-8c1b-5e7f-9a0d-2b4c6e8f0a1c}": false,
		"":                                       false,
		"not-a-uuid":                             false,
	} {
		if got := Valid(in); got != want {
			t.Errorf("Valid(%q) = %v, want %v", in, got, want)
		}
	}
}
