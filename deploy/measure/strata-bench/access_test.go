package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCorpusAccess: with accessEvery, file k has readersGroup exactly when
// k%accessEvery == 0 and otherGroup otherwise; without it no file has
// groups and every file is readable.
func TestCorpusAccess(t *testing.T) {
	c := generateCorpus(1, 2000, 20, 1, 10)
	if len(c.Files) != 100 {
		t.Fatalf("%d files, want 100", len(c.Files))
	}
	for k, f := range c.Files {
		want := []string{otherGroup}
		if k%10 == 0 {
			want = []string{readersGroup}
		}
		if !slices.Equal(f.FV.Access.Groups, want) || f.Readable != (k%10 == 0) || f.FV.Access.Error != "" {
			t.Errorf("file %d: groups %q readable %v, want %q", k, f.FV.Access.Groups, f.Readable, want)
		}
	}
	if n := len(c.readable()); n != 10 {
		t.Errorf("%d readable files, want 10", n)
	}
	for k, f := range generateCorpus(1, 200, 20, 1, 0).Files {
		if f.FV.Access.Groups != nil || !f.Readable {
			t.Errorf("no access: file %d has groups %q, readable %v", k, f.FV.Access.Groups, f.Readable)
		}
	}
}

// TestAccessKeys: two distinct keys of at least 16 characters, one
// STRATA_API_KEYS entry each: the admin with every group, the restricted key
// with readersGroup; the restricted filter is readersGroup and Everyone.
func TestAccessKeys(t *testing.T) {
	k, err := newAccessKeys()
	if err != nil {
		t.Fatal(err)
	}
	if len(k.admin) < 16 || len(k.restricted) < 16 || k.admin == k.restricted {
		t.Fatalf("keys %q and %q: want two distinct keys of 16 characters or more", k.admin, k.restricted)
	}
	env := k.env()
	want := "STRATA_API_KEYS=" + k.admin + "=*|*;" + k.restricted + "=*|" + readersGroup
	if len(env) != 1 || env[0] != want {
		t.Errorf("env %q, want [%q]", env, want)
	}
	if !slices.Equal(restrictedReaders, []string{"*", readersGroup}) {
		t.Errorf("restricted readers filter %q", restrictedReaders)
	}
}

// TestHitFiles reads the file of every hit of each answer shape the access
// check sees, and refuses a hit it cannot place.
func TestHitFiles(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"search_keyword", `{"query":"q","results":[{"chunk_id":"c1","document_id":"f1"},{"chunk_id":"c2","document_id":"f2"}]}`, []string{"f1", "f2"}},
		{"hybrid_search", `{"query":"q","results":[{"document_id":"f3","explain":{}}],"watermarks":{"bench":3}}`, []string{"f3"}},
		{"search_files", `{"data":[{"chunk":{"id":"c","file_id":"f4"},"similarity":0.7}]}`, []string{"f4"}},
		{"get_file_chunk", `{"chunk":{"id":"c","file_id":"f5"}}`, []string{"f5"}},
		{"no hits", `{"query":"q","results":[]}`, []string{}},
	} {
		got, err := hitFiles(tc.text)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []string{`{"results":[{"chunk_id":"c"}]}`, `{"status":"ok"}`, `[]`} {
		if got, err := hitFiles(bad); err == nil {
			t.Errorf("%s: %q, want an error", bad, got)
		}
	}
}

// TestAccessGoal: searches meet the goal up to 1.2x the admin's p50, reads
// by id up to 0.1 ms slower; other rows have none.
func TestAccessGoal(t *testing.T) {
	row := func(kind string, a, b float64) accessResult {
		r := accessResult{accessCase: accessCase{name: "x", kind: kind, tool: "t"}}
		r.a.lat = []time.Duration{time.Duration(a * float64(time.Millisecond))}
		r.b.lat = []time.Duration{time.Duration(b * float64(time.Millisecond))}
		return r
	}
	for _, tc := range []struct {
		r    accessResult
		want string
	}{
		{row("keyword", 10, 12), "met"},
		{row("vector", 10, 12.5), "missed"},
		{row("read by id", 1, 1.1), "met"},
		{row("read by id", 1, 1.15), "missed"},
		{row("", 1, 5), "-"},
	} {
		if got := tc.r.goal(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s %v/%v: goal %q, want %s", tc.r.kind, tc.r.a.lat, tc.r.b.lat, got, tc.want)
		}
	}
}
