package markdown

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/shared/metadata"
)

// TestFrontMatterTypes: YAML numbers are numbers, lists lists of strings,
// timestamps and date strings dates, nested keys joined with dots, keys
// lower-cased; values that cannot be typed are left out with a warning.
func TestFrontMatterTypes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "frontmatter.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Extractor{}.Extract(context.Background(), data, "policy.md", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	date := func(s string) metadata.Value {
		v, ok := extract.ParseDate(s)
		if !ok {
			t.Fatalf("ParseDate(%q)", s)
		}
		return v
	}
	num := func(f float64) metadata.Value { return metadata.Value{Kind: metadata.Number, Number: f} }
	str := func(s string) metadata.Value { return metadata.Value{Kind: metadata.String, Text: s} }
	list := func(s ...string) metadata.Value { return metadata.Value{Kind: metadata.List, List: s} }
	want := metadata.Metadata{
		"title":           str("Travel Policy 2024"),
		"department":      str("Legal"),
		"version":         num(3),
		"rating":          num(4.5),
		"draft":           str("false"),
		"year":            num(2024),
		"published":       date("2024-03-01"),
		"reviewed":        date("2024-03-15T09:30:00+01:00"),
		"stamp":           date("2024-03-15T09:30:00Z"),
		"tags":            list("contracts", "Travel", "2024"),
		"reviewers":       list("Ann", "Bob"),
		"owner.name":      str("Ann Lee"),
		"owner.team.lead": str("Bob"),
		"authors.0.name":  str("Ann"),
		"authors.1.name":  str("Bob"),
		"mixed.0":         str("a"),
		"mixed.1":         list("b", "c"),
	}
	checkMeta(t, doc.Metadata, want)
	if doc.Title != "Travel Policy 2024" {
		t.Errorf("title %q", doc.Title)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], `"huge"`) {
		t.Errorf("warnings %q, want one about huge", doc.Warnings)
	}
	// Every value survives the trip through a message (JSON) with its type.
	for k, v := range doc.Metadata {
		b, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back metadata.Value
		if err := back.UnmarshalJSON(b); err != nil || !sameValue(back, v) {
			t.Errorf("%s: %+v read back as %+v (%v)", k, v, back, err)
		}
	}
}

func TestFrontMatterTOMLAndClashes(t *testing.T) {
	in := "+++\nTitle = \"T\"\ntitle = \"t\"\ncount = 7\nwhen = 1979-05-27T07:32:00Z\nday = 1979-05-27\n[a]\nb = 1\n+++\nBody.\n"
	doc, err := Extractor{}.Extract(context.Background(), []byte(in), "x.md", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	when, _ := extract.ParseDate("1979-05-27T07:32:00Z")
	day, _ := extract.ParseDate("1979-05-27")
	checkMeta(t, doc.Metadata, metadata.Metadata{
		"title": {Kind: metadata.String, Text: "T"}, // "Title" sorts first
		"count": {Kind: metadata.Number, Number: 7},
		"when":  when,
		"day":   day,
		"a.b":   {Kind: metadata.Number, Number: 1},
	})
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "twice") {
		t.Errorf("warnings %q, want one about the clash", doc.Warnings)
	}
}

// TestFrontMatterHugeValue: a value far over the limit is cut to just over
// it, for the merge to drop with a warning, not carried whole.
func TestFrontMatterHugeValue(t *testing.T) {
	in := "---\nbig: " + strings.Repeat("x", 1<<20) + "\n---\nBody.\n"
	doc, err := Extractor{}.Extract(context.Background(), []byte(in), "x.md", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(doc.Metadata["big"].Text); n != extract.MaxPropBytes {
		t.Fatalf("kept %d bytes", n)
	}
}

func TestFrontMatterKeyLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\n")
	for i := range maxFrontMatterKeys + 10 {
		b.WriteString("k" + strconv.Itoa(i) + ": v\n")
	}
	b.WriteString("---\nBody.\n")
	doc, err := Extractor{}.Extract(context.Background(), []byte(b.String()), "x.md", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Metadata) != maxFrontMatterKeys || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "10 keys more") {
		t.Fatalf("%d keys, warnings %q", len(doc.Metadata), doc.Warnings)
	}
}

func checkMeta(t *testing.T, got, want metadata.Metadata) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("no %s, want %+v", k, w)
			continue
		}
		if !sameValue(g, w) {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %+v", k, g)
		}
	}
}

func sameValue(a, b metadata.Value) bool {
	return a.Kind == b.Kind && a.Text == b.Text && a.Number == b.Number && a.Date.Equal(b.Date) &&
		strings.Join(a.List, "\x00") == strings.Join(b.List, "\x00") && len(a.List) == len(b.List)
}

// FuzzFrontMatter: any front matter gives a document that keeps the
// invariants (extracttest.Check): lower-case keys, well-formed values (a
// date that reads back as itself, finite numbers), at most
// maxFrontMatterKeys of them, warnings on one line.
func FuzzFrontMatter(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "frontmatter.md")); err == nil {
		f.Add(string(data))
	}
	for _, s := range []string{
		"---\na: 1\n---\n", "+++\na = 1\n+++\n", "---\n[1, 2]\n---\n", "---\n? [a]\n: b\n---\n",
		"---\na: &x [1, *x]\n---\n", "---\n1: x\nA: {B: [{c: 1}, [2]]}\n---\n", "---\nt: 2024-02-30\n---\n",
		"+++\nd = 1979-05-27T00:32:00.999999-07:00\nl = 07:32:00\n+++\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		doc, err := Extractor{}.Extract(context.Background(), []byte(text), "fuzz.md", extract.DefaultLimits())
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, []byte(text), profile)
	})
}
