package extract

import (
	"strings"
	"testing"
)

// TestAddMember: members take unique paths (UniquePath says which first),
// what they hold counts against the builder's budget and their text in
// MembersLen, their members' included; one over the budget adds nothing
// (and spends the builder).
func TestAddMember(t *testing.T) {
	leaf := func(text string) *Document {
		b := NewBuilder("text")
		b.Add(Paragraph, 0, 0, text)
		return b.Doc()
	}
	inner := leaf("inner words")
	inner.Members = []Member{{Path: "deep.txt", Doc: leaf("deepest words")}}
	b := NewBuilder("zip").Within(Limits{MaxFileBytes: 1000})
	b.Add(Heading, 1, 0, "box")
	var got []string
	for _, p := range []string{"notes.txt", "notes.txt", "dir/notes.txt", "notes.txt", "README", "README", "a.b/c"} {
		want := b.UniquePath(p)
		unique, ok := b.AddMember(p, leaf("x"))
		if !ok || unique != want {
			t.Fatalf("AddMember(%q) = %q, %v; UniquePath said %q", p, unique, ok, want)
		}
		got = append(got, unique)
	}
	if s := strings.Join(got, "|"); s != "notes.txt|notes (2).txt|dir/notes.txt|notes (3).txt|README|README (2)|a.b/c" {
		t.Errorf("paths %q", s)
	}
	before, beforeText := b.Held(), b.MembersLen()
	if _, ok := b.AddMember("inner.zip", inner); !ok {
		t.Fatal("a member within the budget was refused")
	}
	if b.Held()-before != HeldWithMembers(inner) || b.MembersLen()-beforeText != len("inner words")+len("deepest words") {
		t.Errorf("held %d more, members' text %d more", b.Held()-before, b.MembersLen()-beforeText)
	}
	held := b.Held()
	// Over the budget, the builder is spent (Err): a container checks first.
	if _, ok := b.AddMember("big.txt", leaf(strings.Repeat("w", 1000))); ok || b.Err() == nil {
		t.Error("a member over the budget was added")
	}
	if doc := b.Doc(); len(doc.Members) != 8 || HeldWithMembers(doc) != held {
		t.Errorf("%d members, holding %d, the builder counted %d", len(doc.Members), HeldWithMembers(doc), held)
	}
}
