package access

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, value string
		metadata    bool
		want        []string
		wantErr     string
	}{
		{name: "tag, spaces", value: "hr finance", want: []string{"finance", "hr"}},
		{name: "tag, duplicates and runs of spaces", value: "  hr   hr finance ", want: []string{"finance", "hr"}},
		{name: "stopwords are groups", value: "a the", want: []string{"a", "the"}},
		{name: "every allowed character", value: "eng-team x.y_z:w@v/u+t=s 0", want: []string{"0", "eng-team", "x.y_z:w@v/u+t=s"}},
		{name: "tag, comma is not a separator", value: "hr,finance", wantErr: `invalid group "hr,finance"`},
		{name: "metadata, commas", value: "hr,finance, legal", metadata: true, want: []string{"finance", "hr", "legal"}},
		{name: "upper case", value: "HR", wantErr: `invalid group "HR"`},
		{name: "empty", value: "   ", wantErr: "names no group"},
		{name: "too long", value: strings.Repeat("a", 65), wantErr: "invalid group"},
		{name: "longest", value: strings.Repeat("a", 64), want: []string{strings.Repeat("a", 64)}},
		{name: "star is no group", value: "*", wantErr: `invalid group "*"`},
		{name: "sentinel is no group", value: "!", wantErr: `invalid group "!"`},
		{name: "non-ASCII", value: "ünï", wantErr: "invalid group"},
		{name: "duplicates count once", value: strings.Repeat("g ", MaxGroups+5) + "h", want: []string{"g", "h"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parse := ParseTag
			if c.metadata {
				parse = ParseMetadata
			}
			got, err := parse(c.value)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("parse(%q) = %v, %v; want error containing %q", c.value, got, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse(%q): %v", c.value, err)
			}
			if c.want != nil && !slices.Equal(got, c.want) {
				t.Fatalf("parse(%q) = %q, want %q", c.value, got, c.want)
			}
		})
	}
	many := make([]string, MaxGroups+1)
	for i := range many {
		many[i] = "g" + strings.Repeat("x", i%60) + string(rune('a'+i%26))
	}
	if _, err := ParseTag(strings.Join(many, " ")); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("%d groups: %v, want refused", len(many), err)
	}
}

// TestGrantMatchesExactly: a grant matches readers only through an exact
// shared name or Everyone; Nobody and empty readers match admins only.
func TestGrantMatchesExactly(t *testing.T) {
	eng := Grant{Groups: []string{"eng-team"}}
	admin := Grant{Admin: true}
	none := Grant{}
	for _, c := range []struct {
		g       Grant
		readers []string
		want    bool
	}{
		{eng, []string{"eng-x", "y-team"}, false},
		{eng, []string{"eng"}, false},
		{eng, []string{"eng-team", "hr"}, true},
		{eng, []string{Everyone}, true},
		{eng, []string{Nobody}, false},
		{eng, nil, false},
		{none, []string{Everyone}, true},
		{none, []string{"hr"}, false},
		{admin, []string{Nobody}, true},
		{admin, nil, true},
	} {
		if got := c.g.Matches(c.readers); got != c.want {
			t.Errorf("%+v.Matches(%q) = %v, want %v", c.g, c.readers, got, c.want)
		}
	}
	if v := admin.FilterValues(); v != nil {
		t.Errorf("admin filter values %q, want none (unfiltered)", v)
	}
	if v := eng.FilterValues(); !slices.Equal(v, []string{Everyone, "eng-team"}) {
		t.Errorf("filter values %q", v)
	}
	if got := Readers(nil, ""); !slices.Equal(got, []string{Everyone}) {
		t.Errorf("Readers without groups = %q", got)
	}
	if got := Readers([]string{"hr"}, "bad value"); !slices.Equal(got, []string{Nobody}) {
		t.Errorf("Readers with an error = %q, want %q (fail closed)", got, Nobody)
	}
}

func TestContextWithoutGrantIsFailClosed(t *testing.T) {
	if g := GrantFrom(context.Background()); g.Admin || len(g.Groups) > 0 {
		t.Fatalf("a context without a grant reads as %+v, want no groups", g)
	}
	if !GrantFrom(System(context.Background())).Admin {
		t.Fatal("System is not an admin grant")
	}
}

// FuzzParse: whatever the value, parsing never panics, and what it accepts
// is a sorted list of distinct valid names that parses to itself again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"hr finance", "hr,finance", "", " ", "eng-team a the", "HR", "ü", strings.Repeat("a ", 70), "x\x00y", "a\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		for _, parse := range []func(string) ([]string, error){ParseTag, ParseMetadata} {
			got, err := parse(value)
			if err != nil {
				if got != nil {
					t.Fatalf("error %v with groups %q", err, got)
				}
				continue
			}
			if len(got) == 0 || len(got) > MaxGroups || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("parse(%q) = %q: not 1-%d sorted distinct names", value, got, MaxGroups)
			}
			for _, g := range got {
				if !ValidGroup(g) {
					t.Fatalf("parse(%q) accepted invalid %q", value, g)
				}
			}
			again, err := ParseTag(strings.Join(got, " "))
			if err != nil || !slices.Equal(again, got) {
				t.Fatalf("round trip of %q: %q, %v", got, again, err)
			}
		}
	})
}
