package extract

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/metadata"
)

func TestParseDate(t *testing.T) {
	cases := []struct {
		in, text string // text "" = not a date
	}{
		{"2024-01-31", "2024-01-31"},
		{"2024-01-31T12:00:00+01:00", "2024-01-31T12:00:00+01:00"},
		{"2024-01-31T12:00:00.5Z", "2024-01-31T12:00:00.5Z"},
		// PDF dates
		{"D:20240131120000+01'00'", "2024-01-31T12:00:00+01:00"},
		{"D:20240131120000+01'00", "2024-01-31T12:00:00+01:00"},
		{"D:20240131120000-05'30'", "2024-01-31T12:00:00-05:30"},
		{"D:20240131120000Z", "2024-01-31T12:00:00Z"},
		{"D:20240131120000Z00'00'", "2024-01-31T12:00:00Z"},
		{"D:20240131120000", "2024-01-31T12:00:00Z"},
		{"D:202401311200", "2024-01-31T12:00:00Z"},
		{"D:20240131", "2024-01-31"},
		{"D:2024", "2024-01-01"},
		{"20240131093000+02'00'", "2024-01-31T09:30:00+02:00"},
		{"D:20240230", ""},
		{"D:20241399", ""},
		{"D:2024013112000", ""},
		{"D:20240131+01'00'", ""}, // a zone without a time
		{"D:20240131120000+25'00'", ""},
		{"D:20240131120000 garbage", ""},
		// poppler's printing of PDF dates, W3CDTF, loose forms
		{"2024-01-31T12:00:00+01", "2024-01-31T12:00:00+01:00"},
		{"2024-01-31T12:00:00Z", "2024-01-31T12:00:00Z"},
		{"2024-13-99T00:00:00Z", ""},
		{"2024-01-31T12:00Z", "2024-01-31T12:00:00Z"},
		{"2024-01-31T12:00+05:30", "2024-01-31T12:00:00+05:30"},
		{"2024-01", "2024-01-01"},
		{"2024-01-31 12:00:00", "2024-01-31T12:00:00Z"},
		{"2024-01-31T12:00:00", "2024-01-31T12:00:00Z"},
		{"2024/01/31", "2024-01-31"},
		{"yesterday", ""},
		{"31/01/2024", ""},
		{"", ""},
		{"0000", ""},
	}
	for _, c := range cases {
		v, ok := ParseDate(c.in)
		if ok != (c.text != "") || ok && (v.Text != c.text || v.Kind != metadata.Date) {
			t.Errorf("ParseDate(%q) = %+v, %v; want %q", c.in, v, ok, c.text)
			continue
		}
		if !ok {
			continue
		}
		// What it writes reads back as the same date (messages carry text).
		if d, ok := metadata.ParseDate(v.Text); !ok || !d.Equal(v.Date) || d.Location() != time.UTC && v.Date.Location() != time.UTC {
			t.Errorf("ParseDate(%q): %q does not read back as %v", c.in, v.Text, v.Date)
		}
	}
}

func TestProps(t *testing.T) {
	p := NewProps("test info")
	p.Text("Title", "  A\x00 \u202e title\n ")
	p.Text("blank", " \t ")
	p.Text("day", "2024-01-31")
	p.Date("created", "2024-01-31T12:00Z")
	p.Date("modified", "soon")
	p.Keywords("keywords", "a, b;; c ,", ",;")
	p.Keywords("none", " , ", ",")
	p.Text("long", strings.Repeat("é", 10000))
	m := p.Metadata()
	if m["title"].Text != "A title" || m["title"].Kind != metadata.String {
		t.Errorf("title %+v", m["title"])
	}
	if m["day"].Kind != metadata.Date || m["created"].Text != "2024-01-31T12:00:00Z" {
		t.Errorf("dates %+v %+v", m["day"], m["created"])
	}
	if strings.Join(m["keywords"].List, "|") != "a|b|c" {
		t.Errorf("keywords %+v", m["keywords"])
	}
	for _, k := range []string{"blank", "modified", "none"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s = %+v", k, m[k])
		}
	}
	if n := len(m["long"].Text); n > MaxPropBytes || n < metadata.MaxValueBytes {
		t.Errorf("long value kept %d bytes, want just over the limit so the merge drops it", n)
	}
	if w := p.Warnings(); len(w) != 1 || !strings.Contains(w[0], `test info modified "soon" is not a date`) {
		t.Errorf("warnings %q", w)
	}
	if _, warnings := metadata.Merge(metadata.Sources{File: m}); len(warnings) != 1 || !strings.Contains(warnings[0], "long") {
		t.Errorf("merge warnings %q, want the long value dropped", warnings)
	}
	if NewProps("x").Metadata() != nil {
		t.Error("no properties, yet metadata")
	}
}

// FuzzParseDate: whatever a file calls a date, ParseDate either refuses it
// or writes a date that reads back as the same instant.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"D:20240131120000+01'00'", "2024-01-31T12:00:00+01", "2024-01", "D:2024", "2024/01/31",
		"D:20240131120000Z00'00'", "2024-01-31 12:00", "D:99991231235959-23'59'", "0001-01-01T00:00:00+14"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseDate(s)
		if !ok {
			return
		}
		d, ok := metadata.ParseDate(v.Text)
		if v.Kind != metadata.Date || !ok || !d.Equal(v.Date) {
			t.Fatalf("ParseDate(%q) = %+v, which reads back as %v, %v", s, v, d, ok)
		}
	})
}

func TestBoundValue(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	items := make([]string, 1000)
	for i := range items {
		items[i] = "item"
	}
	items[0] = long
	v := BoundValue(metadata.Value{Kind: metadata.List, List: items})
	if len(v.List) != metadata.MaxListItems+1 || len(v.List[0]) != MaxPropBytes || items[0] != long {
		t.Fatalf("%d items, first %d bytes; the caller's list changed: %v", len(v.List), len(v.List[0]), items[0] != long)
	}
	s := BoundValue(metadata.Value{Kind: metadata.String, Text: long})
	if len(s.Text) != MaxPropBytes {
		t.Fatalf("%d bytes", len(s.Text))
	}
	// Still over the limits: the merge drops both, with warnings.
	if m, w := metadata.Merge(metadata.Sources{File: metadata.Metadata{"l": v, "s": s}}); len(m) != 0 || len(w) != 2 {
		t.Fatalf("merged %+v, warnings %q", m, w)
	}
}
